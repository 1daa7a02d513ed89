"""`tcdb report per-topic-deltas`: per topic, every system's score minus the pivot's, in every
snapshot (LongEval's plot), from the persistence report's scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import QRELS_PER_SNAPSHOT_HELP, QrelsPerSnapshot, topics_option
from tcdb.reports.persistence_scores import check_pivot
from tcdb.scoring.measures import MeasureNames

if TYPE_CHECKING:
    import pandas as pd

DELTA_COLUMNS = ["measure", "system", "snapshot", "topic", "topic_id", "topic_key", "score",
                 "pivot_score", "delta"]


class PerTopicDeltasRequest(Request):
    """Which systems, snapshots and measures to show topic by topic against the pivot."""

    collection: Name = argument(help="Collection name.")
    snapshots: Names = option(help="Snapshot labels, first one first.", flag="--snapshots",
                               short="-s")
    pivot: Name = option(help="Pivot system.")
    measures: MeasureNames = option(["nDCG@10"], help="Measure (repeat).", short="-m")
    qrels: QrelsPerSnapshot = option(["original"], flag="--qrels", metavar="NAME",
                                     help=QRELS_PER_SNAPSHOT_HELP)
    topics: Name = topics_option()
    systems: Names | None = option(None, flag="--system",
                                    help="Only this system (repeat; the pivot is always in).")
    compute: bool = option(True, help="Compute missing scores first (else only read).")


class TopicDelta(BaseModel):
    """One system on one topic of one snapshot against the pivot."""

    measure: str
    system: str
    snapshot: str
    topic: str  # the topic's external id in that snapshot
    topic_id: int
    topic_key: str  # its identity across snapshots
    score: float | None
    pivot_score: float | None
    delta: float | None


class PerTopicDeltasResult(Result):
    """Per topic, each system's score minus the pivot's, in every snapshot."""

    collection: str
    pivot: str
    rows: list[TopicDelta]
    lineage: Lineage | None = None  # what the deltas were computed from

    def to_frame(self) -> pd.DataFrame:
        """`measure, system, snapshot, topic` (external id in that snapshot), `topic_id`,
        `topic_key` (identity across snapshots), `score`, `pivot_score`, `delta`."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.rows], columns=DELTA_COLUMNS)


@operation("per_topic_deltas", command="report per-topic-deltas")
def per_topic_deltas(request: PerTopicDeltasRequest, db: Database) -> PerTopicDeltasResult:
    """Per-topic improvement of every system over the pivot, per snapshot (LongEval's plot).

    Why: whether an effect is carried by a few topics.
    """
    import pandas as pd

    from tcdb.analysis.persistence import per_topic_deltas as deltas_of
    from tcdb.reports.persistence_scores import load_persistence_scores

    data = load_persistence_scores(db, request.collection, request.snapshots, request.measures,
                                   request.qrels, request.topics, compute=request.compute,
                                   systems=request.systems, keep=request.pivot)
    check_pivot(data, request.pivot)
    lineage = lineage_of(db, request.collection, runs=[
        (label, tag) for by_system in data.runs.values() for tags in by_system.values()
        for label, tag in tags.items()], qrels=list(data.qrels.items()),
        topics=request.topics, measures=list(data.frames))
    parts = []
    for name, frame in data.frames.items():
        deltas = deltas_of(frame, data.snapshots, request.pivot, topics=data.topics)
        scores = frame.rename(columns={"value": "score"})
        pivot_scores = scores[scores["system"] == request.pivot].drop(columns="system").rename(
            columns={"score": "pivot_score"})
        merged = (deltas.merge(scores, on=["system", "snapshot", "topic"], how="left")
                  .merge(pivot_scores, on=["snapshot", "topic"], how="left"))
        merged.insert(0, "measure", name)
        parts.append(merged)
    if not parts:
        return PerTopicDeltasResult(collection=request.collection, pivot=request.pivot, rows=[],
                                    lineage=lineage)
    out = pd.concat(parts, ignore_index=True).rename(columns={"topic": "topic_id"})
    out["topic"] = [data.topic_names[s].get(t, ("?", ""))[0]
                    for s, t in zip(out["snapshot"], out["topic_id"], strict=True)]
    out["topic_key"] = [data.topic_names[s].get(t, ("?", ""))[1]
                        for s, t in zip(out["snapshot"], out["topic_id"], strict=True)]
    rows = out[DELTA_COLUMNS].astype(object).where(out[DELTA_COLUMNS].notna(), None)
    return PerTopicDeltasResult(collection=request.collection, pivot=request.pivot,
                                rows=[TopicDelta(**row) for row in rows.to_dict("records")],
                                lineage=lineage)

