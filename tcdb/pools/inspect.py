"""Looking at pools: find one by name, list them (`pools`), show one in detail (`pool_show`).
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import model_validator
from sqlalchemy import Connection, func, select, text
from sqlmodel import Session, col

from tcdb.errors import FieldError, NotFoundError, some
from tcdb.operations import Database, Name, Request, argument, operation, option
from tcdb.pools.results import (
    PoolRunContribution,
    PoolShowResult,
    PoolsResult,
    PoolSummary,
    PoolTopic,
    SizeStats,
)
from tcdb.pools.sql import bounds_with, ranked_sql, runs_list
from tcdb.schema import Collection, Pool, PoolEntry, PoolRun, QrelsSet, Run, Snapshot
from tcdb.schema.base import stored_id
from tcdb.sorting import natural_key
from tcdb.storage.db import is_postgres


def pool_collection() -> Any:
    """The `collection` field of a request naming a pool."""
    return option(None, help="The pool's collection, when the name alone is ambiguous.")


def pool_snapshot() -> Any:
    """The `snapshot` field of a request naming a pool."""
    return option(None, help="The pool's snapshot, when the name alone is ambiguous.")


class PoolRef(Request):
    """A pool by name; names are unique per snapshot, so a name two snapshots share needs
    its collection and snapshot."""

    name: Name = argument(help="Pool name.")
    collection: Name | None = pool_collection()
    snapshot: Name | None = pool_snapshot()


def find_pool(session: Session, name: str, snapshot_id: int) -> Pool | None:
    """The snapshot's pool of that name (names are unique per snapshot)."""
    return session.execute(select(Pool).where(
        col(Pool.name) == name, col(Pool.snapshot_id) == snapshot_id)).scalar_one_or_none()


def get_pool(session: Session, name: str, collection: str | None = None,
             snapshot: str | None = None) -> Pool:
    """A pool by name, in `collection` / `snapshot` when given; a name two snapshots share
    needs them. NotFoundError names the pools that exist."""
    query = (select(Pool, col(Collection.name), col(Snapshot.label))
             .join(Snapshot, col(Snapshot.id) == col(Pool.snapshot_id))
             .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
             .order_by(col(Collection.name), col(Snapshot.ordinal)))
    if collection is not None:
        query = query.where(col(Collection.name) == collection)
    if snapshot is not None:
        query = query.where(col(Snapshot.label) == snapshot)
    found = session.execute(query.where(col(Pool.name) == name)).all()
    if len(found) == 1:
        return found[0][0]
    if found:
        where = ", ".join(f"{c}/{s}" for _, c, s in found)
        raise FieldError("collection/snapshot", f"pools named {name!r} exist in {where}: "
                         "say which with its collection and snapshot")
    known = sorted({row[0].name for row in session.execute(query)}, key=natural_key)
    scope = "/".join(x for x in (collection, snapshot) if x)
    raise NotFoundError(f"no pool {name!r}" + (f" in {scope}" if scope else "")
                        + f" (known: {some(known) or 'none built yet'})")


def pool_run_ids(session: Session, pool_id: int) -> list[int]:
    return sorted(session.execute(select(col(PoolRun.run_id)).where(
        col(PoolRun.pool_id) == pool_id)).scalars().all())


def topic_sizes(conn: Connection, pool_id: int) -> dict[int, int]:
    rows = conn.execute(select(col(PoolEntry.topic_id), func.count()).where(
        col(PoolEntry.pool_id) == pool_id).group_by(col(PoolEntry.topic_id)))
    return dict(rows.tuples().all())


def size_stats(sizes: dict[int, int]) -> SizeStats:
    values = list(sizes.values())
    if not values:
        return SizeStats(min=0, max=0, mean=0.0, total=0)
    return SizeStats(min=min(values), max=max(values), mean=sum(values) / len(values),
                     total=sum(values))


