"""What changed between two snapshots: set operations on document and topic membership, and
the judgments of a snapshot's qrels.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, select, text
from sqlmodel import col

from tcdb.queries.churn import UNLABELLED, churn_rows, drift_counts
from tcdb.schema import QrelsSet, Snapshot, SnapshotTopic
from tcdb.sorting import natural_key


def document_drift(conn: Connection, a: int, b: int) -> dict[str, int]:
    """Documents added / removed / changed / unchanged from snapshot `a` to snapshot `b`.

    A document is the same across snapshots by the collection's identity rule (its key);
    changed means its content hash differs. From the pair's churn rows (`tcdb.queries.churn`).
    """
    return drift_counts(churn_rows(conn, a, b))


def documents_per_source(conn: Connection, snapshot_id: int) -> dict[str, int]:
    """Documents of a snapshot per source label (`unlabelled` for none)."""
    rows = conn.execute(text(
        "SELECT COALESCE(source_label, ''), COUNT(*) FROM snapshot_document "
        "WHERE snapshot_id = :s GROUP BY COALESCE(source_label, '')"), {"s": snapshot_id})
    return dict(sorted((label or UNLABELLED, int(n)) for label, n in rows))


def topic_drift(conn: Connection, a: int, b: int) -> dict[str, Any]:
    """Topics added / removed / kept (the core topics of the two snapshots), and per snapshot
    the ambiguous ones: a query text repeated within it matches no topic of the other."""
    def topics(snapshot: int) -> tuple[dict[int, str], int]:
        rows = conn.execute(select(col(SnapshotTopic.topic_id), col(SnapshotTopic.external_id),
                                   col(SnapshotTopic.ambiguous))
                            .where(col(SnapshotTopic.snapshot_id) == snapshot)).all()
        return {t: ext for t, ext, _ in rows}, sum(1 for *_, ambiguous in rows if ambiguous)

    (ta, ambiguous_a), (tb, ambiguous_b) = topics(a), topics(b)
    kept = sorted(set(ta) & set(tb), key=lambda t: natural_key(tb[t]))
    renumbered = sum(1 for t in kept if ta[t] != tb[t])
    return {"added": len(set(tb) - set(ta)), "removed": len(set(ta) - set(tb)),
            "kept": len(kept), "renumbered": renumbered,
            "ambiguous": {"before": ambiguous_a, "after": ambiguous_b},
            "core": [{"before": ta[t], "after": tb[t]} for t in kept]}


def qrels_summary(conn: Connection, snapshot_id: int) -> dict[str, Any]:
    """Judgments per topic in the snapshot's designated original qrels set (none: zeros).

    One set, the one `snapshot list` counts: adding every set of kind `original` counted
    TREC-COVID's cumulative rounds twice over.
    """
    qrels_id = conn.execute(
        select(col(QrelsSet.id)).join(Snapshot, col(Snapshot.id) == col(QrelsSet.snapshot_id))
        .where(col(QrelsSet.snapshot_id) == snapshot_id,
               col(QrelsSet.name) == col(Snapshot.original_qrels))).scalar_one_or_none()
    per_topic = [] if qrels_id is None else conn.execute(text(
        "SELECT topic_id, COUNT(*), SUM(CASE WHEN grade > 0 THEN 1 ELSE 0 END) FROM ("
        "SELECT topic_id, grade FROM judgment WHERE qrels_set_id = :q UNION ALL "
        "SELECT topic_id, grade FROM judgment_unresolved WHERE qrels_set_id = :q) j "
        "GROUP BY topic_id"), {"q": qrels_id}).all()
    n_topics = len(per_topic)
    judged = sum(int(r[1]) for r in per_topic)
    relevant = sum(int(r[2] or 0) for r in per_topic)
    return {"topics": n_topics, "judgments": judged, "relevant": relevant,
            "judgments_per_topic": judged / n_topics if n_topics else 0.0,
            "relevant_per_topic": relevant / n_topics if n_topics else 0.0}


def document_sources(conn: Connection, snapshot_id: int) -> Any:
    """The snapshot's labelled documents as a DataFrame `[doc, external, source, twin]`:
    document id, external id, source label, and the document id of its twin (the original it
    was rewritten from; -1 for none)."""
    import pandas as pd

    rows = conn.execute(text(
        "SELECT d.document_id, d.external_id, d.source_label, COALESCE(o.document_id, -1) "
        "FROM snapshot_document d LEFT JOIN snapshot_document o "
        "ON o.snapshot_id = d.snapshot_id AND o.external_id = d.twin_of "
        "WHERE d.snapshot_id = :s AND d.source_label IS NOT NULL"), {"s": snapshot_id}).all()
    frame = pd.DataFrame(rows, columns=["doc", "external", "source", "twin"])
    return frame.astype({"doc": "int64", "twin": "int64"})
