"""`tcdb snapshot diff`: what changed between two snapshots — documents, topics and qrels."""

from __future__ import annotations

from tcdb.catalog import get_snapshot
from tcdb.db import session_scope
from tcdb.queries import document_drift, document_drift_by_source, qrels_summary, topic_drift
from tcdb.reports.results import SnapshotDiff


def snapshot_diff(collection: str, a: str, b: str) -> SnapshotDiff:
    """The `tcdb snapshot diff` report: documents, topics and qrels between two snapshots."""
    with session_scope() as session:
        snap_a = get_snapshot(session, collection, a)
        snap_b = get_snapshot(session, collection, b)
        conn = session.connection()
        topics = topic_drift(conn, snap_a.pk, snap_b.pk)
        return {
            "collection": collection, "a": a, "b": b,
            "documents": document_drift(conn, snap_a.pk, snap_b.pk),
            "sources": document_drift_by_source(conn, snap_a.pk, snap_b.pk),
            "topics": topics,
            "qrels": {a: qrels_summary(conn, snap_a.pk), b: qrels_summary(conn, snap_b.pk)},
        }
