"""Evaluate what is missing: the (run, measure) scores of complete snapshots not stored yet.

Each (snapshot, qrels set) is one run of the `evaluate` operation (`TASKS["evaluate"]`), which
computes only the missing combinations, so running this every hour costs a few queries when
nothing is new. Without arguments it looks at every
complete snapshot that has runs, under its designated original qrels; `qrels` names another
set and `all_qrels` takes every set (pooled, expanded, derived) — those are scored when asked
for, not every hour (`flows.state.evaluation_targets`).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from tcdb.errors import TcdbError
from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch, retry_transient
from tcdb.flows.dask_runner import reach_scheduler
from tcdb.flows.state import evaluation_targets
from tcdb.operations.database import Database
from tcdb.scoring.compute import RunValues
from tcdb.scoring.parallel import ScoringJob
from tcdb.settings import DaskAddress, get_settings

# Used when neither the caller nor the core names measures.
FALLBACK_MEASURES = ["AP", "nDCG@10", "P@10", "R@1000"]
# Shares of the runs on a Dask cluster: each share reads the snapshot's document names and the
# qrels once, so a few more shares than workers balance the load without re-reading much.
DASK_JOBS = 8


def default_measures() -> list[str]:
    """The core's default measures when it declares them, else a common trec_eval set."""
    from tcdb.scoring import evaluate as evaluation

    return list(getattr(evaluation, "DEFAULT_MEASURES", FALLBACK_MEASURES))


def evaluate_one(collection: str, snapshot: str, qrels: str, measures: list[str],
                 runs: list[str] | None = None) -> dict[str, Any]:
    """Score the missing (run, measure) combinations of one snapshot under one qrels set
    (`TASKS["evaluate"]`); what was computed and reused, as the flow's row."""
    from tcdb.flows.tasks import TASKS
    from tcdb.scoring.evaluation import EvaluateRequest, EvaluateResult

    request = EvaluateRequest.of(collection=collection, snapshot=snapshot, qrels=qrels,
                                 measures=measures, runs=runs)
    result: EvaluateResult = TASKS["evaluate"](request)  # type: ignore[assignment]
    return result.report.model_dump()


def evaluate_on_dask(db: Database, collection: str, snapshot: str, qrels: str, measures: list[str],
                     runs: list[str] | None = None, *, dask: str = "local",
                     jobs: int = DASK_JOBS) -> dict[str, Any]:
    """The same as `evaluate_one`, scored on a Dask cluster: the core plans what is missing
    (`plan_evaluation`), Dask workers score about `jobs` shares of the runs as Prefect tasks
    (prefect-dask's `DaskTaskRunner`), and the core stores the values (`store_evaluation`).

    `dask` is a scheduler's address (`tcp://host:8786`), or `local` for a local cluster of
    worker processes, one per core.
    """
    from tcdb.flows.dask_runner import on_dask
    from tcdb.scoring.evaluate import plan_evaluation, store_evaluation

    plan = plan_evaluation(db, collection, snapshot, qrels, measures, runs)
    if not plan.todo:
        return plan.report.model_dump()
    scored = on_dask(score_runs_task, plan.jobs(db.url, jobs), dask)
    return store_evaluation(db, plan, scored).model_dump()


@task(name="score-runs", retries=2, retry_delay_seconds=5, retry_condition_fn=retry_transient,
      cache_policy=NO_CACHE)
def score_runs_task(job: ScoringJob) -> list[tuple[int, RunValues]]:
    """One share of the runs scored on a worker (`tcdb.scoring.parallel.score_job`)."""
    from tcdb.scoring.parallel import score_job

    return score_job(job)



@flow(name="evaluate", log_prints=True)
def evaluate(
    collection: str | None = None,
    snapshot: str | None = None,
    qrels: str | None = None,
    measures: list[str] | None = None,
    runs: list[str] | None = None,
    all_qrels: bool = False,
    dask: DaskAddress | None = None,
) -> dict[str, Any]:
    """Compute the missing scores (all complete snapshots, or the ones named); on a Dask
    cluster when `dask` (or the setting `TCDB_DASK_ADDRESS`) names one, `local` for a local
    cluster."""
    logger = get_run_logger()
    watch = Stopwatch()
    db = Database()  # the worker's database (`TCDB_DATABASE_URL` of its deployment)
    measures = list(measures) if measures else default_measures()
    dask = dask or get_settings().dask_address
    if dask and dask != "local":
        reach_scheduler(dask)  # once, in seconds, not per target after Dask's 30 s
    if collection is not None and snapshot is not None and qrels is not None:
        targets = [(collection, snapshot, qrels)]  # the core names what does not exist
    else:
        targets = evaluation_targets(db, collection, snapshot, qrels, all_qrels=all_qrels)
    rows: list[dict[str, Any]] = []
    failures: list[TcdbError] = []
    for coll, snap, qrels_name in targets:
        try:
            with watch.step(f"{coll}/{snap}/{qrels_name}"):
                report = (evaluate_on_dask(db, coll, snap, qrels_name, measures, runs, dask=dask)
                          if dask else evaluate_one(coll, snap, qrels_name, measures, runs))
        except TcdbError as exc:
            logger.error("%s/%s under %s: %s", coll, snap, qrels_name, exc)
            failures.append(exc)
            rows.append({"collection": coll, "snapshot": snap, "qrels": qrels_name,
                         "error": str(exc)})
            continue
        logger.info("%s/%s under %s: %s", coll, snap, qrels_name, _brief(report))
        rows.append({**report, "collection": coll, "snapshot": snap, "qrels": qrels_name})
    summary = evaluation_summary(measures, rows)
    result = {"summary": summary, "measures": measures, "targets": rows,
              "failed": len(failures), "seconds": round(watch.total, 3)}
    publish("evaluate", render("Missing scores", [
        summary, evaluation_table(rows), timings_section(watch),
    ]), "scores computed for what was missing")
    if failures:
        raise failures[0]
    return result


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def evaluation_summary(measures: list[str], rows: list[dict[str, Any]]) -> str:
    """One sentence saying what was scored: which measures, over how many runs, what was new.

    Why: "measures: 3 items, targets: 9 items" leaves the reader to guess what was counted.
    """
    runs = {(r["collection"], r["snapshot"], tag) for r in rows for tag in r.get("runs", [])}
    computed = sum(r.get("n_computed", 0) for r in rows)
    stored = sum(r.get("n_cached", 0) for r in rows)
    failed = sum(1 for r in rows if "error" in r)
    text = (f"{_count(len(measures), 'measure')} ({', '.join(measures)}) over "
            f"{_count(len(runs), 'run')} in {_count(len(rows), '(snapshot, qrels) pair')}: "
            f"{_count(computed, '(run, measure) score')} computed, {stored} already stored")
    return text + (f"; {failed} failed" if failed else "")


def evaluation_table(rows: list[dict[str, Any]]) -> str:
    """One row per (snapshot, qrels) pair: runs, what was computed now and what was stored."""
    columns = ["collection", "snapshot", "qrels", "runs", "(run, measure) computed",
               "already stored", "per-topic values written", "runs without entries",
               "seconds", "error"]
    return markdown_table(columns, [
        [r["collection"], r["snapshot"], r["qrels"], len(r.get("runs", [])) or None,
         r.get("n_computed"), r.get("n_cached"), r.get("n_scores"),
         ", ".join(r.get("skipped", [])) or None, r.get("seconds"), r.get("error")]
        for r in rows])


def _brief(report: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in report.items()
                     if isinstance(v, int | float) and not isinstance(v, bool))
