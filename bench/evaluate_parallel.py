"""Evaluation in parallel: tcdb serial, tcdb with worker processes, and on a Dask cluster,
beside ir_measures reading the same TREC files — measured side by side in one run.

TREC-COVID round-1 shape by default: 143 runs × 50 topics × 1,000 documents, 4 measures.
Each tcdb timing is `tcdb.scoring.evaluate.evaluate` on a database holding the runs (reading
entries, scoring, storing per-topic values); the scores are deleted between timings. The Dask
timing plans, scores the shares on a Dask cluster (`dask scheduler` and `dask worker`
processes started beside this one, as on a real cluster) and stores — the path
`flows/evaluate.py` runs as Prefect tasks, without Prefect's own overhead. The cluster is
started before the clock starts, and after the local timings' workers were forked.

Goal (issue 34): tcdb with 2 workers ≤ 0.6× ir_measures' time on two cores, SQLite and PostgreSQL.

    python bench/evaluate_parallel.py [--runs 143] [--topics 50] [--depth 1000] [--docs 50000]
                                      [--workers 2] [--backends sqlite postgres]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import dask_cluster, temporary_database, timer  # noqa: E402
from runs import MEASURES, baseline_evaluate, make_files  # noqa: E402

from tcdb.operations import Database


def load(url: str, docs: Path, topics: Path, qrels: Path, runs: list[Path]) -> None:
    """The snapshot and its runs in the database (not timed)."""
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    db = Database(url)
    add_collection(db, "bench", "doc_id", "query_id")
    ingest_snapshot(db, "bench", "s1", LocalSource(docs, topics, qrels))
    run_import("bench", "s1", runs, database=db)


def forget_scores(url: str) -> None:
    from sqlalchemy import text

    from tcdb.storage.db import get_engine

    with get_engine(url).begin() as conn:
        conn.execute(text("DELETE FROM score"))
        conn.execute(text("DELETE FROM evaluation"))


def time_local(url: str, workers: int) -> tuple[float, int]:
    from tcdb.scoring.evaluate import evaluate

    forget_scores(url)
    with timer() as t:
        report = evaluate(Database(url), "bench", "s1", "original", MEASURES, workers=workers)
    return t[0], report.n_scores


def time_dask(url: str, address: str, n_jobs: int) -> tuple[float, int]:
    from distributed import Client

    from tcdb.scoring.evaluate import plan_evaluation, store_evaluation
    from tcdb.scoring.parallel import score_job

    forget_scores(url)
    db = Database(url)
    with Client(address) as client, timer() as t:
        plan = plan_evaluation(db, "bench", "s1", "original", MEASURES)
        futures = client.map(score_job, plan.jobs(url, n_jobs), pure=False)
        report = store_evaluation(db, plan, client.gather(futures))
    return t[0], report.n_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=143)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    args = parser.parse_args()
    from tcdb.workers import available_cores

    folder = Path(tempfile.mkdtemp(prefix="tcdb-bench-eval-"))
    docs, topics, qrels, runs = make_files(folder, args.runs, args.topics, args.depth, args.docs)
    print(f"{args.runs} runs × {args.topics} topics × {args.depth}, {len(MEASURES)} measures "
          f"({', '.join(MEASURES)}); {available_cores()} cores; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for backend in args.backends:
        with temporary_database(backend) as url:
            load(url, docs, topics, qrels, runs)
            baseline = baseline_evaluate(qrels, runs)
            serial, n = time_local(url, 1)
            parallel, n_parallel = time_local(url, args.workers)
            with dask_cluster(args.workers, "tcdb.scoring.evaluate") as address:
                dask, n_dask = time_dask(url, address, 4 * args.workers)
            baseline_after = baseline_evaluate(qrels, runs)
            assert n == n_parallel == n_dask, (n, n_parallel, n_dask)
            reference = (baseline + baseline_after) / 2
            print(f"\n{backend}: {n:,} per-topic values stored each time")
            print(f"  ir_measures on the files   {reference:7.2f} s   1.00× "
                  f"(before {baseline:.2f} s, after {baseline_after:.2f} s)")
            for name, seconds in [("tcdb serial", serial),
                                  (f"tcdb {args.workers} workers", parallel),
                                  (f"tcdb on Dask ({args.workers} workers)", dask)]:
                print(f"  {name:<26} {seconds:7.2f} s   {seconds / reference:.2f}×")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

if __name__ == "__main__":
    main()
