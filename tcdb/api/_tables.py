"""Runs, qrels and scores as tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.api._labels import Labels, _as_labels, _labels_or_none, _speaks_python
from tcdb.storage.db import session_scope

if TYPE_CHECKING:
    import pandas as pd


@_speaks_python()
def runs(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per run: collection, snapshot, run (tag), system, group, manual, contributed,
    category, submitted, n_entries, n_unresolved, checksum, …"""
    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.queries import runs_frame

    with session_scope() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is not None:
            get_snapshot(session, collection, snapshot)
        return runs_frame(session.connection(), collection_id=collection_id, snapshot=snapshot)


@_speaks_python()
def qrels(collection: str, snapshot: str, name: str = "original") -> pd.DataFrame:
    """A qrels set's judgments: collection, snapshot, qrels, topic, doc, grade (external ids)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_frame

    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, name)
        frame = qrels_frame(session.connection(), qset.pk)
    frame.insert(0, "qrels", name)
    frame.insert(0, "snapshot", snapshot)
    frame.insert(0, "collection", collection)
    return frame


@_speaks_python()
def qrels_sets(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per qrels set: kind, parents, provenance, n_judgments, n_topics."""
    import pandas as pd

    from tcdb.judging.qrels import list_qrels

    return pd.DataFrame(list_qrels(collection, snapshot))


@_speaks_python()
def scores(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Labels = ("nDCG@10",),
    runs: Labels | None = None,
    *,
    per_topic: bool = False,
    intersection: bool = False,
    residual_of: str | None = None,
    compute: bool = True,
    topics: str | None = None,
) -> pd.DataFrame:
    """Means (`trec_eval -c`; `intersection=True` for answered topics only) or per-topic values.

    `residual_of` names a qrels set (`NAME`, or `SNAPSHOT/NAME`) whose judged documents are
    removed from every ranking before scoring (residual evaluation). `topics`: a topic set;
    means over its judged topics only, named in the `topic_set` column."""
    from tcdb.scoring.scores import score_table

    return score_table(collection, snapshot, qrels, _as_labels(measures, "measures"),
                       _labels_or_none(runs, "runs"), per_topic, intersection,
                       residual_of=residual_of, compute=compute, topics=topics)


@_speaks_python()
def per_topic_scores(
    collection: str,
    snapshots: Labels,
    qrels: str = "original",
    measure: str = "nDCG@10",
    runs: Labels | None = None,
    *,
    intersection: bool = False,
    compute: bool = True,
    topics: str | None = None,
) -> pd.DataFrame:
    """Per-topic values of one measure across snapshots; `topic_key` matches topics over time.
    `topics`: only the members of this topic set."""
    from tcdb.scoring.scores import per_topic_scores as table

    return table(collection, _as_labels(snapshots, "snapshots"), qrels, measure,
                 _labels_or_none(runs, "runs"), intersection=intersection, compute=compute,
                 topics=topics)


@_speaks_python()
def evaluate(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Labels = ("nDCG@10",),
    runs: Labels | None = None,
    *,
    residual_of: str | None = None,
    topics: str | None = None,
) -> pd.DataFrame:
    """Compute the missing scores, then return the table of means (over the topic set
    `topics` when given: every topic is still scored and stored)."""
    return scores(collection, snapshot, qrels, measures, runs, residual_of=residual_of,
                  topics=topics)
