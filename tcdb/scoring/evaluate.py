"""Per-topic scores with ir_measures (pytrec_eval backend), computed once and stored.

For each (run, qrels set, measure) without an `evaluation` row, the run is read back from the
database (resolved entries ∪ unresolved ones, with external doc ids and scores as stored, so
trec_eval's tie-breaking by document id applies), scored by one ir_measures evaluator built once
per qrels set and measure set, and its per-topic values are written to `score` in bulk. Only
topics the run answered are stored; means over the qrels set's topics (`trec_eval -c`) count the
others as 0 (`tcdb.scoring.scores`). The `evaluation` row is written even when no topic was
answered, so a second call never recomputes.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from sqlalchemy import Connection
from sqlmodel import Session

from tcdb.operations.database import Database
from tcdb.progress import Progress
from tcdb.schema.enums import QrelsKind
from tcdb.scoring.compute import removed_by, score_runs
from tcdb.scoring.measures import check_providers, parse_measures
from tcdb.storage.bulk import bulk_insert

if TYPE_CHECKING:
    from tcdb.schema import QrelsSet, Run, Snapshot
    from tcdb.scoring.compute import RunValues
    from tcdb.scoring.parallel import ScoringJob

SCORE_COLUMNS = ["run_id", "qrels_set_id", "residual_of_id", "measure_id", "topic_id", "value"]
EVALUATION_COLUMNS = ["run_id", "qrels_set_id", "residual_of_id", "measure_id", "source",
                      "n_topics", "computed_at"]


class EvaluationReport(BaseModel):
    """What an `evaluate` call did: how many (run, measure) pairs it computed or found stored."""

    collection: str
    snapshot: str
    qrels: str
    measures: list[str]
    runs: list[str]
    n_computed: int = 0  # (run, measure) pairs computed now
    n_cached: int = 0  # (run, measure) pairs already stored
    n_scores: int = 0  # per-topic values written
    skipped: list[str] = Field(default_factory=list)  # runs without entries (imported scores)
    residual_of: str | None = None  # the qrels set whose judged documents were removed
    seconds: float = 0.0


def evaluate(
    db: Database,
    collection: str,
    snapshot: str,
    qrels: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    *,
    residual_of: str | None = None,
    progress: bool = False,
    workers: int | None = None,
) -> EvaluationReport:
    """Compute and store the missing (run, qrels set, measure) scores of a snapshot's runs.

    The helper every reader of scores calls first; the `evaluate` operation
    (`tcdb.scoring.evaluation`) is it with a request, and the means.

    With `residual_of` (a qrels set: `NAME` of this snapshot, or `SNAPSHOT/NAME` of another of
    the collection) every ranking loses the documents that set judged for the topic before it
    is scored, the rest keeping their order — TREC-COVID's residual collection — and the
    scores are stored under their own key, apart from the run's own.

    `workers` processes score the runs (`tcdb.scoring.parallel`; None: the available cores
    when there are enough runs to pay for them, 1: in this process); the values are the same.
    """
    # The runs lock of the collection (`tcdb.storage.locks`): a run replaced meanwhile cannot leave
    # scores of its old entries, and a second evaluate waits and finds the scores stored.
    with runs_lock(db, collection) as session:
        target = resolve_target(session, collection, snapshot, qrels, measures, runs,
                                residual_of)
        return store_missing(session, target, progress=progress, workers=workers)


@dataclass
class EvaluationTarget:
    """An evaluation's names resolved once, into the rows every later step reads."""

    collection: str
    snapshot: Snapshot
    qrels: str  # the name asked for (`original` stays `original`)
    qrels_set: QrelsSet
    residual_of: str | None
    residual: QrelsSet | None
    runs: list[Run]
    measures: list[str]  # ir_measures' spelling, each once

    @property
    def residual_id(self) -> int:
        """The key residual scores are stored under (0: the run's own scores)."""
        return self.residual.pk if self.residual is not None else 0


