"""What changed between snapshots: documents, topics and qrels.

`snapshot_diff` (`tcdb snapshot diff`) compares two snapshots; `drift` (`tcdb snapshot drift`)
follows a collection over time, every consecutive pair of its snapshots, with the original
qrels of each and the topics in all of them — what the dashboard's drift page shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, field_validator

from tcdb.operations import Database, Name, Names, Request, Result, argument, operation
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.ranking_agreement import two_snapshots

if TYPE_CHECKING:
    import pandas as pd
    from sqlmodel import Session


class DocumentDrift(BaseModel):
    """Documents by the collection's identity: added, removed, changed (new text), unchanged,
    and the two snapshots' sizes."""

    added: int
    removed: int
    changed: int
    unchanged: int
    before: int
    after: int


class SourceDrift(DocumentDrift):
    """The same counts for the documents of one source label (human, llm, …)."""

    relabelled: int  # documents of both snapshots whose label changed


class AmbiguousTopics(BaseModel):
    """Topics whose query text repeats within a snapshot: they match no topic of the other."""

    before: int
    after: int


class TopicPair(BaseModel):
    before: str  # external id in the earlier snapshot
    after: str  # … and in the later one


class TopicDrift(BaseModel):
    added: int
    removed: int
    kept: int
    renumbered: int
    ambiguous: AmbiguousTopics
    core: list[TopicPair]


class QrelsSummary(BaseModel):
    """A snapshot's designated original qrels set: judged topics, judgments, relevant ones."""

    topics: int
    judgments: int
    relevant: int
    judgments_per_topic: float
    relevant_per_topic: float


class SnapshotDiffRequest(Request):
    """Which collection and which two snapshots."""

    collection: Name = argument(help="Collection name.")
    snapshots: Names = argument(help="The earlier snapshot, then the later one.",
                                 metavar="A B")

    @field_validator("snapshots")
    @classmethod
    def _two(cls, labels: list[str]) -> list[str]:
        return list(two_snapshots(labels))


class SnapshotDiffResult(Result):
    """Documents, topics and qrels between two snapshots."""

    collection: str
    a: str
    b: str
    documents: DocumentDrift
    # per source label (human, llm, …): the same counts; empty when no document is labelled
    sources: dict[str, SourceDrift]
    topics: TopicDrift
    qrels: dict[str, QrelsSummary]
    lineage: Lineage | None = None  # the collection and each snapshot's original qrels

    def to_frame(self) -> pd.DataFrame:
        """One row per kind of change: `what` (documents, topics, or a source label), `kind`
        (added, removed, changed, unchanged, kept, renumbered, relabelled), `count`."""
        import pandas as pd

        rows = [("documents", kind, getattr(self.documents, kind))
                for kind in ("added", "removed", "changed", "unchanged")]
        rows += [(label, kind, getattr(counts, kind)) for label, counts in self.sources.items()
                 for kind in ("added", "removed", "changed", "unchanged", "relabelled")]
        rows += [("topics", kind, getattr(self.topics, kind))
                 for kind in ("added", "removed", "kept", "renumbered")]
        frame = pd.DataFrame(rows, columns=["what", "kind", "count"])
        frame.insert(0, "b", self.b)
        frame.insert(0, "a", self.a)
        return frame


def original_lineage(db: Database, session: Session, collection: str, labels: list[str]) -> Lineage:
    """The lineage of figures read from `labels`' designated original qrels (none: no qrels)."""
    from tcdb.catalog.collections import get_snapshot

    qrels = [(label, str(snap.original_qrels)) for label in labels
             if (snap := get_snapshot(session, collection, label)).original_qrels]
    return lineage_of(db, collection, qrels=qrels, session=session)