def count_judged(conn: Connection, pool: Pool) -> int:
    """Pooled documents that have a grade in the pool's `pooled` qrels set."""
    if pool.pooled_qrels_id is None:
        return 0
    sql = text("SELECT COUNT(*) FROM pool_entry pe JOIN judgment j ON j.qrels_set_id = :q "
               "AND j.topic_id = pe.topic_id AND j.document_id = pe.document_id "
               "WHERE pe.pool_id = :p")
    return int(conn.execute(sql, {"q": pool.pooled_qrels_id, "p": pool.id}).scalar_one())


class PoolsRequest(Request):
    """Which pools to list."""

    collection: Name | None = argument(None, help="Only this collection.")
    snapshot: Name | None = argument(None, help="Only this snapshot (of the collection).")

    @model_validator(mode="after")
    def _snapshot_of_a_collection(self) -> Self:
        if self.snapshot is not None and self.collection is None:
            raise FieldError("snapshot", "name the collection of the snapshot too")
        return self


@operation("pools", command="pool list")
def pools(request: PoolsRequest, db: Database) -> PoolsResult:
    """List pools: size per topic, status and judged fraction."""
    with db.session() as session:
        query = (select(Pool)
                 .join(Snapshot, col(Snapshot.id) == col(Pool.snapshot_id))
                 .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
                 .order_by(col(Collection.name), col(Snapshot.ordinal), col(Pool.name)))
        if request.collection is not None:
            from tcdb.catalog.collections import get_collection

            query = query.where(
                col(Collection.id) == get_collection(session, request.collection).id)
        if request.snapshot is not None:
            from tcdb.catalog.collections import get_snapshot

            query = query.where(col(Snapshot.id) == get_snapshot(
                session, request.collection or "", request.snapshot).pk)
        return PoolsResult(pools=[_pool_row(session, pool)
                                  for pool in session.execute(query).scalars().all()])


class PoolShowRequest(PoolRef):
    """Which pool to show."""


@operation("pool_show", command="pool show")
def pool_show(request: PoolShowRequest, db: Database) -> PoolShowResult:
    """Show a pool: sizes per topic, each run's unique documents, judged fraction.

    A run's unique documents are those of the pool that no other chosen run retrieved in its
    top k — recomputed here with the same window as the build.
    """
    with db.session() as session:
        pool = get_pool(session, request.name, request.collection, request.snapshot)
        conn = session.connection()
        summary = _pool_row(session, pool)
        topics: dict[int, str] = dict(conn.execute(text(
            "SELECT topic_id, external_id FROM snapshot_topic WHERE snapshot_id = :s"),
            {"s": pool.snapshot_id}).tuples().all())
        judged_sql = ("SELECT pe.topic_id, COUNT(*), COUNT(j.grade) FROM pool_entry pe "
                      "LEFT JOIN judgment j ON j.qrels_set_id = :q AND j.topic_id = pe.topic_id "
                      "AND j.document_id = pe.document_id WHERE pe.pool_id = :p "
                      "GROUP BY pe.topic_id")
        per_topic = [
            PoolTopic(topic=topics.get(t, str(t)), n_documents=int(n), n_judged=int(j),
                      n_unjudged=int(n) - int(j))
            for t, n, j in conn.execute(text(judged_sql), {
                "q": pool.pooled_qrels_id or -1, "p": pool.id}).tuples().all()
        ]
        per_topic.sort(key=lambda row: natural_key(row.topic))
        runs = _unique_per_run(conn, pool)
        return PoolShowResult(**summary.model_dump(), per_topic=per_topic, runs=runs,
                              description=pool.description,
                              only_new_runs=bool(runs) and not any(r.contributed for r in runs))


