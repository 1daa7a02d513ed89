"""Reusability report on PostgreSQL: 134 runs × 50 topics × 1,000 documents, two qrels sets.

Builds a synthetic snapshot (documents, topics, an original qrels set judged on the top 20 of
the "contributing" runs, and an expanded set that also judges the top 100 of every run), imports
the runs, evaluates 3 measures under both qrels sets, then times the full report (τ, τ-b, τ_AP,
per-topic τ, per-run unjudged / new relevant in the top 100) once scores exist.

Goal (issue 6), on PostgreSQL: the report in ≤ 2 s.

    python bench/reusability.py [--runs 134] [--topics 50] [--depth 1000] [--docs 20000]
                                [--backends postgres sqlite] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import peak_rss_mb, temporary_database, timer, write_snapshot_files  # noqa: E402

from tcdb.operations import Database

MEASURES = ["AP", "P@10", "nDCG@10"]
POOL_DEPTH_A = 20
POOL_DEPTH_B = 100


def make_files(folder: Path, n_runs: int, n_topics: int, depth: int, n_docs: int
               ) -> tuple[Path, Path, Path, Path, list[Path]]:
    """Documents, topics, original and expanded qrels, and run files of a synthetic snapshot.

    Relevance is hidden truth: each topic has a set of relevant documents; each run's ranking
    mixes relevant documents in at a run-specific rate, so systems differ in effectiveness.
    Half the runs "contributed": A judges their top 20; B additionally judges every run's top
    100 (the depth the report counts unjudged documents at).
    """
    from tcdb.collections.qrels.formats import write_qrels
    from tcdb.collections.runs.trec import write_run
    from tcdb.collections.sources.records import QrelRecord

    rng = random.Random(6)
    docs, topics = write_snapshot_files(folder, n_docs, [f"q{t}" for t in range(n_topics)])
    relevant = {t: set(rng.sample(range(n_docs), 150)) for t in range(n_topics)}
    runs: list[Path] = []
    top: dict[int, list[list[int]]] = {}
    for r in range(n_runs):
        skill = rng.uniform(0.05, 0.6)
        per_topic = []
        rows = []
        for t in range(n_topics):
            rel = list(relevant[t])
            rng.shuffle(rel)
            chosen: list[int] = []
            seen: set[int] = set()
            while len(chosen) < depth:
                d = rel.pop() if rel and rng.random() < skill else rng.randrange(n_docs)
                if d not in seen:
                    seen.add(d)
                    chosen.append(d)
            per_topic.append(chosen[:POOL_DEPTH_B])
            for rank, d in enumerate(chosen, start=1):
                rows.append((f"q{t}", f"doc{d}", rank, round(1000.0 - rank + rng.random(), 4)))
        top[r] = per_topic
        path = folder / f"run{r:03d}.txt"
        write_run(path, rows, f"run{r:03d}")
        runs.append(path)
    judged_a: dict[int, set[int]] = {t: set() for t in range(n_topics)}
    judged_b: dict[int, set[int]] = {t: set() for t in range(n_topics)}
    for r in range(n_runs):
        for t in range(n_topics):
            if r % 2 == 0:
                judged_a[t].update(top[r][t][:POOL_DEPTH_A])
            judged_b[t].update(top[r][t])
    qrels_a = folder / "qrels-a.txt"
    qrels_b = folder / "qrels-b.txt"
    for path, judged in ((qrels_a, judged_a), (qrels_b, judged_b)):
        write_qrels(path, [QrelRecord(f"q{t}", f"doc{d}", int(d in relevant[t]))
                           for t in range(n_topics) for d in sorted(judged[t] | judged_a[t])])
    return docs, topics, qrels_a, qrels_b, runs


def bench_backend(backend: str, files: tuple[Path, Path, Path, Path, list[Path]],
                  repeat: int) -> dict[str, float]:
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.judging.qrels import import_qrels
    from tcdb.operations import get_operation
    from tcdb.scoring.evaluate import evaluate
    docs, topics, qrels_a, qrels_b, runs = files
    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        add_collection(Database(), "bench")
        with timer() as setup:
            ingest_snapshot(Database(),
                            "bench", "s1", LocalSource(docs, topics, qrels_a), with_text=False)
            import_qrels(Database(), "bench", "s1", "expanded", qrels_b)
            run_import("bench", "s1", runs)
        with timer() as scored:
            evaluate(Database(), "bench", "s1", "original", MEASURES)
            evaluate(Database(), "bench", "s1", "expanded", MEASURES)
        times = []
        report: dict = {}
        for _ in range(repeat):
            with timer() as t:
                report = get_operation("reusability").run(
                    Database(), collection="bench", snapshot="s1", qrels="original", vs="expanded",
                    measures=MEASURES, depth=POOL_DEPTH_B).to_data()
            times.append(t[0])
        ap = report["measures"]["AP"]
        print(f"  {backend:<9} set-up {setup[0]:6.1f}s · evaluate 2 × {len(MEASURES)} measures "
              f"{scored[0]:6.1f}s · AP τ {ap['kendall_tau']:.3f}, τ_AP {ap['tau_ap']:.3f}, "
              f"{ap['n_runs']} runs")
        print(f"  {backend:<9} report (stored scores): "
              + ", ".join(f"{x:.2f}s" for x in times))
        split = report["seconds"]
        print(f"      last run: load (SQL) {split['load']:.2f}s of {split['total']:.2f}s")
    return {"best": min(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=134)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["postgres"])
    args = parser.parse_args()
    n_rows = args.runs * args.topics * args.depth
    print(f"{args.runs} runs × {args.topics} topics × {args.depth} documents = {n_rows:,} "
          f"run entries; measures {', '.join(MEASURES)}; top-{POOL_DEPTH_B} counts; "
          f"{os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-reuse-") as tmp:
        with timer() as made:
            files = make_files(Path(tmp), args.runs, args.topics, args.depth, args.docs)
        print(f"  files written in {made[0]:.1f}s")
        results = {b: bench_backend(b, files, args.repeat) for b in args.backends}
    print()
    for backend, result in results.items():
        goal = "  (goal ≤ 2 s)" if backend == "postgres" else ""
        print(f"full reusability report on {backend}: {result['best']:.2f}s{goal}")
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
