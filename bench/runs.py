"""Run import and evaluation: synthetic runs into PostgreSQL and SQLite, beside the tools alone.

Import: `tcdb.runs.import_runs` (parse, validate, resolve ids, COPY/executemany) beside
`pandas.read_csv` of the same files. Evaluation: `tcdb.scoring.evaluate.evaluate` for 4 measures —
reading the runs from the database, ir_measures (pytrec_eval), writing per-topic scores — beside
`ir_measures.calc_aggregate` on the files.

Goals (issue 4), on PostgreSQL: import ≥ 300,000 rows/s; evaluation ≤ 1.5× ir_measures alone.

    python bench/runs.py [--runs 100] [--topics 50] [--depth 1000] [--docs 20000]
                         [--backends postgres sqlite]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import peak_rss_mb, rate, temporary_database, timer, write_snapshot_files  # noqa: E402

from tcdb.operations import Database

MEASURES = ["nDCG@10", "AP", "P@10", "RR"]


def make_files(folder: Path, n_runs: int, n_topics: int, depth: int, n_docs: int
               ) -> tuple[Path, Path, Path, list[Path]]:
    """Documents, topics, qrels and run files of a synthetic snapshot."""
    from tcdb.collections.qrels.formats import write_qrels
    from tcdb.collections.runs.trec import write_run
    from tcdb.collections.sources.records import QrelRecord

    rng = random.Random(42)
    docs, topics = write_snapshot_files(folder, n_docs, [f"q{t}" for t in range(n_topics)])
    qrels = folder / "qrels.txt"
    write_qrels(qrels, [QrelRecord(f"q{t}", f"doc{d}", rng.choice([0, 0, 1, 2]))
                        for t in range(n_topics) for d in rng.sample(range(n_docs), 200)])
    runs = []
    for r in range(n_runs):
        rows = []
        for t in range(n_topics):
            for rank, d in enumerate(rng.sample(range(n_docs), depth), start=1):
                rows.append((f"q{t}", f"doc{d}", rank, round(1000.0 - rank + rng.random(), 4)))
        path = folder / f"run{r:03d}.txt"
        write_run(path, rows, f"run{r:03d}")
        runs.append(path)
    return docs, topics, qrels, runs


def baseline_import(runs: list[Path]) -> float:
    import pandas as pd

    with timer() as t:
        for path in runs:
            pd.read_csv(path, sep=" ", header=None,
                        names=["topic", "q0", "doc", "rank", "score", "tag"],
                        dtype={"topic": str, "doc": str})
    return t[0]


def baseline_evaluate(qrels: Path, runs: list[Path]) -> float:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    with timer() as t:
        for path in runs:
            ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(str(qrels)),
                                       ir_measures.read_trec_run(str(path)))
    return t[0]


def bench_backend(backend: str, docs: Path, topics: Path, qrels: Path, runs: list[Path],
                  n_rows: int) -> tuple[float, float, float]:
    """(ingest seconds, import seconds, evaluate seconds) on a fresh database."""
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.scoring.evaluate import evaluate
    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        add_collection(Database(), "bench")
        with timer() as ingest:
            ingest_snapshot(Database(),
                            "bench", "s1", LocalSource(docs, topics, qrels), with_text=False)
        with timer() as imported:
            reports = run_import("bench", "s1", runs).runs
        assert sum(r.n_entries for r in reports) == n_rows
        with timer() as evaluated:
            report = evaluate(Database(), "bench", "s1", "original", MEASURES)
        assert report.n_computed == len(runs) * len(MEASURES)
        with timer() as again:
            assert evaluate(Database(), "bench", "s1", "original", MEASURES).n_computed == 0
        print(f"  {backend:<9} ingest {ingest[0]:6.2f}s · second evaluate (cached) "
              f"{again[0]:.3f}s")
    return ingest[0], imported[0], evaluated[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    args = parser.parse_args()
    n_rows = args.runs * args.topics * args.depth
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-runs-") as tmp:
        print(f"{args.runs} runs × {args.topics} topics × {args.depth} documents = "
              f"{n_rows:,} rows; {args.docs:,} documents in the snapshot; "
              f"{os.cpu_count()} CPUs")
        with timer() as made:
            docs, topics, qrels, runs = make_files(Path(tmp), args.runs, args.topics,
                                                   args.depth, args.docs)
        print(f"  files written in {made[0]:.1f}s")
        read_csv = baseline_import(runs)
        irm = baseline_evaluate(qrels, runs)
        results = {b: bench_backend(b, docs, topics, qrels, runs, n_rows) for b in args.backends}
    print()
    print("import (parse + validate + resolve + write)")
    print(f"  pandas.read_csv only      {read_csv:7.2f}s {rate(n_rows, read_csv)}")
    for backend, (_, imported, _) in results.items():
        goal = "  goal ≥ 300,000 rows/s" if backend == "postgres" else ""
        print(f"  tcdb import → {backend:<10} {imported:7.2f}s {rate(n_rows, imported)}  "
              f"({imported / read_csv:.2f}× read_csv){goal}")
    print(f"evaluation of {args.runs} runs × {len(MEASURES)} measures ({', '.join(MEASURES)})")
    print(f"  ir_measures on the files  {irm:7.2f}s")
    for backend, (_, _, evaluated) in results.items():
        goal = "  goal ≤ 1.5×" if backend == "postgres" else ""
        print(f"  tcdb evaluate ({backend:<8}) {evaluated:7.2f}s  ({evaluated / irm:.2f}× "
              f"ir_measures){goal}")
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