def _pool_row(session: Session, pool: Pool) -> PoolSummary:
    """A pool's parameters, sizes, status and judged fraction, inside an open session."""
    snap = session.get(Snapshot, pool.snapshot_id)
    assert snap is not None
    coll = session.get(Collection, snap.collection_id)
    assert coll is not None
    conn = session.connection()
    sizes = topic_sizes(conn, pool.pk)
    judged = count_judged(conn, pool)
    names = dict(conn.execute(select(col(QrelsSet.id), col(QrelsSet.name)).where(
        col(QrelsSet.snapshot_id) == snap.id)).tuples().all())
    return PoolSummary(
        name=pool.name, collection=coll.name, snapshot=snap.label, depth=pool.depth,
        tie_order=pool.tie_order, max_per_topic=pool.max_per_topic,
        exclude_judged=names.get(pool.base_qrels_id) if pool.base_qrels_id else None,
        strategy=pool.parameters or pool.method, budget=pool.budget,
        budget_per_topic=pool.budget_per_topic,
        pooled_qrels=names.get(pool.pooled_qrels_id) if pool.pooled_qrels_id else None,
        n_runs=len(pool_run_ids(session, pool.pk)), status=pool.status.value,
        n_documents=pool.n_documents, n_topics=len(sizes), size=size_stats(sizes),
        n_judged=judged,
        judged_fraction=judged / pool.n_documents if pool.n_documents else 0.0,
        created_at=pool.created_at, exported_at=pool.exported_at)


def _unique_per_run(conn: Connection, pool: Pool) -> list[PoolRunContribution]:
    """Per chosen run: pooled documents in its top k, and those no other chosen run had."""
    runs = conn.execute(select(col(Run.id), col(Run.n_unresolved))
                        .join(PoolRun, col(PoolRun.run_id) == col(Run.id))
                        .where(col(PoolRun.pool_id) == pool.id)).tuples().all()
    run_ids = [stored_id(r) for r, _ in runs]
    with_unresolved = any(n for _, n in runs)
    # The file-rank bounds as a CTE, not a temporary table: `show` reads, also in the
    # dashboard's read-only transaction.
    bounds = (bounds_with(pool.snapshot_id, run_ids, pool.depth, with_unresolved)
              if pool.tie_order == "file-rank" else "")
    ranked = ranked_sql(pool.tie_order, is_postgres(conn), with_unresolved,
                        runs_list(run_ids))
    # CROSS JOIN: SQLite joins in the order written, each run's top k first, then the pool
    # entry by its key (a plain JOIN scanned the whole pool per run: 27× slower at 134 runs).
    sql = (
        f"{bounds}SELECT r.run_id, COUNT(*), SUM(CASE WHEN pe.n_runs = 1 THEN 1 ELSE 0 END) "
        f"FROM ({ranked}) r CROSS JOIN pool_entry pe WHERE pe.pool_id = :pool_id "
        "AND pe.topic_id = r.topic_id AND pe.document_id = r.document_id "
        "AND r.rn <= :depth GROUP BY r.run_id"
    )
    counts = {run_id: (int(n), int(u or 0)) for run_id, n, u in conn.execute(text(sql), {
        "pool_id": pool.id, "snapshot_id": pool.snapshot_id, "depth": pool.depth}).tuples()}
    tags = conn.execute(select(col(Run.id), col(Run.tag), col(Run.contributed))
                        .join(PoolRun, col(PoolRun.run_id) == col(Run.id))
                        .where(col(PoolRun.pool_id) == pool.id)
                        .order_by(col(Run.tag))).tuples().all()
    return [PoolRunContribution(run=tag, n_pooled=counts.get(run_id, (0, 0))[0],
                                unique=counts.get(run_id, (0, 0))[1],
                                contributed=bool(contributed))
            for run_id, tag, contributed in tags]


def pool_documents(db: Database, name: str, collection: str | None = None,
                   snapshot: str | None = None) -> dict[str, set[str]]:
    """The pool as external ids: topic → the set of documents to judge (tests, notebooks)."""
    with db.session() as session:
        pool = get_pool(session, name, collection, snapshot)
        sql = text(
            "SELECT st.external_id, sd.external_id FROM pool_entry pe "
            "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
            "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = pe.document_id "
            "WHERE pe.pool_id = :p")
        result: dict[str, set[str]] = {}
        for topic, doc in session.connection().execute(
                sql, {"s": pool.snapshot_id, "p": pool.id}).tuples():
            result.setdefault(topic, set()).add(doc)
        return result
