"""What the database already holds, read with Core SQL: the flows' "what is new?" questions.

Reads only. Every write goes through the core function the flow wraps.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from tcdb.db import get_engine
from tcdb.schema import (
    Collection,
    QrelsSet,
    Run,
    Snapshot,
    SnapshotStatus,
)


def complete_snapshots(collection: str) -> set[str]:
    """Labels of the collection's `complete` snapshots (none when the collection is unknown)."""
    query = (
        select(Snapshot.label)
        .join(Collection, Collection.id == Snapshot.collection_id)
        .where(Collection.name == collection, Snapshot.status == SnapshotStatus.complete)
    )
    with get_engine().connect() as conn:
        return set(conn.execute(query).scalars())


def known_run_checksums(collection: str, snapshot: str) -> set[str]:
    """Checksums of the run files already imported on a snapshot: a dropped file seen before."""
    query = (
        select(Run.checksum)
        .join(Snapshot, Snapshot.id == Run.snapshot_id)
        .join(Collection, Collection.id == Snapshot.collection_id)
        .where(Collection.name == collection, Snapshot.label == snapshot,
               Run.checksum.is_not(None))
    )
    with get_engine().connect() as conn:
        return set(conn.execute(query).scalars())


def evaluation_targets(
    collection: str | None = None, snapshot: str | None = None, qrels: str | None = None
) -> list[tuple[str, str, str]]:
    """(collection, snapshot, qrels set) for complete snapshots that have runs and qrels.

    The combinations an "evaluate what is missing" pass must look at; the core decides which
    (run, qrels, measure) scores are actually missing.
    """
    has_runs = select(Run.id).where(Run.snapshot_id == Snapshot.id).exists()
    query = (
        select(Collection.name, Snapshot.label, QrelsSet.name)
        .join(Snapshot, Snapshot.collection_id == Collection.id)
        .join(QrelsSet, QrelsSet.snapshot_id == Snapshot.id)
        .where(Snapshot.status == SnapshotStatus.complete, has_runs)
        .order_by(Collection.name, Snapshot.ordinal, Snapshot.id, QrelsSet.id)
    )
    if collection is not None:
        query = query.where(Collection.name == collection)
    if snapshot is not None:
        query = query.where(Snapshot.label == snapshot)
    if qrels is not None:
        query = query.where(QrelsSet.name == qrels)
    with get_engine().connect() as conn:
        return [tuple(row) for row in conn.execute(query).all()]  # type: ignore[misc]


def snapshot_drift(collection: str, label: str) -> dict[str, Any] | None:
    """Documents and topics added / removed / changed since the previous complete snapshot.

    None when the snapshot is the collection's first (or is not complete). "Previous" is the
    complete snapshot just before it in the collection's order (ordinal, then id); the counting
    is `tcdb.drift`'s, the same as `tcdb snapshot diff`.
    """
    from tcdb.drift import document_drift, topic_drift

    with get_engine().connect() as conn:
        snaps = conn.execute(
            select(Snapshot.id, Snapshot.label)
            .join(Collection, Collection.id == Snapshot.collection_id)
            .where(Collection.name == collection, Snapshot.status == SnapshotStatus.complete)
            .order_by(Snapshot.ordinal, Snapshot.id)
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