def resolve_target(session: Session, collection: str, snapshot: str, qrels: str,
                   measures: Sequence[str], runs: Sequence[str] | None,
                   residual_of: str | None) -> EvaluationTarget:
    """Snapshot, qrels set, residual set and runs by name, once; the measures parsed and
    checked against what their providers accept on this snapshot and qrels set."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.runs import get_runs

    names = parse_measures(measures)
    snap = get_snapshot(session, collection, snapshot)
    qset = get_qrels_set(session, snap, qrels)
    residual = residual_set(session, snap, residual_of) if residual_of else None
    run_list = get_runs(session, snap, runs)
    check_providers(names, lambda: provider_data(session.connection(), snap.pk, qset.pk))
    return EvaluationTarget(collection=collection, snapshot=snap, qrels=qrels, qrels_set=qset,
                            residual_of=residual_of, residual=residual, runs=run_list,
                            measures=names)


def store_missing(session: Session, target: EvaluationTarget, *, progress: bool = False,
                  workers: int | None = None) -> EvaluationReport:
    """Compute and store what `target` lacks, in the caller's session (under the runs lock)."""
    started = time.perf_counter()
    plan = _plan(session, target)
    if plan.todo:
        n_pairs, n_scores = evaluate_runs(
            session.connection(), plan.snapshot_id, plan.qrels_set_id, plan.todo,
            plan.measure_ids, residual_of_id=plan.residual_of_id, progress=progress,
            workers=workers, sizes=plan.sizes)
        plan.report.n_computed += n_pairs
        plan.report.n_scores += n_scores
    plan.report.seconds = time.perf_counter() - started
    return plan.report


@dataclass
class EvaluationPlan:
    """What an evaluation must compute: per set of missing measures, the runs lacking them.

    Made by `plan_evaluation` for an orchestrator that scores elsewhere (Dask workers through
    Prefect, `flows/evaluate.py`) and stores with `store_evaluation`.
    """

    report: EvaluationReport
    snapshot_id: int
    qrels_set_id: int
    residual_of_id: int
    measure_ids: dict[str, int]
    todo: dict[tuple[str, ...], list[int]]  # missing measures → run ids
    sizes: dict[int, int]  # run id → entries (to share the work evenly)
    checksums: dict[int, str | None]  # run id → its file's checksum when planned

    def jobs(self, url: str, n_jobs: int) -> list[ScoringJob]:
        """The work in about `n_jobs` shares per set of missing measures."""
        from tcdb.scoring.parallel import make_jobs

        return make_jobs(url, self.snapshot_id, self.qrels_set_id, self.residual_of_id,
                         self.todo, self.sizes, n_jobs)


def plan_evaluation(db: Database, collection: str, snapshot: str, qrels: str,
                    measures: Sequence[str],
                    runs: Sequence[str] | None = None, *,
                    residual_of: str | None = None) -> EvaluationPlan:
    """What is missing, read without taking the runs lock (`store_evaluation` checks again)."""
    with db.session() as session:
        return _plan(session, resolve_target(session, collection, snapshot, qrels, measures,
                                             runs, residual_of))


def store_evaluation(db: Database, plan: EvaluationPlan,
                     scored: Iterable[list[tuple[int, RunValues]]]) -> EvaluationReport:
    """Store values scored elsewhere for `plan`, under the runs lock: values of a run replaced
    or deleted since the plan, and of (run, measure) pairs stored meanwhile, are dropped."""
    from tcdb.queries import evaluations, topic_ids
    from tcdb.schema import Run

    report = plan.report.model_copy()
    values = [pair for batch in scored for pair in batch]
    with runs_lock(db, report.collection) as session:
        conn = session.connection()
        current = {run_id: session.get(Run, run_id) for run_id in plan.checksums}
        unchanged = {run_id for run_id, run in current.items()
                     if run is not None and run.checksum == plan.checksums[run_id]}
        done = evaluations(session, plan.qrels_set_id, list(unchanged),
                           list(plan.measure_ids.values()), plan.residual_of_id)
        missing = {run_id: {name for names, ids in plan.todo.items() if run_id in ids
                            for name in names
                            if (run_id, plan.measure_ids[name]) not in done}
                   for run_id in unchanged}
        kept = [(run_id, {name: by_topic for name, by_topic in by_measure.items()
                          if name in missing[run_id]})
                for run_id, by_measure in values if run_id in unchanged]
        n_pairs, n_scores = _store(conn, plan.snapshot_id, plan.qrels_set_id,
                                   plan.residual_of_id, plan.measure_ids, topic_ids(conn,
                                   plan.snapshot_id), kept)
    report.n_computed += n_pairs
    report.n_scores += n_scores
    return report


