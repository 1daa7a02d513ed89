"""What changed between two snapshots: set operations on document and topic membership."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Integer, and_, func, select
from sqlalchemy.orm import aliased

from tcdb.catalog import get_snapshot
from tcdb.db import session_scope
from tcdb.schema import Judgment, QrelsKind, QrelsSet, Snapshot, SnapshotDocument, SnapshotTopic


def document_drift(conn: Connection, a: int, b: int) -> dict[str, int]:
    """Documents added / removed / changed / unchanged from snapshot `a` to snapshot `b`.

    A document is the same across snapshots by the collection's identity rule (its key);
    changed means its content hash differs.
    """
    sa_, sb = aliased(SnapshotDocument), aliased(SnapshotDocument)
    n_a = conn.execute(select(func.count()).where(SnapshotDocument.snapshot_id == a)).scalar_one()
    n_b = conn.execute(select(func.count()).where(SnapshotDocument.snapshot_id == b)).scalar_one()
    both, unchanged = conn.execute(
        select(func.count(), func.coalesce(func.sum(
            (sa_.content_id == sb.content_id).cast(Integer)), 0))
        .select_from(sa_)
        .join(sb, and_(sb.document_id == sa_.document_id, sb.snapshot_id == b))
        .where(sa_.snapshot_id == a)
    ).one()
    return {"added": n_b - both, "removed": n_a - both, "changed": both - int(unchanged),
            "unchanged": int(unchanged), "before": n_a, "after": n_b}


def topic_drift(conn: Connection, a: int, b: int) -> dict[str, Any]:
    """Topics added / removed / kept (the core topics of the two snapshots)."""
    ta = dict(conn.execute(select(SnapshotTopic.topic_id, SnapshotTopic.external_id)
                           .where(SnapshotTopic.snapshot_id == a)).tuples().all())
    tb = dict(conn.execute(select(SnapshotTopic.topic_id, SnapshotTopic.external_id)
                           .where(SnapshotTopic.snapshot_id == b)).tuples().all())
    kept = sorted(set(ta) & set(tb))
    renumbered = sum(1 for t in kept if ta[t] != tb[t])
    return {"added": len(set(tb) - set(ta)), "removed": len(set(ta) - set(tb)),
            "kept": len(kept), "renumbered": renumbered,
            "core": [{"before": ta[t], "after": tb[t]} for t in kept]}


def qrels_summary(conn: Connection, snapshot_id: int) -> dict[str, Any]:
    """Judgments per topic in the snapshot's original qrels sets."""
    per_topic = conn.execute(
        select(Judgment.topic_id, func.count(), func.sum((Judgment.grade > 0).cast(Integer)))
        .join(QrelsSet, QrelsSet.id == Judgment.qrels_set_id)
        .where(QrelsSet.snapshot_id == snapshot_id, QrelsSet.kind == QrelsKind.original)
        .group_by(Judgment.topic_id)
    ).all()
    n_topics = len(per_topic)
    judged = sum(r[1] for r in per_topic)
    relevant = sum(int(r[2] or 0) for r in per_topic)
    return {"topics": n_topics, "judgments": judged, "relevant": relevant,
            "judgments_per_topic": judged / n_topics if n_topics else 0.0,
            "relevant_per_topic": relevant / n_topics if n_topics else 0.0}


def snapshot_diff(collection: str, a: str, b: str) -> dict[str, Any]:
    """The `tcdb snapshot diff` report: documents, topics and qrels between two snapshots."""
    with session_scope() as session:
        snap_a = get_snapshot(session, collection, a)
        snap_b = get_snapshot(session, collection, b)
        conn = session.connection()
        topics = topic_drift(conn, snap_a.id, snap_b.id)
        return {
            "collection": collection, "a": a, "b": b,
            "documents": document_drift(conn, snap_a.id, snap_b.id),
            "topics": topics,
            "qrels": {a: qrels_summary(conn, snap_a.id), b: qrels_summary(conn, snap_b.id)},
        }


def list_snapshots(collection: str | None = None) -> list[dict[str, Any]]:
    from tcdb.catalog import get_collection
    from tcdb.schema import Collection

    with session_scope() as session:
        query = (select(Snapshot, Collection.name)
                 .join(Collection, Collection.id == Snapshot.collection_id)
                 .order_by(Collection.name, Snapshot.ordinal, Snapshot.label))
        if collection is not None:
            query = query.where(Snapshot.collection_id == get_collection(session, collection).id)
        return [{
            "collection": name, "label": s.label, "date": s.date, "status": s.status.value,
            "source": s.source, "documents": s.n_documents, "topics": s.n_topics,
            "judgments": s.n_judgments, "with_text": s.with_text, "ordinal": s.ordinal,
            "completed_at": s.completed_at, "error": s.error,
        } for s, name in session.exec(query).all()]
