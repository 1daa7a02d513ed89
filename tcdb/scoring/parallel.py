"""Scoring runs in worker processes: a local process pool, or Dask workers through Prefect.

Evaluation is CPU-bound in ir_measures (pytrec_eval), one core per process. A `ScoringJob` is
one worker's share of the runs: the worker opens its own connection, reads the qrels and the
snapshot's document names once, then its runs' entries, and returns the per-topic values; the
parent stores everything in bulk (`tcdb.scoring.evaluate`). The same job runs in a local pool
(`score_in_processes`) or as a Prefect task on a Dask cluster (`flows/evaluate.py`), so both
give exactly the serial path's values.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

# A run's per-topic values: measure → {external topic id: value}
RunValues = dict[str, dict[str, float]]

# Below this many runs to score, worker processes cost more than they save (each reads the
# snapshot's document names and the qrels before its first run); `workers=N` overrides it.
AUTO_PARALLEL_MIN_RUNS = 8


@dataclass(frozen=True)
class ScoringJob:
    """One worker's share: these runs of one snapshot, scored on one qrels set with these
    measures (after removing what `residual_of_id` judged, when not 0)."""

    url: str
    snapshot_id: int
    qrels_set_id: int
    residual_of_id: int
    measures: tuple[str, ...]
    run_ids: tuple[int, ...]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_count(requested: int | None, n_runs: int) -> int:
    """How many processes to score `n_runs` runs with: `requested` (never more than runs), or,
    when not given, the available cores once there are enough runs to pay for them."""
    if requested is not None:
        return max(1, min(requested, n_runs))
    if n_runs < AUTO_PARALLEL_MIN_RUNS:
        return 1
    return max(1, min(available_cores(), n_runs))


def split_runs(sizes: Mapping[int, int], n_jobs: int) -> list[list[int]]:
    """Runs (id → entries) in `n_jobs` shares of about equal entries: the largest run first
    to the lightest share (longest-processing-time), each share in run order."""
    shares: list[list[int]] = [[] for _ in range(max(1, n_jobs))]
    load = [0] * len(shares)
    for run_id in sorted(sizes, key=lambda r: (-sizes[r], r)):
        lightest = load.index(min(load))
        shares[lightest].append(run_id)
        load[lightest] += sizes[run_id]
    return [sorted(share) for share in shares if share]


def score_job(job: ScoringJob) -> list[tuple[int, RunValues]]:
    """Score one job's runs in this process (a pool worker, a Dask worker, or the caller)."""
    from tcdb.queries import qrels_of, qrels_records
    from tcdb.scoring.evaluate import score_runs
    from tcdb.storage.db import get_engine

    with get_engine(job.url).connect() as conn:
        qrels = qrels_of(conn, job.qrels_set_id)
        removed: dict[str, set[str]] | None = None
        if job.residual_of_id:
            removed = {}
            for record in qrels_records(conn, job.residual_of_id, job.snapshot_id):
                removed.setdefault(record.topic_id, set()).add(record.doc_id)
        return list(score_runs(conn, job.snapshot_id, job.run_ids, job.measures, qrels,
                               removed=removed))


def score_in_processes(jobs: Sequence[ScoringJob]) -> Iterator[list[tuple[int, RunValues]]]:
    """Each job in a process of its own; the results in the order they finish.

    The processes start here, before the caller shows progress or starts any other thread:
    forked where that is safe (Linux, this the only thread: nothing to re-import), else from a
    fork server. Each child forgets the parent's database connections and opens its own.
    """
    from tcdb.ingest.readahead import fork_is_safe

    context = multiprocessing.get_context("fork" if fork_is_safe() else "forkserver")
    pool = ProcessPoolExecutor(max_workers=len(jobs), mp_context=context,
                               initializer=_fresh_engines)
    futures = [pool.submit(score_job, job) for job in jobs]  # forks every worker now

    def results() -> Iterator[list[tuple[int, RunValues]]]:
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            pool.shutdown(cancel_futures=True)

    return results()


def _fresh_engines() -> None:
    """In a new worker: drop the engines (and pooled connections) inherited from the parent."""
    from tcdb.storage.db import forget_inherited_engines

    forget_inherited_engines()
