"""Per-topic scores with ir_measures (pytrec_eval backend), computed once and stored.

For each (run, qrels set, measure) without an `evaluation` row, the run is read back from the
database (resolved entries ∪ unresolved ones, with external doc ids and scores as stored, so
trec_eval's tie-breaking by document id applies), scored by one ir_measures evaluator built once
per qrels set and measure set, and its per-topic values are written to `score` in bulk. Only
topics the run answered are stored; means over the qrels set's topics (`trec_eval -c`) count the
others as 0 (`tcdb.scores`). The `evaluation` row is written even when no topic was answered, so a
second call never recomputes.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import Connection, select

from tcdb.db import bulk_insert, is_postgres, session_scope
from tcdb.errors import DatabaseError, InputError
from tcdb.schema import RunEntry, SnapshotDocument, SnapshotTopic, UnresolvedRunEntry

RUNS_PER_BATCH = 20  # runs read per query: ~1M entries of 50 topics × 1,000 documents
SCORE_COLUMNS = ["run_id", "qrels_set_id", "measure_id", "topic_id", "value"]
EVALUATION_COLUMNS = ["run_id", "qrels_set_id", "measure_id", "source", "n_topics",
                      "computed_at"]

RunDict = dict[str, dict[str, float]]


@dataclass
class EvaluationReport:
    """What an `evaluate` call did: how many (run, measure) pairs it computed or found stored."""

    collection: str
    snapshot: str
    qrels: str
    measures: list[str]
    runs: list[str]
    n_computed: int = 0  # (run, measure) pairs computed now
    n_cached: int = 0  # (run, measure) pairs already stored
    n_scores: int = 0  # per-topic values written
    skipped: list[str] = field(default_factory=list)  # runs without entries (imported scores)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def canonical_measure(name: str) -> str:
    """The ir_measures spelling of a measure (`ndcg_cut_10` and `nDCG@10` → `nDCG@10`)."""
    from tcdb.collections.trec_eval_output import canonical_measure as irm_name
    from tcdb.collections.trec_eval_output import measure_from_trec_name

    found = irm_name(name.strip()) or measure_from_trec_name(name.strip())
    if found is None:
        raise InputError("--measure", None, f"{name!r} is not a measure ir_measures knows "
                         "(e.g. nDCG@10, AP, P@10, Bpref, RR, Judged@10, or trec_eval names)")
    return found


def parse_measures(names: Iterable[str]) -> list[str]:
    """Canonical names, de-duplicated in order; each must be computable by ir_measures."""
    import ir_measures

    result = list(dict.fromkeys(canonical_measure(n) for n in names))
    if not result:
        raise InputError("--measure", None, "give at least one measure")
    for name in result:
        if not ir_measures.DefaultPipeline.supports(ir_measures.parse_measure(name)):
            raise InputError("--measure", None, f"no installed ir_measures provider computes "
                             f"{name}")
    return result


def evaluate(
    collection: str,
    snapshot: str,
    qrels: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    *,
    progress: bool = False,
) -> EvaluationReport:
    """Compute and store the missing (run, qrels set, measure) scores of a snapshot's runs."""
    from tcdb.catalog import get_snapshot
    from tcdb.lookups import measure_id
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations
    from tcdb.runs import get_runs

    started = time.perf_counter()
    names = parse_measures(measures)
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap, runs)
        report = EvaluationReport(collection, snapshot, qrels, names, [r.tag for r in run_list])
        ids = {name: measure_id(session, name) for name in names}
        done = evaluations(session, qset.id or 0, [r.id or 0 for r in run_list],
                           list(ids.values()))
        todo: dict[tuple[str, ...], list[int]] = {}
        for run in run_list:
            missing = tuple(n for n in names if (run.id, ids[n]) not in done)
            report.n_cached += len(names) - len(missing)
            if not missing:
                continue
            if run.n_entries + run.n_unresolved == 0:
                report.skipped.append(run.tag)
                continue
            todo.setdefault(missing, []).append(run.id or 0)
        if todo:
            conn = session.connection()
            n_pairs, n_scores = evaluate_runs(conn, snap.id or 0, qset.id or 0, todo, ids,
                                              progress=progress)
            report.n_computed += n_pairs
            report.n_scores += n_scores
    report.seconds = time.perf_counter() - started
    return report


