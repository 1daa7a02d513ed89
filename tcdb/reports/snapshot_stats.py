"""`tcdb snapshot stats`: LongEval's collection table and churn figure for chosen snapshots.

Per snapshot: documents, queries, token lengths, judgments by grade (per topic too), topics
without a relevant document, and each run's empty and short rankings; the documents present
in all the snapshots (by identity); the churn between consecutive ones.

Token lengths are whitespace tokens per document; `n_with_text` counts the documents whose
count is known: every one ingested since migration 0011 (texts kept or not), and older ones
whose text is stored. Churn compares each listed snapshot with the one listed before it;
`grew`/`shrank`/`same_length` split the changed documents by the length of their normalised
text. A run's `empty` topics are the snapshot's topics it returned nothing for; `short` those
with fewer than `short` documents. Judgments are the snapshot's designated original qrels set's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, field_validator
from sqlalchemy import select
from sqlmodel import col

from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


class SnapshotStatsRequest(Request):
    """Which snapshots, what counts as a short ranking, and what to leave out for speed."""

    collection: Name = argument(help="Collection name.")
    snapshots: Names | None = argument(
        None, metavar="LABEL",
        help="Snapshots (default: every complete one, in time order).")
    short: int = option(10, help="A ranking with fewer documents is short.")
    tokens: bool = option(True, help="Token lengths (counted at ingest): --no-tokens skips "
                          "their aggregate over every document.")
    rankings: bool = option(True, help="The runs' empty and short rankings: --no-rankings "
                            "skips counting every entry of every run.")

    @field_validator("short")
    @classmethod
    def _short(cls, short: int) -> int:
        if short < 1:
            raise ValueError(f"a short ranking has fewer than k ≥ 1 documents, not {short}")
        return short

    @field_validator("snapshots")
    @classmethod
    def _once(cls, labels: list[str] | None) -> list[str] | None:
        if labels is not None and len(set(labels)) != len(labels):
            raise ValueError("a snapshot is named twice")
        return labels


class TokenLengths(BaseModel):
    """Whitespace tokens per document, over the `n_with_text` documents whose count is known
    (all None with `tokens=False`)."""

    n_with_text: int | None
    mean: float | None
    min: int | None
    max: int | None


class TopicJudgments(BaseModel):
    topic: str
    grades: dict[int, int]  # grade → judgments
    relevant: int


class RunRankings(BaseModel):
    run: str
    empty: list[str]  # topics it returned nothing for
    short: list[str]  # topics with fewer than `short` documents


class SnapshotFigures(BaseModel):
    """One snapshot: sizes, token lengths, its original qrels' judgments, runs' rankings."""

    label: str
    documents: int
    with_documents: bool = True  # False: registered without documents (published scores)
    queries: int
    tokens: TokenLengths
    qrels: str | None  # the designated original qrels set
    judgments_by_grade: dict[int, int]
    per_topic: list[TopicJudgments]
    topics_without_relevant: list[str]
    unjudged_topics: int
    runs: list[RunRankings]


class Churn(BaseModel):
    """One snapshot to the next: changed documents split by the length of their text."""

    a: str
    b: str
    added: int
    removed: int
    changed: int
    unchanged: int
    grew: int
    shrank: int
    same_length: int


class SnapshotStatsResult(Result):
    """Per snapshot figures, documents in all of them, churn between consecutive ones."""

    collection: str
    snapshots: list[str]
    short: int
    present_in_all: int  # documents in every listed snapshot (by identity)
    per_snapshot: list[SnapshotFigures]
    churn: list[Churn]
    lineage: Lineage | None = None  # the snapshots' original qrels and the runs counted

    def to_frame(self) -> pd.DataFrame:
        """One row per snapshot: `snapshot, documents, queries, tokens_mean, tokens_min,
        tokens_max, tokens_counted, qrels, judgments, topics_without_relevant,
        unjudged_topics`, and the churn from the snapshot before it (`added` … `same_length`,
        empty for the first)."""
        import pandas as pd

        churn = {c.b: c for c in self.churn}
        rows = []
        for s in self.per_snapshot:
            before = churn.get(s.label)
            rows.append({
                "snapshot": s.label, "documents": s.documents, "queries": s.queries,
                "tokens_mean": s.tokens.mean, "tokens_min": s.tokens.min,
                "tokens_max": s.tokens.max, "tokens_counted": s.tokens.n_with_text,
                "qrels": s.qrels, "judgments": sum(s.judgments_by_grade.values()),
                "topics_without_relevant": len(s.topics_without_relevant),
                "unjudged_topics": s.unjudged_topics,
                **{k: (getattr(before, k) if before else None)
                   for k in ("added", "removed", "changed", "unchanged", "grew", "shrank",
                             "same_length")}})
        return pd.DataFrame(rows, columns=[
            "snapshot", "documents", "queries", "tokens_mean", "tokens_min", "tokens_max",
            "tokens_counted", "qrels", "judgments", "topics_without_relevant",
            "unjudged_topics", "added", "removed", "changed", "unchanged", "grew", "shrank",
            "same_length"])


@operation("snapshot_stats", command="snapshot stats")
def snapshot_stats(request: SnapshotStatsRequest, db: Database) -> SnapshotStatsResult:
    """Documents, queries and token lengths per snapshot, documents in all of them, churn by
    length direction, judgments by grade, and runs' empty or short rankings.

    Token lengths aggregate the counts the ingest stored with each version (`content.n_tokens`,
    texts kept or not; older versions are counted from their text).
    """
    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.queries import snapshot_topics
    from tcdb.queries.churn import churn_rows, drift_counts, length_counts
    from tcdb.queries.snapshot_stats import (
        judgments_by_grade,
        present_in_all,
        ranking_lengths,
        token_lengths,
    )
    from tcdb.reports.drift import complete_labels
    from tcdb.schema import QrelsSet, Run

    collection, short, tokens = request.collection, request.short, request.tokens
    with db.session() as session:
        get_collection(session, collection)
        labels = request.snapshots or complete_labels(session, collection)
        snaps = [get_snapshot(session, collection, label) for label in labels]
        conn = session.connection()
        per_snapshot: list[SnapshotFigures] = []
        read_runs: list[tuple[str, str]] = []
        read_qrels: list[tuple[str, str]] = []
        token_counts = token_lengths(conn, [s.pk for s in snaps]) if tokens else {}
        for snap in snaps:
            names = snapshot_topics(conn, snap.pk)
            qset = session.execute(select(QrelsSet).where(
                col(QrelsSet.snapshot_id) == snap.pk,
                col(QrelsSet.name) == snap.original_qrels)).scalars().first()
            grades = judgments_by_grade(conn, qset.pk) if qset is not None else {}
            by_grade: dict[int, int] = {}
            for counts in grades.values():
                for grade, n in counts.items():
                    by_grade[grade] = by_grade.get(grade, 0) + n
            order = sorted(names, key=lambda t: natural_key(names[t][0]))
            listed = session.execute(select(col(Run.id), col(Run.tag)).where(
                col(Run.snapshot_id) == snap.pk,  # runs of published scores have no rankings
                col(Run.n_entries) + col(Run.n_unresolved) > 0).order_by(col(Run.tag))).all() \
                if request.rankings else []
            lengths = ranking_lengths(conn, [int(r[0]) for r in listed])
            read_runs += [(snap.label, str(r[1])) for r in listed]
            read_qrels += [(snap.label, str(qset.name))] if qset is not None else []
            lengths_of: dict[str, Any] = token_counts[snap.pk] if tokens else {
                "n_with_text": None, "mean": None, "min": None, "max": None}
            per_snapshot.append(SnapshotFigures(
                label=snap.label, documents=snap.n_documents, queries=len(names),
                with_documents=snap.with_documents,
                tokens=TokenLengths(**lengths_of),
                qrels=qset.name if qset is not None else None,
                judgments_by_grade=dict(sorted(by_grade.items())),
                per_topic=[TopicJudgments(topic=names[t][0],
                                          grades=dict(sorted(grades[t].items())),
                                          relevant=sum(n for g, n in grades[t].items() if g > 0))
                           for t in order if t in grades],
                topics_without_relevant=[names[t][0] for t in order
                                         if t in grades and not any(g > 0 for g in grades[t])],
                unjudged_topics=sum(1 for t in order if t not in grades),
                runs=[RunRankings(
                    run=tag,
                    empty=[names[t][0] for t in order if t not in lengths.get(run_id, {})],
                    short=[names[t][0] for t in order
                           if 0 < lengths.get(run_id, {}).get(t, 0) < short])
                      for run_id, tag in listed]))
        churn: list[Churn] = []
        for before, after in zip(snaps, snaps[1:], strict=False):
            rows = churn_rows(conn, before.pk, after.pk)  # kept by the ingest, or counted now
            drift = drift_counts(rows)
            churn.append(Churn(a=before.label, b=after.label, added=drift["added"],
                               removed=drift["removed"], changed=drift["changed"],
                               **length_counts(rows)))
        if len(snaps) == 2:
            in_all = churn[0].unchanged + churn[0].changed
        else:
            in_all = present_in_all(conn, [s.pk for s in snaps]) if snaps else 0
        lineage = lineage_of(db, collection, runs=read_runs, qrels=read_qrels, session=session)
    return SnapshotStatsResult(collection=collection, snapshots=list(labels), short=short,
                               present_in_all=in_all, per_snapshot=per_snapshot, churn=churn,
                               lineage=lineage)
