"""Runs as the reports and evaluation read them: metadata rows, rankings, top k, ranks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import Connection, and_, func, select
from sqlmodel import Session, col

from tcdb.errors import DatabaseError
from tcdb.schema import (
    Collection,
    Judgment,
    Run,
    RunEntry,
    Snapshot,
    SnapshotDocument,
    SnapshotTopic,
    System,
    UnresolvedRunEntry,
)
from tcdb.storage.bulk import int_rows
from tcdb.storage.db import connection_of, is_postgres

if TYPE_CHECKING:
    import pandas as pd

RUNS_PER_BATCH = 20  # runs read per query: ~1M entries of 50 topics × 1,000 documents
READ_WORK_MEM = "64MB"  # PostgreSQL's memory to group one batch's entries by run and topic
RunDict = dict[str, dict[str, float]]


RUN_COLUMNS = [
    "collection", "snapshot", "run", "system", "group", "run_type", "contributed", "category",
    "submitted", "first_stage", "n_entries", "n_unresolved", "checksum", "source",
    "description", "platform", "ir_metadata", "created_at", "run_id", "snapshot_id", "version",
]


def run_rows(
    bind: Connection | Session,
    *,
    collection_id: int | None = None,
    snapshot: str | None = None,
    snapshot_ids: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Runs with their collection, snapshot and system names, one dict per run."""
    query = (
        select(col(Collection.name), col(Snapshot.label), col(Run.tag), col(System.name),
               col(Run.group_name), col(Run.run_type), col(Run.contributed), col(Run.category),
               col(Run.submitted), col(Run.first_stage), col(Run.n_entries),
               col(Run.n_unresolved), col(Run.checksum), col(Run.source),
               col(Run.description), col(Run.platform), col(Run.meta), col(Run.created_at),
               col(Run.id), col(Run.snapshot_id), col(Run.version))
        .join(Snapshot, col(Snapshot.id) == col(Run.snapshot_id))
        .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
        .join(System, col(System.id) == col(Run.system_id))
        .order_by(col(Collection.name), col(Snapshot.ordinal), col(Snapshot.label), col(Run.tag))
    )
    if collection_id is not None:
        query = query.where(col(Snapshot.collection_id) == collection_id)
    if snapshot is not None:
        query = query.where(col(Snapshot.label) == snapshot)
    if snapshot_ids is not None:
        query = query.where(col(Run.snapshot_id).in_(list(snapshot_ids)))
    rows = []
    for row in connection_of(bind).execute(query):
        record = dict(zip(RUN_COLUMNS, row, strict=True))
        for key in ("category", "run_type"):
            record[key] = getattr(record[key], "value", record[key])
        # The run's ir_metadata as its YAML text (`tcdb.collections.ir_metadata.description`), or
        # None.
        ir = (record["ir_metadata"] or {}).get("ir_metadata")
        record["ir_metadata"] = ir.get("yaml") if isinstance(ir, dict) else None
        rows.append(record)
    return rows


def runs_frame(bind: Connection | Session, **filters: Any) -> pd.DataFrame:
    """`run_rows` as a DataFrame (same filters)."""
    import pandas as pd

    return pd.DataFrame(run_rows(bind, **filters), columns=RUN_COLUMNS)


def read_runs(conn: Connection, snapshot_id: int, run_ids: Sequence[int],
              depth: int | None = None, ranks_into: list[np.ndarray] | None = None,
              documents: tuple[np.ndarray, np.ndarray] | None = None
              ) -> Iterator[tuple[int, RunDict]]:
    """Each run as ir_measures' dict of dicts {topic: {doc: score}}, with external ids.

    Entries come in batches of runs, one query per batch (on PostgreSQL a row per run and
    topic, `_read_entries_arrays`), ordered by run and topic; unresolved entries (documents the
    snapshot lacks) are merged in. With `depth`, only each topic's top `depth` in trec_eval's
    order (`eval_rank`, both kinds of entries counted): what a measure with that cutoff sees
    (`tcdb.scoring.measures.ranking_depth`).

    With `ranks_into`, each batch's (run, topic, document, eval_rank) table is appended to it:
    the rankings in trec_eval's order from the same read (`tcdb.pools.rankings`), which
    passes the snapshot's `documents` (`document_names`) it read already.
    """
    if not run_ids:
        return
    doc_keys, doc_names = documents or document_names(conn, snapshot_id)
    topic_names = dict(conn.execute(select(col(SnapshotTopic.topic_id),
                                           col(SnapshotTopic.external_id))
                                    .where(col(SnapshotTopic.snapshot_id) == snapshot_id))
                       .tuples().all())
    ordered = sorted(run_ids)
    for start in range(0, len(ordered), RUNS_PER_BATCH):
        batch = ordered[start:start + RUNS_PER_BATCH]
        runs: dict[int, RunDict] = {r: {} for r in batch}
        run_col, topic_col, doc_col, score_col, rank_col = _read_entries(
            conn, batch, depth, snapshot_id, ranks_into is not None)
        if ranks_into is not None and rank_col is not None:
            ranks_into.append(np.column_stack((run_col, topic_col, doc_col, rank_col)))
        if len(doc_col):
            position = places_in(doc_keys, doc_col)
            if (position < 0).any():
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
        query = (select(col(UnresolvedRunEntry.run_id), col(UnresolvedRunEntry.topic_id),
                        col(UnresolvedRunEntry.external_doc_id), col(UnresolvedRunEntry.score))
                 .where(col(UnresolvedRunEntry.run_id).in_(batch)))
        if depth is not None:
            query = query.where(col(UnresolvedRunEntry.eval_rank) <= depth)
        unresolved = conn.execute(query)
        for run_id, topic_id, doc, score in unresolved:
            runs[run_id].setdefault(topic_names[topic_id], {})[doc] = score
        yield from runs.items()