@contextmanager
def runs_lock(db: Database, collection: str) -> Iterator[Session]:
    """A write session holding the collection's runs lock: runs, entries and scores."""
    with db.write_session(f"runs\x00{collection}", immediate=False,
                       waiting=f"waiting for another process writing runs or scores of "
                       f"{collection!r} to finish …") as session:
        yield session


def _plan(session: Session, target: EvaluationTarget) -> EvaluationPlan:
    from tcdb.queries import evaluations
    from tcdb.scoring.measures import measure_id

    names, snap, qset, run_list = target.measures, target.snapshot, target.qrels_set, target.runs
    report = EvaluationReport(collection=target.collection, snapshot=snap.label,
                              qrels=target.qrels, measures=names, runs=[r.tag for r in run_list],
                              residual_of=target.residual_of)
    ids = {name: measure_id(session, name) for name in names}
    residual_id = target.residual_id
    done = evaluations(session, qset.pk, [r.pk for r in run_list], list(ids.values()),
                       residual_id)
    todo: dict[tuple[str, ...], list[int]] = {}
    for run in run_list:
        missing = tuple(n for n in names if (run.id, ids[n]) not in done)
        report.n_cached += len(names) - len(missing)
        if not missing:
            continue
        if run.n_entries + run.n_unresolved == 0 or qset.kind == QrelsKind.published:
            # Nothing to compute with: no ranking, or judgments known only by their scores.
            report.skipped.append(run.tag)
            continue
        todo.setdefault(missing, []).append(run.pk)
    planned = [r for r in run_list if any(r.pk in ids_ for ids_ in todo.values())]
    return EvaluationPlan(report=report, snapshot_id=snap.pk, qrels_set_id=qset.pk,
                          residual_of_id=residual_id, measure_ids=ids, todo=todo,
                          sizes={r.pk: r.n_entries + r.n_unresolved for r in planned},
                          checksums={r.pk: r.checksum for r in planned})


def provider_data(conn: Connection, snapshot_id: int, qrels_set_id: int
                  ) -> tuple[list[str], int | None]:
    """The external topic ids of a snapshot and the largest grade of a qrels set: what
    `tcdb.scoring.measures.check_providers` holds a provider's limits against."""
    from tcdb.queries import qrels_of, snapshot_topics

    grades = [g for judged in qrels_of(conn, qrels_set_id).values() for g in judged.values()]
    return ([ext for ext, _key in snapshot_topics(conn, snapshot_id).values()],
            max(grades, default=None))


