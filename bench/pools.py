"""Depth-k pool building: `tcdb.pools.build_pool` in the database beside trectools on the files.

129 synthetic runs × 50 topics × 1,000 documents (6.45 M entries) by default, scores with ties.
trectools: `TrecRun` reads every file, `TrecPoolMaker().make_pool(strategy="topX")` pools them.
tcdb: `tcdb.runs.import_runs` loads the same files once, then `build_pool` (`--tie-order
docid-asc`, trectools' order) computes the pool with one INSERT … SELECT; the two pools are
checked equal.

Goals (issue 5), on PostgreSQL: build ≥ 5× faster than trectools (read + pool); import + build
no slower than trectools.

This machine's speed swings by up to 2× within minutes: each figure is the median of `--repeat`
rounds (trectools and every backend once per round, each backend on a fresh database), with
its range; the ratios are taken within a round.

    python bench/pools.py [--runs 129] [--topics 50] [--depth 1000] [--docs 20000] [--k 100]
                          [--repeat 3] [--backends postgres sqlite]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, peak_rss_mb, temporary_database, timer, write_snapshot_files  # noqa: E402

from tcdb.operations import Database


def speedup(baseline: list[float], seconds: list[float]) -> str:
    """How many times faster than the baseline, round by round (then the median)."""
    return median([b / s for b, s in zip(baseline, seconds, strict=True)])


def make_files(folder: Path, n_runs: int, n_topics: int, depth: int, n_docs: int
               ) -> tuple[Path, Path, list[Path]]:
    """Documents, topics and run files of a synthetic snapshot; scores tie in runs of ~3."""
    from tcdb.collections.runs.trec import write_run

    rng = random.Random(42)
    docs, topics = write_snapshot_files(folder, n_docs, [str(t + 1) for t in range(n_topics)])
    runs = []
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            for rank, d in enumerate(rng.sample(range(n_docs), depth), start=1):
                rows.append((str(t + 1), f"doc{d}", rank, float((depth - rank) // 3)))
        path = folder / f"run{r:03d}.txt"
        write_run(path, rows, f"run{r:03d}")
        runs.append(path)
    return docs, topics, runs


def trectools_pool(runs: list[Path], k: int) -> tuple[float, float, dict[str, set[str]]]:
    """(read seconds, pool seconds, pool) with trectools."""
    from trectools import TrecPoolMaker, TrecRun

    with timer() as read:
        loaded = [TrecRun(str(p)) for p in runs]
    with timer() as pooled:
        pool = TrecPoolMaker().make_pool(loaded, strategy="topX", topX=k).pool
    return read[0], pooled[0], {str(t): set(d) for t, d in pool.items()}


def bench_backend(backend: str, docs: Path, topics: Path, runs: list[Path], k: int,
                  reference: dict[str, set[str]]) -> dict[str, float]:
    """Seconds of the import and of the docid-asc and trec_eval builds on a fresh database."""

    from tcdb.api import pool_build, run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.pools import pool_documents
    times: dict[str, float] = {}
    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        add_collection(Database(), "bench")
        ingest_snapshot(Database(), "bench", "s1", LocalSource(docs, topics, None), with_text=False)
        with timer() as imported:
            run_import("bench", "s1", runs)
        times["import"] = imported[0]
        with timer() as built:
            report = pool_build("bench", "s1", "asc", depth=k, all_runs=True,
                                tie_order="docid-asc")
        times["build"] = built[0]
        assert pool_documents(Database(), "asc") == reference, "pool differs from trectools"
        with timer() as built_te:
            pool_build("bench", "s1", "te", depth=k, all_runs=True)
        times["build_trec_eval"] = built_te[0]
        print(f"  {backend:<9} pool of {report.n_documents:,} documents equals trectools'")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=129)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; figures are medians")
    args = parser.parse_args()
    n_rows = args.runs * args.topics * args.depth
    trectools: list[float] = []
    rounds: dict[str, list[dict[str, float]]] = {b: [] for b in args.backends}
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-pools-") as tmp:
        print(f"{args.runs} runs × {args.topics} topics × {args.depth} documents = "
              f"{n_rows:,} entries; depth-{args.k} pool; {os.cpu_count()} CPUs (shared)")
        with timer() as made:
            docs, topics, runs = make_files(Path(tmp), args.runs, args.topics, args.depth,
                                            args.docs)
        print(f"  files written in {made[0]:.1f}s")
        for _ in range(args.repeat):
            read, pooled, reference = trectools_pool(runs, args.k)
            trectools.append(read + pooled)
            print(f"  trectools: read {read:.2f}s + pool {pooled:.2f}s")
            for backend in args.backends:
                rounds[backend].append(bench_backend(backend, docs, topics, runs, args.k,
                                                     reference))
    print()
    print(f"depth-{args.k} pool over {args.runs} runs ({n_rows:,} entries)"
          + (f"; medians of {args.repeat} rounds (range)" if args.repeat > 1 else ""))
    print(f"  trectools (read + pool)        {median(trectools)}s")
    for backend, times in rounds.items():
        column = {key: [t[key] for t in times] for key in times[0]}
        builds, builds_te = column["build"], column["build_trec_eval"]
        both = [t["import"] + t["build"] for t in times]
        goal = "  goal ≥ 5×" if backend == "postgres" else ""
        print(f"  tcdb build → {backend:<10} docid-asc {median(builds)}s  "
              f"({speedup(trectools, builds)}× faster than trectools){goal}")
        print(f"  tcdb build → {backend:<10} trec_eval {median(builds_te)}s  "
              f"({speedup(trectools, builds_te)}× faster)")
        goal = "  goal ≥ 1×" if backend == "postgres" else ""
        print(f"  tcdb import + build ({backend:<8}) {median(both)}s  (import "
              f"{median(column['import'])}s; {speedup(trectools, both)}× trectools' speed){goal}")
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
