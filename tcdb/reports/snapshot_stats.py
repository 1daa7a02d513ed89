"""`tcdb snapshot stats`: LongEval's collection table and churn figure for chosen snapshots.

The report is a dict::

    {collection, snapshots: [label…], short: k,
     present_in_all: n,                       # documents in every listed snapshot (by identity)
     per_snapshot: [{label, documents, queries, tokens: {n_with_text, mean, min, max},
                     qrels, judgments_by_grade: {grade: n},
                     per_topic: [{topic, grades: {grade: n}, relevant}],
                     topics_without_relevant: [external ids], unjudged_topics: n,
                     runs: [{run, empty: [topic ids], short: [topic ids]}]}],
     churn: [{a, b, added, removed, changed, unchanged, grew, shrank, same_length}]}

Token lengths are whitespace tokens per document; `n_with_text` counts the documents whose
count is known: every one ingested since migration 0011 (texts kept or not), and older ones
whose text is stored. Churn compares each listed snapshot with the one listed before it;
`grew`/`shrank`/`same_length` split the changed documents by the length of their normalised
text. A run's `empty` topics are the snapshot's topics it returned nothing for; `short` those
with fewer than `short` documents. Judgments are the snapshot's designated original qrels set's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from tcdb.errors import OptionError
from tcdb.sorting import natural_key
from tcdb.storage.db import session_scope


def snapshot_stats(collection: str, labels: Sequence[str] | None = None, short: int = 10,
                   *, tokens: bool = True, runs: bool = True) -> dict[str, Any]:
    """Sizes, token lengths, judgments by grade and runs' short rankings per snapshot, the
    documents present in all of them and the churn between consecutive ones.

    Token lengths aggregate the counts the ingest stored with each version (`content.n_tokens`,
    texts kept or not; older versions are counted from their text); `tokens=False` leaves them
    out (None), `runs=False` the runs' rankings (every entry of every run is counted)."""
    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.queries import snapshot_topics
    from tcdb.queries.churn import churn_rows, drift_counts, length_counts
    from tcdb.queries.snapshot_stats import (
        judgments_by_grade,
        present_in_all,
        ranking_lengths,
        token_lengths,
    )
    from tcdb.schema import QrelsSet, Run, Snapshot
    from tcdb.vocabulary import SnapshotStatus

    if short < 1:
        raise OptionError("--short", f"a short ranking has fewer than k ≥ 1 documents, not {short}")
    with session_scope() as session:
        coll = get_collection(session, collection)
        if not labels:
            labels = list(session.execute(
                select(col(Snapshot.label)).where(col(Snapshot.collection_id) == coll.id,
                                                  col(Snapshot.status) == SnapshotStatus.complete)
                .order_by(col(Snapshot.ordinal), col(Snapshot.label))).scalars())
        if len(set(labels)) != len(labels):
            raise OptionError("LABEL", "a snapshot is named twice")
        snaps = [get_snapshot(session, collection, label) for label in labels]
        conn = session.connection()
        per_snapshot: list[dict[str, Any]] = []
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
                col(Run.snapshot_id) == snap.pk).order_by(col(Run.tag))).all() if runs else []
            lengths = ranking_lengths(conn, [int(r[0]) for r in listed])
            lengths_of = token_counts[snap.pk] if tokens else {
                "n_with_text": None, "mean": None, "min": None, "max": None}
            per_snapshot.append({
                "label": snap.label, "documents": snap.n_documents, "queries": len(names),
                "tokens": lengths_of,
                "qrels": qset.name if qset is not None else None,
                "judgments_by_grade": dict(sorted(by_grade.items())),
                "per_topic": [{"topic": names[t][0], "grades": dict(sorted(grades[t].items())),
                               "relevant": sum(n for g, n in grades[t].items() if g > 0)}
                              for t in order if t in grades],
                "topics_without_relevant": [names[t][0] for t in order
                                            if t in grades and not any(g > 0 for g in grades[t])],
                "unjudged_topics": sum(1 for t in order if t not in grades),
                "runs": [{"run": tag,
                          "empty": [names[t][0] for t in order if t not in lengths.get(run_id, {})],
                          "short": [names[t][0] for t in order
                                    if 0 < lengths.get(run_id, {}).get(t, 0) < short]}
                         for run_id, tag in listed],
            })
        churn: list[dict[str, Any]] = []
        for before, after in zip(snaps, snaps[1:], strict=False):
            rows = churn_rows(conn, before.pk, after.pk)  # kept by the ingest, or counted now
            drift = drift_counts(rows)
            churn.append({"a": before.label, "b": after.label, "added": drift["added"],
                          "removed": drift["removed"], "changed": drift["changed"],
                          **length_counts(rows)})
        if len(snaps) == 2:
            in_all = churn[0]["unchanged"] + churn[0]["changed"]
        else:
            in_all = present_in_all(conn, [s.pk for s in snaps]) if snaps else 0
    return {"collection": collection, "snapshots": list(labels), "short": short,
            "present_in_all": in_all, "per_snapshot": per_snapshot, "churn": churn}
