"""Scoring runs in worker processes: a local process pool, or Dask workers through Prefect.

Evaluation is CPU-bound in ir_measures (pytrec_eval), one core per process. A `ScoringJob` is
one worker's share of the runs: the worker opens its own connection, reads the qrels and the
snapshot's document names once, then its runs' entries, and returns the per-topic values; the
parent stores everything in bulk (`tcdb.scoring.evaluate`). The same job runs in local worker
processes (`score_in_processes`, `tcdb.workers`) or as a Prefect task on a Dask cluster
(`flows/evaluate.py`), so both give exactly the serial path's values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tcdb.scoring.compute import RunValues, removed_by, score_runs

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


def worker_count(requested: int | None, n_runs: int) -> int:
    """How many processes to score `n_runs` runs with: `requested`, or the available cores
    once there are enough runs to pay for them (`tcdb.workers.worker_count`)."""
    from tcdb.workers import worker_count as count

    return count(requested, n_runs, worth_it=n_runs >= AUTO_PARALLEL_MIN_RUNS)


def make_jobs(url: str, snapshot_id: int, qrels_set_id: int, residual_of_id: int,
              todo: Mapping[tuple[str, ...], Sequence[int]], sizes: Mapping[int, int],
              n_jobs: int) -> list[ScoringJob]:
    """The runs to score (missing measures → run ids) in about `n_jobs` shares per set of
    missing measures, shared out by their entries (`tcdb.workers.share_out`)."""
    from tcdb.workers import share_out

    return [ScoringJob(url, snapshot_id, qrels_set_id, residual_of_id, names, tuple(share))
            for names, run_ids in todo.items()
            for share in share_out({r: sizes.get(r, 1) for r in run_ids}, n_jobs)]


def score_job(job: ScoringJob) -> list[tuple[int, RunValues]]:
    """Score one job's runs in this process (a pool worker, a Dask worker, or the caller)."""
    from tcdb.queries import qrels_of
    from tcdb.storage.db import get_engine

    with get_engine(job.url).connect() as conn:
        qrels = qrels_of(conn, job.qrels_set_id)
        removed = removed_by(conn, job.residual_of_id, job.snapshot_id)
        return list(score_runs(conn, job.snapshot_id, job.run_ids, job.measures, qrels,
                               removed=removed))


def score_in_processes(jobs: Sequence[ScoringJob]) -> Iterator[list[tuple[int, RunValues]]]:
    """Each job in a process of its own (`tcdb.workers`, started now); results as they finish."""
    from tcdb.workers import run_in_processes

    return (scored for _, scored in run_in_processes(_score, jobs, len(jobs)))


def _score(_shared: None, job: ScoringJob) -> list[tuple[int, RunValues]]:
    return score_job(job)
