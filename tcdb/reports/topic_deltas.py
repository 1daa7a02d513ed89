"""`tcdb report topic-deltas`: one system's per-topic change from snapshot A to snapshot B.

LongEval's per-topic Δ figure: for every core topic (judged in both snapshots, matched by the
collection's topic identity) the system's score in B minus its score in A, sorted, with the
pivot's own change beside it when a pivot is named — a system whose topics all drop as much as
the pivot's lost nothing of its own. `topics` (a topic set) keeps only the core topics in it.
Scores are the persistence report's (`load_persistence_scores`, `trec_eval -c`: a topic the
run did not answer counts 0).

`delta` is rounded to 12 decimals (`tcdb.analysis.means.DECIMALS`) so equal changes tie.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, field_validator

from tcdb.errors import ConflictError, FieldError, NotFoundError, some
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import (
    QRELS_PER_SNAPSHOT_HELP,
    QrelsPerSnapshot,
    TopicChoice,
    topic_set_name,
    topic_set_option,
)
from tcdb.reports.persistence_scores import SEVERAL_RUNS, load_persistence_scores
from tcdb.reports.ranking_agreement import two_snapshots
from tcdb.scoring.measures import MeasureName
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


class TopicDeltasRequest(Request):
    """Which system, which two snapshots, which measure and qrels."""

    collection: Name = argument(help="Collection name.")
    system: Name = option(help="The system followed (name or group/name).")
    snapshots: Names = option(help="Snapshots A and B (B − A is shown).", flag="--snapshots",
                               short="-s")
    measure: MeasureName = option("nDCG@10", help="Measure.", short="-m")
    qrels: QrelsPerSnapshot = option(["original"], flag="--qrels", metavar="NAME",
                                     help=QRELS_PER_SNAPSHOT_HELP)
    pivot: Name | None = option(None, help="Also show this system's change per topic.")
    topics: TopicChoice = topic_set_option()  # of the core topics
    compute: bool = option(True, help="Compute missing scores first (--no-compute: only read "
                           "stored ones).")

    @field_validator("snapshots")
    @classmethod
    def _two(cls, labels: list[str]) -> list[str]:
        return list(two_snapshots(labels))


class TopicChange(BaseModel):
    """One core topic: the system's score in A and B, and the pivot's (None without one)."""

    topic: dict[str, str]  # snapshot → the topic's external id there
    topic_key: str
    score_a: float
    score_b: float
    delta: float
    pivot_a: float | None = None
    pivot_b: float | None = None
    pivot_delta: float | None = None


class TopicDeltasResult(Result):
    """Per core topic, the system's score in B minus A (and the pivot's), largest gain first."""

    collection: str
    system: str
    pivot: str | None
    measure: str
    snapshots: list[str]
    qrels: dict[str, str]
    runs: dict[str, str]  # snapshot → run tag
    topic_set: str | None
    n_topics: int
    mean_delta: float | None  # the mean of the per-topic deltas, for counts (NumRet…) too
    pivot_mean_delta: float | None
    improved: int
    declined: int
    unchanged: int
    topics: list[TopicChange]
    warnings: list[str]
    lineage: Lineage | None = None  # what the figures were computed from
    # A count's change as trec_eval's `all` line would show it: the change of its sum over
    # these topics (n_topics × mean_delta); None for every other measure.
    sum_delta: float | None = None
    pivot_sum_delta: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """`topic_a, topic_b, topic_key, score_a, score_b, delta, pivot_a, pivot_b,
        pivot_delta`, one row per core topic, largest gain first."""
        import pandas as pd

        a, b = self.snapshots
        rows = [{"topic_a": r.topic[a], "topic_b": r.topic[b],
                 **r.model_dump(exclude={"topic"})} for r in self.topics]
        return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "score_a",
                                           "score_b", "delta", "pivot_a", "pivot_b",
                                           "pivot_delta"])


@operation("topic_deltas", command="report topic-deltas")
def topic_deltas(request: TopicDeltasRequest, db: Database) -> TopicDeltasResult:
    """Per core topic, the system's score in B minus its score in A, largest gain first.

    Why the pivot beside it: a system whose topics all drop as much as the pivot's lost
    nothing of its own.
    """
    from tcdb.analysis import json_float
    from tcdb.analysis.means import DECIMALS, exact_mean, sums_over_topics
    from tcdb.catalog.topic_sets import topic_set_members

    a, b = request.snapshots
    topics, pivot = request.topics, request.pivot
    chosen = topic_set_name(topics)  # all and core: every core topic
    members = topic_set_members(db, request.collection, chosen) if chosen is not None else None
    data = load_persistence_scores(db, request.collection, [a, b], [request.measure], request.qrels,
                                   "core", compute=request.compute, systems=[request.system],
                                   keep=pivot)
    name = next(iter(data.frames))
    followed = _resolve(data.runs[name], data.skipped[name], request.system, "system")
    pivot_label = _resolve(data.runs[name], data.skipped[name], pivot, "pivot") if pivot else None
    frame = data.frames[name]
    values = {(s, snap, t): v for s, snap, t, v in frame.itertuples(index=False)}
    rows: list[dict[str, Any]] = []
    kept = [t for t in data.topics[a] if members is None or t in members]
    if not kept:
        raise FieldError("topics", f"topic set {topics!r} has none of the "
                         f"{len(data.topics[a])} core topics of {a} and {b}")
    for topic in kept:
        ext_a, key = data.topic_names[a][topic]
        ext_b = data.topic_names[b][topic][0]
        score_a, score_b = values[(followed, a, topic)], values[(followed, b, topic)]
        row: dict[str, Any] = {"topic": {a: ext_a, b: ext_b}, "topic_key": key,
                               "score_a": score_a, "score_b": score_b,
                               "delta": round(score_b - score_a, DECIMALS)}
        if pivot_label is not None:
            pa, pb = values[(pivot_label, a, topic)], values[(pivot_label, b, topic)]
            row.update(pivot_a=pa, pivot_b=pb, pivot_delta=round(pb - pa, DECIMALS))
        rows.append(row)
    rows.sort(key=lambda r: (-r["delta"], natural_key(r["topic"][b])))
    deltas = [r["delta"] for r in rows]
    pivot_deltas = [r["pivot_delta"] for r in rows if r.get("pivot_delta") is not None]
    counts = sums_over_topics(name)  # also say the change of the sum trec_eval reports
    return TopicDeltasResult(
        collection=request.collection, system=followed, pivot=pivot_label, measure=name,
        snapshots=[a, b], qrels=data.qrels, runs=data.runs[name][followed], topic_set=topics,
        n_topics=len(rows), mean_delta=json_float(round(exact_mean(deltas), DECIMALS)),
        pivot_mean_delta=(json_float(round(exact_mean(pivot_deltas), DECIMALS))
                          if pivot_deltas else None),
        improved=sum(1 for d in deltas if d > 0), declined=sum(1 for d in deltas if d < 0),
        unchanged=sum(1 for d in deltas if d == 0),
        sum_delta=round(math.fsum(deltas), DECIMALS) if counts else None,
        pivot_sum_delta=(round(math.fsum(pivot_deltas), DECIMALS)
                         if counts and pivot_deltas else None),
        topics=[TopicChange(**row) for row in rows], warnings=data.warnings,
        lineage=lineage_of(db, request.collection, runs=[
            (label, tag) for system in (followed, pivot_label) if system is not None
            for label, tag in data.runs[name][system].items()],
            qrels=list(data.qrels.items()), topics=topics, measures=[name]))


def _resolve(runs: dict[str, dict[str, str]], skipped: list[dict[str, str]], wanted: str,
             what: str) -> str:
    """The followed system's label for a name the user gave; why not, when it was skipped."""
    matches = [s for s in runs if s == wanted or s.endswith(f"/{wanted}")]
    if len(matches) == 1:
        return matches[0]
    for entry in skipped:
        if entry["system"] == wanted or entry["system"].endswith(f"/{wanted}"):
            error = ConflictError if entry["kind"] == SEVERAL_RUNS else NotFoundError
            raise error(f"{what} {wanted!r}: {entry['reason']}")
    if len(matches) > 1:
        raise ConflictError(f"{what} {wanted!r} names several systems ({some(matches)}): "
                            "give group/name")
    raise NotFoundError(f"{what} {wanted!r} has no run in both snapshots")