def evaluate_runs(
    conn: Connection,
    snapshot_id: int,
    qrels_set_id: int,
    todo: dict[tuple[str, ...], list[int]],
    measure_ids: dict[str, int],
    *,
    progress: bool = False,
) -> tuple[int, int]:
    """Score runs (grouped by the measures each lacks) and write scores and evaluation rows.

    Returns ((run, measure) pairs computed, per-topic values written).
    """
    import ir_measures

    from tcdb.lookups import topic_ids
    from tcdb.qrels import qrels_frame

    frame = qrels_frame(conn, qrels_set_id)
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, grade in zip(frame["topic"].tolist(), frame["doc"].tolist(),
                                 frame["grade"].tolist(), strict=True):
        qrels.setdefault(topic, {})[doc] = grade
    topics = topic_ids(conn, snapshot_id)
    now = dt.datetime.now(dt.UTC)
    n_pairs = n_scores = 0
    total = sum(len(v) for v in todo.values())
    from tcdb.runs import TaskProgress

    with TaskProgress(progress, total, "evaluating runs") as bar:
        for names, run_ids in todo.items():
            parsed = {name: ir_measures.parse_measure(name) for name in names}
            by_measure = {m: measure_ids[name] for name, m in parsed.items()}
            evaluator = ir_measures.evaluator(list(parsed.values()), qrels)
            scores: list[tuple[int, int, int, int, float]] = []
            marks: list[tuple[int, int, int, str, int, dt.datetime]] = []
            for run_id, run in read_runs(conn, snapshot_id, run_ids):
                answered: dict[int, int] = dict.fromkeys(by_measure.values(), 0)
                for metric in evaluator.iter_calc(run):
                    if metric.query_id not in run:
                        continue  # a qrels topic the run did not answer: counts 0 in -c means
                    mid = by_measure[metric.measure]
                    scores.append((run_id, qrels_set_id, mid, topics[metric.query_id],
                                   float(metric.value)))
                    answered[mid] += 1
                for mid, n in answered.items():
                    marks.append((run_id, qrels_set_id, mid, "ir_measures", n, now))
                bar.advance()
            n_scores += bulk_insert(conn, "score", SCORE_COLUMNS, scores)
            n_pairs += bulk_insert(conn, "evaluation", EVALUATION_COLUMNS, marks)
    return n_pairs, n_scores


