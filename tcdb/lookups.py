"""Resolve the ids people write (external doc and topic ids, measure names) to integer keys."""

from __future__ import annotations

from sqlalchemy import Connection, select
from sqlmodel import Session

from tcdb.schema import Measure, SnapshotDocument, SnapshotTopic


def _conn(bind: Connection | Session) -> Connection:
    return bind.connection() if isinstance(bind, Session) else bind


def document_ids(bind: Connection | Session, snapshot_id: int) -> dict[str, int]:
    """External document id → document.id for one snapshot."""
    rows = _conn(bind).execute(
        select(SnapshotDocument.external_id, SnapshotDocument.document_id).where(
            SnapshotDocument.snapshot_id == snapshot_id
        )
    )
    return dict(rows.tuples().all())


def topic_ids(bind: Connection | Session, snapshot_id: int) -> dict[str, int]:
    """External topic id → topic.id for one snapshot."""
    rows = _conn(bind).execute(
        select(SnapshotTopic.external_id, SnapshotTopic.topic_id).where(
            SnapshotTopic.snapshot_id == snapshot_id
        )
    )
    return dict(rows.tuples().all())


def measure_id(session: Session, name: str) -> int:
    """The id of a measure by its ir_measures name, created on first use."""
    existing = session.exec(select(Measure.id).where(Measure.name == name)).first()
    if existing is not None:
        return existing[0]
    measure = Measure(name=name)
    session.add(measure)
    session.flush()
    assert measure.id is not None
    return measure.id