def diff_of(session: Session, collection: str, a: str, b: str) -> SnapshotDiffResult:
    """`snapshot_diff` in an open session (`drift` diffs many pairs in one)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import qrels_summary, topic_drift
    from tcdb.queries.churn import churn_rows, drift_by_source, drift_counts

    snap_a = get_snapshot(session, collection, a)
    snap_b = get_snapshot(session, collection, b)
    conn = session.connection()
    topics = topic_drift(conn, snap_a.pk, snap_b.pk)
    churn = churn_rows(conn, snap_a.pk, snap_b.pk)  # kept by the ingest, or counted once
    return SnapshotDiffResult(
        collection=collection, a=a, b=b, documents=DocumentDrift(**drift_counts(churn)),
        sources={label: SourceDrift(**c) for label, c in drift_by_source(churn).items()},
        topics=TopicDrift(**topics),
        qrels={a: QrelsSummary(**qrels_summary(conn, snap_a.pk)),
               b: QrelsSummary(**qrels_summary(conn, snap_b.pk))})


@operation("snapshot_diff", command="snapshot diff")
def snapshot_diff(request: SnapshotDiffRequest, db: Database) -> SnapshotDiffResult:
    """Documents added / removed / changed / unchanged, topics added / removed / kept.

    Why by identity: a document renamed but kept by URL (or a topic re-numbered but kept by
    its text) is the same one, so only real change is counted.
    """
    a, b = request.snapshots
    with db.session() as session:
        diff = diff_of(session, request.collection, a, b)
        diff.lineage = original_lineage(db, session, request.collection, [a, b])
        return diff


def complete_labels(session: Session, collection: str) -> list[str]:
    """The collection's complete snapshots, in time order (the default of the reports)."""
    from sqlalchemy import select
    from sqlmodel import col

    from tcdb.catalog.collections import get_collection
    from tcdb.schema import Snapshot
    from tcdb.vocabulary import SnapshotStatus

    coll = get_collection(session, collection)
    return list(session.execute(
        select(col(Snapshot.label)).where(col(Snapshot.collection_id) == coll.id,
                                          col(Snapshot.status) == SnapshotStatus.complete)
        .order_by(col(Snapshot.ordinal), col(Snapshot.label))).scalars())


class DriftRequest(Request):
    """Which collection, and which of its snapshots (default: every complete one)."""

    collection: Name = argument(help="Collection name.")
    snapshots: Names | None = argument(
        None, metavar="LABEL",
        help="Snapshots in time order (default: every complete one, in time order).")


class Transition(BaseModel):
    """One snapshot to the next: documents and topics."""

    a: str
    b: str
    documents: DocumentDrift
    topics: TopicDrift


class DriftResult(Result):
    """Every consecutive pair of snapshots compared, and each snapshot's original qrels."""

    collection: str
    snapshots: list[str]
    transitions: list[Transition]
    qrels: dict[str, QrelsSummary]  # snapshot → its designated original qrels
    core_topics: int  # topics in every snapshot (0 without snapshots)
    lineage: Lineage | None = None  # the collection and each snapshot's original qrels

    def to_frame(self) -> pd.DataFrame:
        """One row per transition: `a, b`, documents `added, removed, changed, unchanged`,
        topics `topics_added, topics_removed, topics_kept, topics_renumbered`."""
        import pandas as pd

        return pd.DataFrame(
            [{"a": t.a, "b": t.b,
              **{k: getattr(t.documents, k) for k in ("added", "removed", "changed",
                                                      "unchanged")},
              **{f"topics_{k}": getattr(t.topics, k) for k in ("added", "removed", "kept",
                                                               "renumbered")}}
             for t in self.transitions],
            columns=["a", "b", "added", "removed", "changed", "unchanged", "topics_added",
                     "topics_removed", "topics_kept", "topics_renumbered"])


@operation("drift", command="snapshot drift")
def drift(request: DriftRequest, db: Database) -> DriftResult:
    """Documents and topics between consecutive snapshots, each one's original qrels, and the
    topics in all of them: the collection over time.

    Why one operation: the drift page and `snapshot drift` show the same figures.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import core_topic_ids, qrels_summary

    with db.session() as session:
        labels = list(request.snapshots or complete_labels(session, request.collection))
        transitions, qrels = [], {}
        for a, b in zip(labels, labels[1:], strict=False):
            diff = diff_of(session, request.collection, a, b)
            transitions.append(Transition(a=a, b=b, documents=diff.documents,
                                          topics=diff.topics))
            qrels.update(diff.qrels)
        if len(labels) == 1:
            snap = get_snapshot(session, request.collection, labels[0])
            qrels[labels[0]] = QrelsSummary(**qrels_summary(session.connection(), snap.pk))
        core = len(core_topic_ids(session, request.collection, labels)) if labels else 0
        lineage = original_lineage(db, session, request.collection, labels)
    return DriftResult(collection=request.collection, snapshots=labels,
                       transitions=transitions, qrels=qrels, core_topics=core, lineage=lineage)
