"""The chosen runs' rankings of a snapshot, read once for the pooling strategies.

Positions follow the pool's tie order (`tcdb.pools.sql.ranked_sql`): trec_eval's stored order,
trectools' `docid-asc`, or the file's rank column. Entries the snapshot lacks keep their
places, as in a depth-k pool, but are not among the documents a strategy can choose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Connection, text

from tcdb.pools.sql import bounds_with, ranked_sql, runs_list
from tcdb.pools.strategies import RunRanking, TopicRanking
from tcdb.queries.runs import RunDict, document_names, places_in, read_runs
from tcdb.sorting import natural_key
from tcdb.storage.bulk import int_rows
from tcdb.storage.db import is_postgres

ALL = 1_000_000_000  # "no depth": every entry of every run (and + 1 stays an integer)


@dataclass(frozen=True)
class Rankings:
    """Per topic (external id) the runs' rankings, in the order of `run_ids`; and the stored
    ids of the topics and documents, to write a pool back."""

    run_ids: list[int]
    topics: dict[str, TopicRanking]
    topic_ids: dict[str, int]
    doc_ids: dict[str, int]

    def topic_order(self) -> list[str]:
        return sorted(self.topics, key=natural_key)



def load_rankings(conn: Connection, snapshot_id: int, run_ids: Sequence[int],
                  tie_order: str, with_unresolved: bool, depth: int | None = None) -> Rankings:
    """The runs' top `depth` (every entry when None) per topic, as `TopicRanking`s."""
    run_ids = list(run_ids)
    k = ALL if depth is None else int(depth)
    bounds = (bounds_with(snapshot_id, run_ids, k, with_unresolved)
              if tie_order == "file-rank" else "")
    ranked = ranked_sql(tie_order, is_postgres(conn), with_unresolved, runs_list(run_ids))
    sql = (f"{bounds}SELECT r.run_id, r.topic_id, r.document_id, r.rn FROM ({ranked}) r "
           "WHERE r.rn <= :depth AND r.document_id IS NOT NULL")
    # integers only, written into the query so that `int_rows` reads it without Row objects
    sql = sql.replace(":snapshot_id", str(int(snapshot_id))).replace(":depth", str(k))
    table = np.asarray(int_rows(conn, sql, 4), dtype=np.int64).reshape(-1, 4)
    return _rankings(conn, snapshot_id, run_ids, table, document_names(conn, snapshot_id))


def load_rankings_and_runs(conn: Connection, snapshot_id: int, run_ids: Sequence[int]
                           ) -> tuple[Rankings, dict[int, RunDict]]:
    """`load_rankings` in trec_eval's order of whole runs without entries the snapshot lacks,
    and the runs as `read_runs` gives them — from one read of the entries, not two: that
    order is the stored `eval_rank`, read beside each entry's score."""
    run_ids = list(run_ids)
    documents = document_names(conn, snapshot_id)
    tables: list[np.ndarray] = []
    runs = dict(read_runs(conn, snapshot_id, run_ids, ranks_into=tables, documents=documents))
    table = (np.concatenate(tables) if tables else np.empty((0, 4), dtype=np.int64))
    return _rankings(conn, snapshot_id, run_ids, table, documents), runs


def _rankings(conn: Connection, snapshot_id: int, run_ids: list[int], table: np.ndarray,
              documents: tuple[np.ndarray, np.ndarray]) -> Rankings:
    """The rankings from a table of (run, topic, document, position) rows in any order and
    the snapshot's documents (`document_names`)."""
    topic_names: dict[int, str] = dict(conn.execute(text(
        "SELECT topic_id, external_id FROM snapshot_topic WHERE snapshot_id = :s"),
        {"s": snapshot_id}).tuples().all())
    keys, names = documents
    position = {r: i for i, r in enumerate(run_ids)}
    table = table[_by_topic_run_position(table)]
    docs = names[places_in(keys, table[:, 2])] if len(table) else names[:0]
    topics: dict[str, TopicRanking] = {}
    used_docs: dict[str, int] = {}
    if len(table):
        change = np.flatnonzero(np.diff(table[:, 1]) != 0) + 1
        starts = np.concatenate(([0], change)).tolist()
        ends = [*starts[1:], len(table)]
        for a, b in zip(starts, ends, strict=True):
            topic = str(topic_names[int(table[a, 1])])
            per_run: list[RunRanking] = [RunRanking(names[:0], np.empty(0, dtype=np.int64))
                                         for _ in run_ids]
            runs = table[a:b, 0]
            cuts = np.flatnonzero(np.diff(runs) != 0) + 1
            for c, d in zip(np.concatenate(([0], cuts)).tolist(),
                            [*cuts.tolist(), b - a], strict=True):
                per_run[position[int(runs[c])]] = RunRanking(docs[a + c:a + d],
                                                             table[a + c:a + d, 3])
            topics[topic] = TopicRanking(topic, tuple(per_run))
        used = np.unique(table[:, 2])  # a document per id, not per entry
        used_docs = dict(zip(names[places_in(keys, used)].tolist(), used.tolist(),
                             strict=True))
    return Rankings(run_ids, topics, {str(n): t for t, n in topic_names.items()}, used_docs)


def _by_topic_run_position(table: np.ndarray) -> np.ndarray:
    """The order of the rows by topic, run and position. Rows read run by run usually come
    sorted by (run, topic, position) already: then a stable sort by topic alone gives it,
    ~10× faster than sorting by three keys."""
    run, topic, position = table[:, 0], table[:, 1], table[:, 3]
    if len(table) > 1:
        d_run, d_topic, d_position = np.diff(run), np.diff(topic), np.diff(position)
        if np.all((d_run > 0) | ((d_run == 0) & ((d_topic > 0)
                                                 | ((d_topic == 0) & (d_position > 0))))):
            return np.argsort(topic, kind="stable")
    return np.lexsort((position, run, topic))
