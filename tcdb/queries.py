"""The read side shared by reports, the Python API and the dashboard: Core SQL → rows/DataFrames.

Functions here take a Connection, never open transactions of their own and never write, so the
dashboard can use them on a read-only engine. pandas is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, distinct, func, select
from sqlmodel import Session

from tcdb.schema import (
    Collection,
    Evaluation,
    Judgment,
    Measure,
    Run,
    Score,
    Snapshot,
    SnapshotTopic,
    System,
    Topic,
)

if TYPE_CHECKING:
    import pandas as pd

RUN_COLUMNS = [
    "collection", "snapshot", "run", "system", "group", "manual", "contributed", "category",
    "submitted", "n_entries", "n_unresolved", "checksum", "source", "description", "created_at",
    "run_id", "snapshot_id",
]


def _conn(bind: Connection | Session) -> Connection:
    return bind.connection() if isinstance(bind, Session) else bind


def run_rows(
    bind: Connection | Session,
    *,
    collection_id: int | None = None,
    snapshot: str | None = None,
    snapshot_ids: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Runs with their collection, snapshot and system names, one dict per run."""
    query = (
        select(Collection.name, Snapshot.label, Run.tag, System.name, Run.group_name,
               Run.is_manual, Run.contributed, Run.category, Run.submitted, Run.n_entries,
               Run.n_unresolved, Run.checksum, Run.source, Run.description, Run.created_at,
               Run.id, Run.snapshot_id)
        .join(Snapshot, Snapshot.id == Run.snapshot_id)
        .join(Collection, Collection.id == Snapshot.collection_id)
        .join(System, System.id == Run.system_id)
        .order_by(Collection.name, Snapshot.ordinal, Snapshot.label, Run.tag)
    )
    if collection_id is not None:
        query = query.where(Snapshot.collection_id == collection_id)
    if snapshot is not None:
        query = query.where(Snapshot.label == snapshot)
    if snapshot_ids is not None:
        query = query.where(Run.snapshot_id.in_(list(snapshot_ids)))
    rows = []
    for row in _conn(bind).execute(query):
        record = dict(zip(RUN_COLUMNS, row, strict=True))
        category = record["category"]
        record["category"] = getattr(category, "value", category)
        rows.append(record)
    return rows


def runs_frame(bind: Connection | Session, **filters: Any) -> pd.DataFrame:
    """`run_rows` as a DataFrame (same filters)."""
    import pandas as pd

    return pd.DataFrame(run_rows(bind, **filters), columns=RUN_COLUMNS)


def qrels_topics(bind: Connection | Session, qrels_set_id: int, snapshot_id: int
                 ) -> dict[int, str]:
    """topic.id → external id of every topic the qrels set judges (the trec_eval -c topic set)."""
    query = (
        select(Judgment.topic_id, SnapshotTopic.external_id)
        .distinct()
        .join(SnapshotTopic, (SnapshotTopic.topic_id == Judgment.topic_id)
              & (SnapshotTopic.snapshot_id == snapshot_id))
        .where(Judgment.qrels_set_id == qrels_set_id)
    )
    return dict(_conn(bind).execute(query).tuples().all())


def snapshot_topics(bind: Connection | Session, snapshot_id: int) -> dict[int, tuple[str, str]]:
    """topic.id → (external id in this snapshot, stable key) for every topic of a snapshot."""
    query = (
        select(SnapshotTopic.topic_id, SnapshotTopic.external_id, Topic.key)
        .join(Topic, Topic.id == SnapshotTopic.topic_id)
        .where(SnapshotTopic.snapshot_id == snapshot_id)
    )
    return {t: (ext, key) for t, ext, key in _conn(bind).execute(query)}


def measure_ids(bind: Connection | Session, names: Sequence[str]) -> dict[str, int]:
    """Measure name → id for the names already known (unknown names are simply absent)."""
    query = select(Measure.name, Measure.id).where(Measure.name.in_(list(names)))
    return dict(_conn(bind).execute(query).tuples().all())


def measure_names(bind: Connection | Session) -> list[str]:
    """Every measure the database holds scores for, by its ir_measures name."""
    query = select(Measure.name).where(Measure.id.in_(select(Evaluation.measure_id)))
    return sorted(_conn(bind).execute(query).scalars())


def evaluations(
    bind: Connection | Session, qrels_set_id: int, run_ids: Sequence[int],
    measure_ids: Sequence[int],
) -> dict[tuple[int, int], str]:
    """(run id, measure id) → source ("ir_measures" or "imported") of what was evaluated."""
    if not run_ids or not measure_ids:
        return {}
    query = select(Evaluation.run_id, Evaluation.measure_id, Evaluation.source).where(
        Evaluation.qrels_set_id == qrels_set_id, Evaluation.run_id.in_(list(run_ids)),
        Evaluation.measure_id.in_(list(measure_ids)))
    return {(r, m): s for r, m, s in _conn(bind).execute(query)}


def score_rows(
    bind: Connection | Session, qrels_set_id: int, run_ids: Sequence[int],
    measure_ids: Sequence[int],
) -> list[tuple[int, int, int, float]]:
    """Stored per-topic scores as (run id, measure id, topic id, value)."""
    if not run_ids or not measure_ids:
        return []
    query = select(Score.run_id, Score.measure_id, Score.topic_id, Score.value).where(
        Score.qrels_set_id == qrels_set_id, Score.run_id.in_(list(run_ids)),
        Score.measure_id.in_(list(measure_ids)))
    return [tuple(row) for row in _conn(bind).execute(query)]  # type: ignore[misc]


def count_qrels_topics(bind: Connection | Session, qrels_set_id: int) -> int:
    query = select(func.count(distinct(Judgment.topic_id))).where(
        Judgment.qrels_set_id == qrels_set_id)
    return int(_conn(bind).execute(query).scalar_one())
