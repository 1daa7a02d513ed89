"""The Python API: pandas DataFrames for notebooks, no SQL needed.

    import tcdb
    tcdb.api.scores("longeval-web", "2023-01", measures=["nDCG@10", "AP"])

Every function opens its own read transaction on the default database (`TCDB_DATABASE_URL`)
and returns readable columns: collection, snapshot, run, system, topic (external id), measure,
value. Scores that are missing are computed and stored first (pass `compute=False` to only read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tcdb.db import session_scope

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "evaluate", "per_topic_deltas", "per_topic_scores", "persistence", "qrels", "qrels_sets",
    "reusability", "runs", "scores",
]


def runs(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per run: collection, snapshot, run (tag), system, group, manual, contributed,
    category, submitted, n_entries, n_unresolved, checksum, …"""
    from tcdb.catalog import get_collection, get_snapshot
    from tcdb.queries import runs_frame

    with session_scope() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is not None:
            get_snapshot(session, collection, snapshot)
        return runs_frame(session.connection(), collection_id=collection_id, snapshot=snapshot)


def qrels(collection: str, snapshot: str, name: str = "original") -> pd.DataFrame:
    """A qrels set's judgments: collection, snapshot, qrels, topic, doc, grade (external ids)."""
    from tcdb.catalog import get_snapshot
    from tcdb.qrels import get_qrels_set, qrels_frame

    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, name)
        frame = qrels_frame(session.connection(), qset.id or 0)
    frame.insert(0, "qrels", name)
    frame.insert(0, "snapshot", snapshot)
    frame.insert(0, "collection", collection)
    return frame


def qrels_sets(collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """One row per qrels set: kind, parents, provenance, n_judgments, n_topics."""
    import pandas as pd

    from tcdb.qrels import list_qrels

    return pd.DataFrame(list_qrels(collection, snapshot))


def scores(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Sequence[str] | str = ("nDCG@10",),
    runs: Sequence[str] | None = None,
    *,
    per_topic: bool = False,
    intersection: bool = False,
    compute: bool = True,
) -> pd.DataFrame:
    """Means (`trec_eval -c`; `intersection=True` for answered topics only) or per-topic values."""
    from tcdb.scores import score_table

    names = [measures] if isinstance(measures, str) else list(measures)
    return score_table(collection, snapshot, qrels, names, runs, per_topic, intersection,
                       compute=compute)


def per_topic_scores(
    collection: str,
    snapshots: Sequence[str] | str,
    qrels: str = "original",
    measure: str = "nDCG@10",
    runs: Sequence[str] | None = None,
    *,
    intersection: bool = False,
    compute: bool = True,
) -> pd.DataFrame:
    """Per-topic values of one measure across snapshots; `topic_key` matches topics over time."""
    from tcdb.scores import per_topic_scores as table

    labels = [snapshots] if isinstance(snapshots, str) else list(snapshots)
    return table(collection, labels, qrels, measure, runs, intersection=intersection,
                 compute=compute)


def evaluate(
    collection: str,
    snapshot: str,
    qrels: str = "original",
    measures: Sequence[str] | str = ("nDCG@10",),
    runs: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Compute the missing scores, then return the table of means."""
    return scores(collection, snapshot, qrels, measures, runs)


def persistence(
    collection: str,
    snapshots: Sequence[str],
    pivot: str,
    measures: Sequence[str] | str = ("nDCG@10",),
    qrels: str = "original",
    topics: str = "all",
    bootstrap: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """ARP, RΔ, ER, ΔRI and p-values of every system against `pivot` (the report's JSON)."""
    from tcdb.reports.persistence import persistence_report

    names = [measures] if isinstance(measures, str) else list(measures)
    return persistence_report(collection, snapshots, pivot, names, qrels, topics, bootstrap, seed)


def per_topic_deltas(
    collection: str,
    snapshots: Sequence[str],
    pivot: str,
    measures: Sequence[str] | str = ("nDCG@10",),
    qrels: str = "original",
    topics: str = "all",
) -> pd.DataFrame:
    """Per-topic improvement of every system over the pivot, per snapshot (the LongEval plot)."""
    from tcdb.reports.persistence import per_topic_deltas_frame

    names = [measures] if isinstance(measures, str) else list(measures)
    return per_topic_deltas_frame(collection, snapshots, pivot, names, qrels, topics)


def reusability(
    collection: str,
    snapshot: str,
    qrels_a: str,
    qrels_b: str,
    measures: Sequence[str] | str = ("AP",),
    depth: int = 100,
    topics: str | None = None,
) -> dict[str, Any]:
    """Kendall's τ (tie-omitting, τ-b, τ_AP), per-topic τ and per-run counts, A vs B."""
    from tcdb.reports.reusability import reusability_report

    names = [measures] if isinstance(measures, str) else list(measures)
    return reusability_report(collection, snapshot, qrels_a, qrels_b, names, depth=depth,
                              topics=topics)