def residual_set(session: Session, snapshot: Snapshot, name: str) -> QrelsSet:
    """The qrels set a residual evaluation removes the judged documents of: `NAME` of this
    snapshot, or `SNAPSHOT/NAME` of another snapshot of the same collection (topics and
    documents keep their identity across snapshots)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.schema import Collection

    label, _, set_name = name.rpartition("/")
    if not label:
        return get_qrels_set(session, snapshot, set_name)
    collection = session.get(Collection, snapshot.collection_id)
    assert collection is not None
    return get_qrels_set(session, get_snapshot(session, collection.name, label), set_name)


def evaluate_runs(
    conn: Connection,
    snapshot_id: int,
    qrels_set_id: int,
    todo: dict[tuple[str, ...], list[int]],
    measure_ids: dict[str, int],
    *,
    residual_of_id: int = 0,
    progress: bool = False,
    workers: int | None = 1,
    sizes: dict[int, int] | None = None,
) -> tuple[int, int]:
    """Score runs (grouped by the measures each lacks) and write scores and evaluation rows.

    With more than one worker (`tcdb.scoring.parallel.worker_count`), each worker process
    scores its share of the runs; this process writes every value in bulk as shares finish.
    Returns ((run, measure) pairs computed, per-topic values written).
    """
    from tcdb.queries import topic_ids
    from tcdb.scoring.parallel import worker_count

    topics = topic_ids(conn, snapshot_id)
    total = sum(len(v) for v in todo.values())
    n_workers = worker_count(workers, total)
    n_pairs = n_scores = 0
    # worker processes start before the progress bar's thread (`score_in_processes`)
    batches = _scored(conn, snapshot_id, qrels_set_id, residual_of_id, todo, n_workers,
                      sizes or {})
    with Progress("evaluating runs", total=total, enabled=progress and total > 1) as bar:
        for scored in batches:
            pairs, values = _store(conn, snapshot_id, qrels_set_id, residual_of_id,
                                   measure_ids, topics, scored)
            n_pairs += pairs
            n_scores += values
            bar.advance(len(scored))
    return n_pairs, n_scores


def _scored(conn: Connection, snapshot_id: int, qrels_set_id: int, residual_of_id: int,
            todo: dict[tuple[str, ...], list[int]], n_workers: int, sizes: dict[int, int],
            ) -> Iterator[list[tuple[int, RunValues]]]:
    """Batches of (run id, values): from worker processes (started now), or scored here one
    run at a time as the caller asks for them."""
    if n_workers > 1:
        from tcdb.scoring.parallel import make_jobs, score_in_processes
        # the workers open the database this connection is on, password included
        url = conn.engine.url.render_as_string(hide_password=False)
        return score_in_processes(make_jobs(url, snapshot_id, qrels_set_id,
                                            residual_of_id, todo, sizes, n_workers))
    return _scored_here(conn, snapshot_id, qrels_set_id, residual_of_id, todo)


def _scored_here(conn: Connection, snapshot_id: int, qrels_set_id: int, residual_of_id: int,
                 todo: dict[tuple[str, ...], list[int]],
                 ) -> Iterator[list[tuple[int, RunValues]]]:
    from tcdb.queries import qrels_of

    qrels = qrels_of(conn, qrels_set_id)
    removed = removed_by(conn, residual_of_id, snapshot_id)
    for names, run_ids in todo.items():
        for pair in score_runs(conn, snapshot_id, run_ids, names, qrels, removed=removed):
            yield [pair]


def _store(conn: Connection, snapshot_id: int, qrels_set_id: int, residual_of_id: int,
           measure_ids: dict[str, int], topics: dict[str, int],
           scored: Sequence[tuple[int, RunValues]]) -> tuple[int, int]:
    """Write runs' per-topic values and their `evaluation` rows in bulk."""
    now = dt.datetime.now(dt.UTC)
    scores: list[tuple[int, int, int, int, int, float]] = []
    marks: list[tuple[int, int, int, int, str, int, dt.datetime]] = []
    for run_id, values in scored:
        for name, by_topic in values.items():
            mid = measure_ids[name]
            scores.extend((run_id, qrels_set_id, residual_of_id, mid, topics[topic], value)
                          for topic, value in by_topic.items())
            marks.append((run_id, qrels_set_id, residual_of_id, mid, "ir_measures",
                          len(by_topic), now))
    n_scores = bulk_insert(conn, "score", SCORE_COLUMNS, scores)
    return bulk_insert(conn, "evaluation", EVALUATION_COLUMNS, marks), n_scores
