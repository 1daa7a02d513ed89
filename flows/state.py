"""What the database already holds, read with Core SQL: the flows' "what is new?" questions.

Reads only. Every write goes through the core function the flow wraps.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlmodel import col

from tcdb.operations.database import Database
from tcdb.schema import (
    Collection,
    QrelsSet,
    Run,
    Snapshot,
    SnapshotStatus,
)


def complete_snapshots(db: Database, collection: str) -> set[str]:
    """Labels of the collection's `complete` snapshots (none when the collection is unknown)."""
    query = (
        select(col(Snapshot.label))
        .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
        .where(col(Collection.name) == collection, col(Snapshot.status) == SnapshotStatus.complete)
    )
    with db.engine().connect() as conn:
        return {checksum for checksum in conn.execute(query).scalars() if checksum}


def known_run_checksums(db: Database, collection: str, snapshot: str) -> set[str]:
    """Checksums of the run files already imported on a snapshot: a dropped file seen before."""
    query = (
        select(col(Run.checksum))
        .join(Snapshot, col(Snapshot.id) == col(Run.snapshot_id))
        .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
        .where(col(Collection.name) == collection, col(Snapshot.label) == snapshot,
               col(Run.checksum).is_not(None))
    )
    with db.engine().connect() as conn:
        return {checksum for checksum in conn.execute(query).scalars() if checksum}


def evaluation_targets(
    db: Database,
    collection: str | None = None, snapshot: str | None = None, qrels: str | None = None,
    *, all_qrels: bool = False,
) -> list[tuple[str, str, str]]:
    """(collection, snapshot, qrels set) for complete snapshots that have runs and qrels.

    The combinations an "evaluate what is missing" pass must look at; the core decides which
    (run, qrels, measure) scores are actually missing. Each snapshot's designated original
    qrels set only, unless `qrels` names another or `all_qrels`: pooled, expanded and derived
    sets (leave-out sets, topic subsets) are evaluated when a report or a person asks for them,
    not every hour for every measure.
    """
    has_runs = select(col(Run.id)).where(col(Run.snapshot_id) == col(Snapshot.id)).exists()
    query = (
        select(col(Collection.name), col(Snapshot.label), col(QrelsSet.name))
        .join(Snapshot, col(Snapshot.collection_id) == col(Collection.id))
        .join(QrelsSet, col(QrelsSet.snapshot_id) == col(Snapshot.id))
        .where(col(Snapshot.status) == SnapshotStatus.complete, has_runs)
        .order_by(col(Collection.name), col(Snapshot.ordinal), col(Snapshot.id), col(QrelsSet.id))
    )
    if collection is not None:
        query = query.where(col(Collection.name) == collection)
    if snapshot is not None:
        query = query.where(col(Snapshot.label) == snapshot)
    if qrels is not None:
        query = query.where(col(QrelsSet.name) == qrels)
    elif not all_qrels:
        query = query.where(col(QrelsSet.name) == col(Snapshot.original_qrels))
    with db.engine().connect() as conn:
        return [tuple(row) for row in conn.execute(query).all()]


def snapshot_drift(db: Database, collection: str, label: str) -> dict[str, Any] | None:
    """Documents and topics added / removed / changed since the previous complete snapshot.

    None when the snapshot is the collection's first (or is not complete). "Previous" is the
    complete snapshot just before it in the collection's order (ordinal, then id); the counting
    is `tcdb.drift`'s, the same as `tcdb snapshot diff`.
    """
    from tcdb.queries import document_drift, topic_drift

    with db.engine().connect() as conn:
        snaps = conn.execute(
            select(col(Snapshot.id), col(Snapshot.label))
            .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
            .where(col(Collection.name) == collection,
                   col(Snapshot.status) == SnapshotStatus.complete)
            .order_by(col(Snapshot.ordinal), col(Snapshot.id))
        ).all()
        labels = [row.label for row in snaps]
        if label not in labels or labels.index(label) == 0:
            return None
        index = labels.index(label)
        before, after = snaps[index - 1], snaps[index]
        topics = topic_drift(conn, before.id, after.id)
        topics.pop("core", None)
        return {"previous": before.label, "documents": document_drift(conn, before.id, after.id),
                "topics": topics}
