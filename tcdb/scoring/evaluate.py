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
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from sqlalchemy import Connection
from sqlmodel import Session

from tcdb.progress import Progress
from tcdb.queries import read_runs
from tcdb.scoring.measures import parse_measures
from tcdb.storage.db import bulk_insert
from tcdb.storage.locks import write_session

if TYPE_CHECKING:
    from tcdb.schema import QrelsSet, Snapshot

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
    collection: str,
    snapshot: str,
    qrels: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    *,
    residual_of: str | None = None,
    progress: bool = False,
) -> EvaluationReport:
    """Compute and store the missing (run, qrels set, measure) scores of a snapshot's runs.

    The helper every reader of scores calls first; the `evaluate` operation
    (`tcdb.scoring.evaluation`) is it with a request, and the means.

    With `residual_of` (a qrels set: `NAME` of this snapshot, or `SNAPSHOT/NAME` of another of
    the collection) every ranking loses the documents that set judged for the topic before it
    is scored, the rest keeping their order — TREC-COVID's residual collection — and the
    scores are stored under their own key, apart from the run's own.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations
    from tcdb.runs import get_runs
    from tcdb.scoring.measures import measure_id

    started = time.perf_counter()
    names = parse_measures(measures)
    # The runs lock of the collection (`tcdb.storage.locks`): a run replaced meanwhile cannot leave
    # scores of its old entries, and a second evaluate waits and finds the scores stored.
    with write_session(f"runs\x00{collection}", immediate=False,
                       waiting=f"waiting for another process writing runs or scores of "
                       f"{collection!r} to finish …") as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        residual = residual_set(session, snap, residual_of) if residual_of else None
        run_list = get_runs(session, snap, runs)
        report = EvaluationReport(collection=collection, snapshot=snapshot, qrels=qrels,
                                  measures=names, runs=[r.tag for r in run_list],
                                  residual_of=residual_of)
        ids = {name: measure_id(session, name) for name in names}
        residual_id = residual.pk if residual is not None else 0
        done = evaluations(session, qset.pk, [r.pk for r in run_list], list(ids.values()),
                           residual_id)
        todo: dict[tuple[str, ...], list[int]] = {}
        for run in run_list:
            missing = tuple(n for n in names if (run.id, ids[n]) not in done)
            report.n_cached += len(names) - len(missing)
            if not missing:
                continue
            if run.n_entries + run.n_unresolved == 0:
                report.skipped.append(run.tag)
                continue
            todo.setdefault(missing, []).append(run.pk)
        if todo:
            conn = session.connection()
            n_pairs, n_scores = evaluate_runs(conn, snap.pk, qset.pk, todo, ids,
                                              residual_of_id=residual_id, progress=progress)
            report.n_computed += n_pairs
            report.n_scores += n_scores
    report.seconds = time.perf_counter() - started
    return report


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
) -> tuple[int, int]:
    """Score runs (grouped by the measures each lacks) and write scores and evaluation rows.

    Returns ((run, measure) pairs computed, per-topic values written).
    """
    from tcdb.queries import qrels_of, qrels_records, topic_ids

    qrels = qrels_of(conn, qrels_set_id)
    removed: dict[str, set[str]] | None = None
    if residual_of_id:
        removed = {}
        for record in qrels_records(conn, residual_of_id, snapshot_id):
            removed.setdefault(record.topic_id, set()).add(record.doc_id)
    topics = topic_ids(conn, snapshot_id)
    now = dt.datetime.now(dt.UTC)
    n_pairs = n_scores = 0
    total = sum(len(v) for v in todo.values())
    with Progress("evaluating runs", total=total, enabled=progress and total > 1) as bar:
        for names, run_ids in todo.items():
            scores: list[tuple[int, int, int, int, int, float]] = []
            marks: list[tuple[int, int, int, int, str, int, dt.datetime]] = []
            for run_id, values in score_runs(conn, snapshot_id, run_ids, names, qrels,
                                             removed=removed):
                for name, by_topic in values.items():
                    mid = measure_ids[name]
                    scores.extend((run_id, qrels_set_id, residual_of_id, mid, topics[topic],
                                   value) for topic, value in by_topic.items())
                    marks.append((run_id, qrels_set_id, residual_of_id, mid, "ir_measures",
                                  len(by_topic), now))
                bar.advance()
            n_scores += bulk_insert(conn, "score", SCORE_COLUMNS, scores)
            n_pairs += bulk_insert(conn, "evaluation", EVALUATION_COLUMNS, marks)
    return n_pairs, n_scores


def score_runs(conn: Connection, snapshot_id: int, run_ids: Sequence[int],
               measures: Sequence[str], qrels: dict[str, dict[str, int]], *,
               removed: dict[str, set[str]] | None = None,
               ) -> Iterator[tuple[int, dict[str, dict[str, float]]]]:
    """Per run: measure → {external topic id: value} with ir_measures, nothing stored.

    Only the topics the run answered get a value; a qrels topic it did not answer counts 0 in
    `trec_eval -c` means, which the readers of scores apply. `removed` (topic → documents)
    are taken out of every ranking first: what is left keeps its order, since ir_measures
    ranks by score. Measures that all stop at a cutoff read only that deep into each ranking
    (`tcdb.scoring.measures.ranking_depth`).
    """
    import ir_measures

    from tcdb.scoring.measures import ranking_depth

    parsed = {name: ir_measures.parse_measure(name) for name in measures}
    name_of = {measure: name for name, measure in parsed.items()}
    evaluator = ir_measures.evaluator(list(parsed.values()), qrels)
    depth = None if removed else ranking_depth(measures)  # removing documents moves ranks up
    for run_id, run in read_runs(conn, snapshot_id, run_ids, depth):
        if removed:
            run = {topic: {doc: score for doc, score in docs.items()
                           if doc not in removed.get(topic, ())}
                   for topic, docs in run.items()}
            run = {topic: docs for topic, docs in run.items() if docs}
        values: dict[str, dict[str, float]] = {name: {} for name in measures}
        for metric in evaluator.iter_calc(run):
            if metric.query_id in run:
                values[name_of[metric.measure]][metric.query_id] = float(metric.value)
        yield run_id, values
