"""Stored evaluations and per-topic scores, and the measures they are of.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, select
from sqlmodel import Session, col

from tcdb.schema import Evaluation, Measure, Score
from tcdb.schema.base import stored_id
from tcdb.storage.bulk import int_rows
from tcdb.storage.db import connection_of

# (run id, measure id) → {topic id: value}: stored per-topic scores, or scores made in memory
ScoreMap = dict[tuple[int, int], dict[int, float]]


def measure_ids(bind: Connection | Session, names: Sequence[str]) -> dict[str, int]:
    """Measure name → id for the names already known (unknown names are simply absent)."""
    query = select(col(Measure.name), col(Measure.id)).where(col(Measure.name).in_(list(names)))
    return {name: stored_id(mid) for name, mid in connection_of(bind).execute(query)}


def measure_names(bind: Connection | Session) -> list[str]:
    """Every measure the database holds scores for, by its ir_measures name."""
    query = select(col(Measure.name)).where(col(Measure.id).in_(select(col(Evaluation.measure_id))))
    return sorted(connection_of(bind).execute(query).scalars())


def evaluations(
    bind: Connection | Session, qrels_set_id: int, run_ids: Sequence[int],
    measure_ids: Sequence[int], residual_of_id: int = 0,
) -> dict[tuple[int, int], str]:
    """(run id, measure id) → source ("ir_measures" or "imported") of what was evaluated, for
    the runs as submitted or (`residual_of_id`) residual of a qrels set."""
    if not run_ids or not measure_ids:
        return {}
    query = select(col(Evaluation.run_id), col(Evaluation.measure_id),
                   col(Evaluation.source)).where(
        col(Evaluation.qrels_set_id) == qrels_set_id, col(Evaluation.run_id).in_(list(run_ids)),
        col(Evaluation.measure_id).in_(list(measure_ids)),
        col(Evaluation.residual_of_id) == residual_of_id)
    return {(r, m): s for r, m, s in connection_of(bind).execute(query)}


def score_rows(
    bind: Connection | Session, qrels_set_id: int, run_ids: Sequence[int],
    measure_ids: Sequence[int], residual_of_id: int = 0,
) -> list[tuple[int, int, int, float]]:
    """Stored per-topic scores as (run id, measure id, topic id, value)."""
    if not run_ids or not measure_ids:
        return []
    query = select(col(Score.run_id), col(Score.measure_id), col(Score.topic_id),
                   col(Score.value)).where(
        col(Score.qrels_set_id) == qrels_set_id, col(Score.run_id).in_(list(run_ids)),
        col(Score.measure_id).in_(list(measure_ids)), col(Score.residual_of_id) == residual_of_id)
    return [tuple(row) for row in connection_of(bind).execute(query)]


def stored_scores(conn: Connection, qrels_set_id: int, run_ids: Sequence[int],
                  measure_ids: Sequence[int], residual_of_id: int = 0) -> ScoreMap:
    """(run id, measure id) → {topic id: value} of stored scores."""
    out: ScoreMap = {}
    if not run_ids or not measure_ids:
        return out
    runs = ",".join(str(int(r)) for r in run_ids)
    mids = ",".join(str(int(m)) for m in measure_ids)
    data = int_rows(conn, "SELECT run_id, measure_id, topic_id, value FROM score "
                    f"WHERE qrels_set_id = {int(qrels_set_id)} AND run_id IN ({runs}) "
                    f"AND measure_id IN ({mids}) AND residual_of_id = {int(residual_of_id)}",
                    4, dtype="float64")
    keys = data[:, :3].astype("int64").tolist()
    for (run_id, mid, topic_id), value in zip(keys, data[:, 3].tolist(), strict=True):
        out.setdefault((run_id, mid), {})[topic_id] = value
    return out