def places_in(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each value's place in `keys` (sorted, unique, non-negative int64), -1 where absent.

    A table indexed by id where the ids are dense enough for it (document ids of a snapshot
    usually are: ~10 ns a value), else a binary search (~100 ns a value over a million keys);
    run entries are read by the million, so it shows."""
    if len(keys) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    top = int(keys[-1])
    if keys[0] >= 0 and top < 8 * (len(keys) + len(values)) + (1 << 20):
        table = np.full(top + 2, -1, dtype=np.int64)  # the last slot: every value beyond
        table[keys] = np.arange(len(keys), dtype=np.int64)
        return table[np.clip(values, -1, top + 1)]
    place = np.searchsorted(keys, values)
    place[place >= len(keys)] = 0
    return np.where(keys[place] == values, place, -1)


def document_names(conn: Connection, snapshot_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The snapshot's document ids (sorted int64) and their external ids (object array)."""
    rows = conn.execute(select(col(SnapshotDocument.document_id), col(SnapshotDocument.external_id))
                        .where(col(SnapshotDocument.snapshot_id) == snapshot_id)
                        .order_by(col(SnapshotDocument.document_id))).all()
    keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    names = np.empty(len(rows), dtype=object)
    names[:] = [r[1] for r in rows]
    return keys, names


Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


def _read_entries(conn: Connection, run_ids: Sequence[int], depth: int | None = None,
                  snapshot_id: int = 0, with_ranks: bool = False) -> Columns:
    """(run, topic, document, score, eval_rank if `with_ranks`) columns of the runs' entries,
    ordered by run and topic; with `depth`, each topic's entries up to that `eval_rank` (the
    runs are of `snapshot_id`)."""
    if is_postgres(conn):
        return _read_entries_arrays(conn, run_ids, depth, snapshot_id, with_ranks)
    # SQLite: the driver's own tuples straight into one array. SQLAlchemy's Row objects cost
    # twice the fetch itself (bench/runs.py: evaluation 1.7× → 1.1× ir_measures' time).
    raw = conn.connection.driver_connection
    assert raw is not None
    ids = ",".join(str(int(r)) for r in run_ids)
    within = "" if depth is None else f" AND eval_rank <= {int(depth)}"
    rank = ", eval_rank" if with_ranks else ""
    rows = raw.execute(f"SELECT run_id, topic_id, document_id, score{rank} FROM run_entry "
                       f"WHERE run_id IN ({ids}){within} ORDER BY run_id, topic_id").fetchall()
    if not rows:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, np.empty(0, dtype=np.float64), empty if with_ranks else None
    table = np.array(rows, dtype=np.float64)  # ids are far below 2**53: exact as floats
    ids_part = table[:, :3].astype(np.int64)
    ranks = table[:, 4].astype(np.int64) if with_ranks else None
    return ids_part[:, 0], ids_part[:, 1], ids_part[:, 2], table[:, 3].copy(), ranks


def _read_entries_arrays(conn: Connection, run_ids: Sequence[int], depth: int | None = None,
                         snapshot_id: int = 0, with_ranks: bool = False) -> Columns:
    """PostgreSQL: one row per (run, topic) holding its documents, scores (and ranks) each as
    one `bytea` of big-endian binary values (`string_agg` of `int8send`/`float8send`), read by
    `numpy.frombuffer`. A row per entry, even by COPY, costs the client ~0.5 µs of Python per
    entry in psycopg's message loop; arrays (`array_agg`) a Python number per value, ~0.9 s a
    million entries; bytes nothing per value. Same transaction as the caller. With `depth`,
    one index range scan of (run, topic, eval_rank) per run and topic reads only the top rows.
    Within a topic the entries come in no particular order."""
    ids = ",".join(str(int(r)) for r in run_ids)
    if depth is None:
        entries = ("SELECT run_id, topic_id, document_id, score, eval_rank FROM run_entry "
                   f"WHERE run_id IN ({ids})")
    else:
        entries = (
            "SELECT e.run_id, e.topic_id, e.document_id, e.score, e.eval_rank"
            f" FROM unnest(ARRAY[{ids}]::bigint[]) AS r(id)"
            " CROSS JOIN (SELECT topic_id FROM snapshot_topic"
            f"  WHERE snapshot_id = {int(snapshot_id)}) t"
            " CROSS JOIN LATERAL (SELECT run_id, topic_id, document_id, score, eval_rank"
            "  FROM run_entry"
            "  WHERE run_id = r.id AND topic_id = t.topic_id"
            f"  AND eval_rank <= {int(depth)}) e")
    # the aggregates read the group's rows in the same order: the byte strings are aligned
    rank = ", string_agg(int8send(e.eval_rank::bigint), ''::bytea)" if with_ranks else ""
    sql = ("SELECT e.run_id, e.topic_id, string_agg(int8send(e.document_id::bigint), ''::bytea),"
           f" string_agg(float8send(e.score::float8), ''::bytea){rank} FROM ({entries}) e"
           " GROUP BY e.run_id, e.topic_id ORDER BY e.run_id, e.topic_id")
    raw = conn.connection.driver_connection
    assert raw is not None
    with raw.cursor(binary=True) as cursor:
        # grouping a batch (~1 M entries) in memory, not in 240 spills to disk with the
        # default 4 MB: 2.4× less server time; for this query only
        before = cursor.execute("SELECT current_setting('work_mem')").fetchone()
        cursor.execute("SELECT set_config('work_mem', %s, true)", (READ_WORK_MEM,))
        cursor.execute(sql)
        rows = cursor.fetchall()
        if before is not None:
            cursor.execute("SELECT set_config('work_mem', %s, true)", (before[0],))
    count = len(rows)
    lengths = np.fromiter((len(r[2]) // 8 for r in rows), dtype=np.int64, count=count)
    run = np.repeat(np.fromiter((r[0] for r in rows), dtype=np.int64, count=count), lengths)
    topic = np.repeat(np.fromiter((r[1] for r in rows), dtype=np.int64, count=count), lengths)

    def column(i: int, big_endian: str, dtype: type) -> np.ndarray:
        return np.frombuffer(b"".join(r[i] for r in rows), dtype=big_endian).astype(dtype)

    ranks = column(4, ">i8", np.int64) if with_ranks else None
    return run, topic, column(2, ">i8", np.int64), column(3, ">f8", np.float64), ranks


def load_top_k(conn: Connection, snapshot_id: int, run_ids: Sequence[int], depth: int
               ) -> pd.DataFrame:
    """Top-`depth` entries of the runs as integer ids: `[run, topic, doc]`, one SQL query.

    In trec_eval's order (the stored `eval_rank`), so the top K is the one evaluation sees;
    entries for documents the snapshot lacks keep their ranks but cannot be counted.
    """
    import numpy as np
    import pandas as pd

    columns = ["run", "topic", "doc"]
    if not run_ids or depth < 1:
        return pd.DataFrame({c: np.empty(0, dtype=np.int64) for c in columns})
    ids = ",".join(str(int(r)) for r in run_ids)
    if is_postgres(conn):
        # One index range scan of (run_id, topic_id, eval_rank) per run and topic: reads only
        # the top-K rows instead of scanning every entry.
        sql = (
            "SELECT e.run_id, e.topic_id, e.document_id"
            f" FROM unnest(ARRAY[{ids}]::bigint[]) AS r(id)"
            " CROSS JOIN (SELECT topic_id FROM snapshot_topic"
            f"  WHERE snapshot_id = {int(snapshot_id)}) st"
            " CROSS JOIN LATERAL (SELECT run_id, topic_id, document_id FROM run_entry"
            "  WHERE run_id = r.id AND topic_id = st.topic_id"
            f"  AND eval_rank <= {int(depth)}) e"
        )
    else:
        sql = (
            "SELECT e.run_id, e.topic_id, e.document_id FROM run_entry e"
            f" WHERE e.run_id IN ({ids}) AND e.eval_rank <= {int(depth)}"
        )
    data = int_rows(conn, sql, 3)
    return pd.DataFrame({c: data[:, i] for i, c in enumerate(columns)})


def relevant_ranks(conn: Connection, run_id: int, qrels_set_id: int) -> dict[int, int]:
    """topic.id → 1-based rank of the run's relevant document, for topics where it retrieved one.

    The rank is trec_eval's, not the file's rank column: the stored `eval_rank` (score
    descending, ties broken by document id descending, the entries of documents the snapshot
    lacks counted too). With several relevant documents for a topic, the best-placed one counts.
    """

    query = (
        select(col(RunEntry.topic_id), func.min(col(RunEntry.eval_rank)))
        .join(Judgment, and_(col(Judgment.qrels_set_id) == qrels_set_id,
                             col(Judgment.topic_id) == col(RunEntry.topic_id),
                             col(Judgment.document_id) == col(RunEntry.document_id),
                             col(Judgment.grade) > 0))
        .where(col(RunEntry.run_id) == run_id)
        .group_by(col(RunEntry.topic_id))
    )
    return {int(topic_id): int(rank) for topic_id, rank in conn.execute(query)}
