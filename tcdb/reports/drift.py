"""`tcdb snapshot diff`: what changed between two snapshots — documents, topics and qrels."""

from __future__ import annotations

from tcdb.catalog.collections import get_snapshot
from tcdb.queries import qrels_summary, topic_drift
from tcdb.queries.churn import churn_rows, drift_by_source, drift_counts
from tcdb.reports.results import SnapshotDiff
from tcdb.storage.db import session_scope


def snapshot_diff(collection: str, a: str, b: str) -> SnapshotDiff:
    """The `tcdb snapshot diff` report: documents, topics and qrels between two snapshots."""
    with session_scope() as session:
        snap_a = get_snapshot(session, collection, a)
        snap_b = get_snapshot(session, collection, b)
        conn = session.connection()
        topics = topic_drift(conn, snap_a.pk, snap_b.pk)
        churn = churn_rows(conn, snap_a.pk, snap_b.pk)  # kept by the ingest, or counted once
        return {
            "collection": collection, "a": a, "b": b,
            "documents": drift_counts(churn),
            "sources": drift_by_source(churn),
            "topics": topics,
            "qrels": {a: qrels_summary(conn, snap_a.pk), b: qrels_summary(conn, snap_b.pk)},
        }