def read_runs(conn: Connection, snapshot_id: int, run_ids: Sequence[int]
              ) -> Iterator[tuple[int, RunDict]]:
    """Each run as ir_measures' dict of dicts {topic: {doc: score}}, with external ids.

    Entries come in batches of runs, one Core query (or COPY on PostgreSQL) per batch, ordered by
    run and topic; unresolved entries (documents the snapshot lacks) are merged in.
    """
    if not run_ids:
        return
    doc_keys, doc_names = _document_names(conn, snapshot_id)
    topic_names = dict(conn.execute(select(SnapshotTopic.topic_id, SnapshotTopic.external_id)
                                    .where(SnapshotTopic.snapshot_id == snapshot_id))
                       .tuples().all())
    ordered = sorted(run_ids)
    for start in range(0, len(ordered), RUNS_PER_BATCH):
        batch = ordered[start:start + RUNS_PER_BATCH]
        runs: dict[int, RunDict] = {r: {} for r in batch}
        run_col, topic_col, doc_col, score_col = _read_entries(conn, batch)
        if len(doc_col):
            position = np.searchsorted(doc_keys, doc_col)
            position[position >= len(doc_keys)] = 0
            if len(doc_keys) == 0 or not np.array_equal(doc_keys[position], doc_col):
                raise DatabaseError(f"run entries of snapshot {snapshot_id} name documents "
                                    "that are not in it: the database is inconsistent")
            docs: list[str] = doc_names[position].tolist()
            values: list[float] = score_col.tolist()
            change = np.flatnonzero((np.diff(run_col) != 0) | (np.diff(topic_col) != 0)) + 1
            bounds = np.concatenate(([0], change, [len(doc_col)])).tolist()
            run_at = run_col[bounds[:-1]].tolist()
            topic_at = topic_col[bounds[:-1]].tolist()
            for i in range(len(bounds) - 1):
                a, b = bounds[i], bounds[i + 1]
                runs[run_at[i]][topic_names[topic_at[i]]] = dict(zip(docs[a:b], values[a:b],
                                                                     strict=True))
        unresolved = conn.execute(
            select(UnresolvedRunEntry.run_id, UnresolvedRunEntry.topic_id,
                   UnresolvedRunEntry.external_doc_id, UnresolvedRunEntry.score)
            .where(UnresolvedRunEntry.run_id.in_(batch)))
        for run_id, topic_id, doc, score in unresolved:
            runs[run_id].setdefault(topic_names[topic_id], {})[doc] = score
        yield from runs.items()


def _document_names(conn: Connection, snapshot_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The snapshot's document ids (sorted int64) and their external ids (object array)."""
    rows = conn.execute(select(SnapshotDocument.document_id, SnapshotDocument.external_id)
                        .where(SnapshotDocument.snapshot_id == snapshot_id)
                        .order_by(SnapshotDocument.document_id)).all()
    keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    names = np.empty(len(rows), dtype=object)
    names[:] = [r[1] for r in rows]
    return keys, names


def _read_entries(conn: Connection, run_ids: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(run, topic, document, score) columns of the runs' entries, ordered by run and topic."""
    if is_postgres(conn):
        return _read_entries_copy(conn, run_ids)
    query = (select(RunEntry.run_id, RunEntry.topic_id, RunEntry.document_id, RunEntry.score)
             .where(RunEntry.run_id.in_(list(run_ids)))
             .order_by(RunEntry.run_id, RunEntry.topic_id))
    rows = conn.execute(query).all()
    if not rows:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, np.empty(0, dtype=np.float64)
    run_col, topic_col, doc_col, score_col = zip(*rows, strict=True)
    return (np.array(run_col, dtype=np.int64), np.array(topic_col, dtype=np.int64),
            np.array(doc_col, dtype=np.int64), np.array(score_col, dtype=np.float64))


def _read_entries_copy(conn: Connection, run_ids: Sequence[int]
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PostgreSQL: `COPY (SELECT …) TO STDOUT` parsed by pyarrow — several times faster than
    materialising a Python row per entry. Same transaction as the caller."""
    import io

    import pyarrow as pa
    import pyarrow.csv as pcsv

    ids = ",".join(str(int(r)) for r in run_ids)
    sql = (f"COPY (SELECT run_id, topic_id, document_id, score FROM run_entry "
           f"WHERE run_id IN ({ids}) ORDER BY run_id, topic_id) TO STDOUT")
    raw = conn.connection.driver_connection
    assert raw is not None
    buffer = io.BytesIO()
    with raw.cursor() as cursor, cursor.copy(sql) as copy:
        for block in copy:
            buffer.write(block)
    data = buffer.getvalue()
    if not data:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, np.empty(0, dtype=np.float64)
    names = ["run", "topic", "doc", "score"]
    table = pcsv.read_csv(
        pa.BufferReader(data),
        read_options=pcsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False),
        convert_options=pcsv.ConvertOptions(column_types={
            "run": pa.int64(), "topic": pa.int64(), "doc": pa.int64(), "score": pa.float64()}),
    )
    return tuple(table.column(n).to_numpy() for n in names)  # type: ignore[return-value]
