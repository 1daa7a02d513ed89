"""Qrels sets: named, immutable sets of judgments of one snapshot.

`store_qrels` is the one writer every path uses — a snapshot's original qrels at ingest, a
later judgment file (`tcdb qrels import`), pooled and expanded sets from assessment, derived
sets from leave-one-group-out — so validation (topic and document in the snapshot, grade on
the collection's scale, one grade per document) is the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, select
from sqlmodel import Session

from tcdb.catalog import get_collection, get_snapshot
from tcdb.collections.records import QrelRecord
from tcdb.db import bulk_insert, session_scope
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.lookups import document_ids_of, topic_ids
from tcdb.schema import (
    Collection,
    Judgment,
    QrelsKind,
    QrelsSet,
    Snapshot,
    SnapshotDocument,
    SnapshotTopic,
)

if TYPE_CHECKING:
    import pandas as pd


def store_qrels(
    session: Session,
    snapshot: Snapshot,
    name: str,
    kind: QrelsKind | str,
    records: Iterable[QrelRecord],
    *,
    parent_id: int | None = None,
    second_parent_id: int | None = None,
    assessor: str | None = None,
    method: str | None = None,
    description: str | None = None,
    source: str | None = None,
    checksum: str | None = None,
    doc_ids: dict[str, int] | None = None,
    top_ids: dict[str, int] | None = None,
) -> QrelsSet:
    """Validate and write a new qrels set inside the caller's transaction.

    Every judgment must name a topic and a document of the snapshot and a grade on the
    collection's scale; the same document judged twice for a topic is an error, even with the
    same grade. Nothing is written unless every record passes.
    """
    assert snapshot.id is not None
    existing = session.exec(select(QrelsSet.id).where(
        QrelsSet.snapshot_id == snapshot.id, QrelsSet.name == name)).first()
    if existing is not None:
        raise ConflictError(f"snapshot {snapshot.label!r} already has a qrels set {name!r}; "
                            "qrels sets are immutable: choose another name")
    collection = session.get(Collection, snapshot.collection_id)
    assert collection is not None
    if doc_ids is None:
        records = list(records)
        doc_ids = document_ids_of(session, snapshot.id, (r.doc_id for r in records))
    docs = doc_ids
    topics = top_ids if top_ids is not None else topic_ids(session, snapshot.id)
    rows: dict[tuple[int, int], int] = {}
    lines: dict[tuple[int, int], tuple[str | None, int | None]] = {}
    for record in records:
        topic_id = topics.get(record.topic_id)
        if topic_id is None:
            raise InputError(record.file, record.line,
                             f"topic {record.topic_id!r} is not in snapshot {snapshot.label!r}")
        document_id = docs.get(record.doc_id)
        if document_id is None:
            raise InputError(record.file, record.line,
                             f"document {record.doc_id!r} is not in snapshot {snapshot.label!r}")
        _check_grade(collection, record)
        key = (topic_id, document_id)
        if key in rows:
            first = lines[key]
            where = f" (first at line {first[1]})" if first[1] is not None else ""
            raise InputError(record.file, record.line,
                             f"document {record.doc_id!r} judged twice for topic "
                             f"{record.topic_id!r}{where}")
        rows[key] = record.grade
        lines[key] = (record.file, record.line)
    qrels = QrelsSet(snapshot_id=snapshot.id, name=name, kind=QrelsKind(kind), parent_id=parent_id,
                     second_parent_id=second_parent_id, assessor=assessor, method=method,
                     description=description, source=source, checksum=checksum,
                     n_judgments=len(rows))
    session.add(qrels)
    session.flush()
    bulk_insert(session, "judgment", ["qrels_set_id", "topic_id", "document_id", "grade"],
                ((qrels.id, t, d, g) for (t, d), g in rows.items()))
    return qrels


def _check_grade(collection: Collection, record: QrelRecord) -> None:
    low, high = collection.grade_min, collection.grade_max
    if (low is not None and record.grade < low) or (high is not None and record.grade > high):
        scale = f"[{'' if low is None else low}, {'' if high is None else high}]"
        raise InputError(record.file, record.line,
                         f"grade {record.grade} is outside the collection's scale {scale}")


def import_qrels(
    collection: str,
    snapshot: str,
    name: str,
    path: Path | str,
    kind: QrelsKind | str = QrelsKind.original,
    description: str | None = None,
) -> dict[str, Any]:
    """Import a further qrels file of a snapshot; the same file again under the name is a no-op."""
    from tcdb.collections.qrels import read_qrels
    from tcdb.collections.runs import checksum_file

    if QrelsKind(kind) not in (QrelsKind.original, QrelsKind.derived):
        raise InputError(None, None, "imported qrels are of kind original or derived")
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"qrels file not found: {path}")
    checksum = checksum_file(path)
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        existing = session.exec(select(QrelsSet).where(
            QrelsSet.snapshot_id == snap.id, QrelsSet.name == name)).first()
        if existing is not None and existing[0].checksum == checksum:
            return {"name": name, "status": "unchanged", "n_judgments": existing[0].n_judgments}
        qrels = store_qrels(session, snap, name, kind, read_qrels(path), method="file",
                            description=description, source=str(path.resolve()),
                            checksum=checksum)
        return {"name": name, "status": "imported", "n_judgments": qrels.n_judgments}


def get_qrels_set(session: Session, snapshot: Snapshot, name: str) -> QrelsSet:
    found = session.exec(select(QrelsSet).where(
        QrelsSet.snapshot_id == snapshot.id, QrelsSet.name == name)).first()
    if found is None:
        names = session.exec(select(QrelsSet.name).where(
            QrelsSet.snapshot_id == snapshot.id).order_by(QrelsSet.name)).all()
        known = ", ".join(n[0] for n in names) or "none"
        raise NotFoundError(f"no qrels set {name!r} in snapshot {snapshot.label!r} "
                            f"(known: {known})")
    return found[0]


def qrels_frame(conn: Connection | Session, qrels_set_id: int) -> pd.DataFrame:
    """A qrels set as a DataFrame of external ids: topic, doc, grade."""
    import pandas as pd

    connection = conn.connection() if isinstance(conn, Session) else conn
    qrels = connection.execute(select(QrelsSet.snapshot_id).where(
        QrelsSet.id == qrels_set_id)).scalar_one()
    query = (
        select(SnapshotTopic.external_id.label("topic"), SnapshotDocument.external_id.label("doc"),
               Judgment.grade)
        .select_from(Judgment)
        .join(SnapshotTopic, (SnapshotTopic.topic_id == Judgment.topic_id)
              & (SnapshotTopic.snapshot_id == qrels))
        .join(SnapshotDocument, (SnapshotDocument.document_id == Judgment.document_id)
              & (SnapshotDocument.snapshot_id == qrels))
        .where(Judgment.qrels_set_id == qrels_set_id)
    )
    rows = connection.execute(query).all()
    return pd.DataFrame(rows, columns=["topic", "doc", "grade"])


def list_qrels(collection: str | None = None, snapshot: str | None = None) -> list[dict[str, Any]]:
    """Every qrels set with its kind, parents, provenance and size."""
    with session_scope() as session:
        query = (select(QrelsSet, Snapshot.label, Collection.name)
                 .join(Snapshot, Snapshot.id == QrelsSet.snapshot_id)
                 .join(Collection, Collection.id == Snapshot.collection_id)
                 .order_by(Collection.name, Snapshot.ordinal, QrelsSet.id))
        if collection is not None:
            query = query.where(Collection.id == get_collection(session, collection).id)
        if snapshot is not None:
            query = query.where(Snapshot.label == snapshot)
        sets = session.exec(query).all()
        names = {q.id: q.name for q, _, _ in sets}
        topics = dict(session.exec(
            select(Judgment.qrels_set_id, func.count(func.distinct(Judgment.topic_id)))
            .group_by(Judgment.qrels_set_id)).all())
        return [{
            "collection": coll, "snapshot": label, "name": q.name, "kind": q.kind.value,
            "n_judgments": q.n_judgments, "n_topics": topics.get(q.id, 0),
            "parent": names.get(q.parent_id) if q.parent_id else None,
            "second_parent": names.get(q.second_parent_id) if q.second_parent_id else None,
            "assessor": q.assessor, "method": q.method, "description": q.description,
            "created_at": q.created_at,
        } for q, label, coll in sets]
