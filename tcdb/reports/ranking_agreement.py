"""`tcdb report ranking-agreement`: does a system rank a topic alike in two snapshots?

For a system with one run in each of two snapshots, its rankings of every core topic (present
in both snapshots, matched by the collection's topic identity) are read by document identity
(`tcdb.queries.rankings.ranking_keys`: a document renamed between snapshots but kept by URL is
the same document) and compared with KTU and RBO (`tcdb.analysis.ranking_agreement`, equal to
repro_eval's). No other tool can do this across snapshots: none knows which documents are the
same. `topics` (a topic set) keeps only the core topics in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, field_validator

from tcdb.errors import FieldError
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import TopicChoice, topic_set_name, topic_set_option
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


def two_snapshots(snapshots: Sequence[str]) -> tuple[str, str]:
    """Exactly two distinct snapshot labels, first the earlier one as the user gave them."""
    labels = list(snapshots)
    if len(labels) != 2:
        raise FieldError("snapshots", f"name exactly two snapshots, A then B "
                         f"({len(labels)} given)")
    if labels[0] == labels[1]:
        raise FieldError("snapshots", f"snapshot {labels[0]!r} named twice")
    return labels[0], labels[1]


class RankingAgreementRequest(Request):
    """Which system's rankings, in which two snapshots, how deep."""

    collection: Name = argument(help="Collection name.")
    system: Name = option(help="The system followed (name or group/name).")
    snapshots: Names = option(help="Snapshots A and B whose rankings are compared.",
                               flag="--snapshots", short="-s")
    depth: int = option(1000, short="-k",
                        help="Documents of each ranking compared (repro_eval: 1000).")
    rbo_p: float = option(0.8, help="RBO's persistence p (top-heaviness).")
    topics: TopicChoice = topic_set_option()  # of the core topics

    @field_validator("snapshots")
    @classmethod
    def _two(cls, labels: list[str]) -> list[str]:
        return list(two_snapshots(labels))

    @field_validator("depth")
    @classmethod
    def _depth(cls, depth: int) -> int:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        return depth

    @field_validator("rbo_p")
    @classmethod
    def _p(cls, p: float) -> float:
        if not 0 < p < 1:
            raise ValueError(f"p must lie strictly between 0 and 1, not {p}")
        return p


class TopicAgreement(BaseModel):
    """One core topic: the two rankings' lengths, overlap, KTU and RBO (None: why in reason)."""

    topic: dict[str, str]  # snapshot → the topic's external id there
    n_first: int
    n_later: int
    n_compared: int
    common: int
    ktu: float | None
    rbo: float | None
    rbo_depth: int
    reason: str | None
    topic_key: str


class RankingAgreementResult(Result):
    """KTU and RBO per core topic between the system's runs in A and B, and their means."""

    collection: str
    system: str
    snapshots: list[str]
    runs: dict[str, str]  # snapshot → run tag
    depth: int
    rbo_p: float
    topic_set: str | None
    n_topics: int
    mean_ktu: float | None
    mean_rbo: float | None
    n_ktu: int
    n_rbo: int
    topics: list[TopicAgreement]
    lineage: Lineage | None = None  # the two runs and topic set compared (KTU/RBO: tcdb's own)

    def to_frame(self) -> pd.DataFrame:
        """`topic_a, topic_b, topic_key, n_first, n_later, n_compared, common, ktu, rbo,
        rbo_depth, reason`, one row per core topic."""
        import pandas as pd

        a, b = self.snapshots
        rows = [{"topic_a": r.topic[a], "topic_b": r.topic[b],
                 **r.model_dump(exclude={"topic"})} for r in self.topics]
        return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "n_first",
                                           "n_later", "n_compared", "common", "ktu", "rbo",
                                           "rbo_depth", "reason"])


@operation("ranking_agreement", command="report ranking-agreement")
def ranking_agreement(request: RankingAgreementRequest, db: Database) -> RankingAgreementResult:
    """Kendall's τ Union and rank-biased overlap between the system's rankings of each core
    topic in A and B, documents matched by the collection's identity (e.g. URL).

    Why: whether a system's answers stayed the same, not only its scores.
    """
    from tcdb.analysis.ranking_agreement import ranking_agreement as agreement
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import core_topic_ids, snapshot_topics, topic_set_topic_ids
    from tcdb.queries.rankings import ranking_keys, system_runs

    a, b = request.snapshots
    collection, depth, topics = request.collection, request.depth, request.topics
    with db.session() as session:
        runs = system_runs(session, collection, [a, b], request.system)
        conn = session.connection()
        names = {label: snapshot_topics(conn, get_snapshot(session, collection, label).pk)
                 for label in (a, b)}
        common = core_topic_ids(session, collection, [a, b])
        if topic_set_name(topics) is not None:  # all and core: every core topic
            common &= topic_set_topic_ids(session, collection, topics)
            if not common:
                raise FieldError("topics", f"topic set {topics!r} has no topic both "
                                 f"{a} and {b} have")
        core = sorted(common, key=lambda t: natural_key(names[b][t][0]))
        first = ranking_keys(conn, runs[a][0], depth)
        later = ranking_keys(conn, runs[b][0], depth)
        lineage = lineage_of(db, collection,
                             runs=[(label, tag) for label, (_, tag) in runs.items()],
                             topics=topics, session=session)
    result = agreement(first, later, core, depth=depth, p=request.rbo_p)
    rows = []
    for row in result["topics"]:
        topic = row["topic"]
        rows.append(TopicAgreement(**{**row, "topic": {a: names[a][topic][0],
                                                       b: names[b][topic][0]},
                                      "topic_key": names[b][topic][1]}))
    return RankingAgreementResult(
        collection=collection, system=request.system, snapshots=[a, b],
        runs={label: tag for label, (_, tag) in runs.items()}, depth=depth,
        rbo_p=request.rbo_p, topic_set=topics, n_topics=len(core), mean_ktu=result["mean_ktu"],
        mean_rbo=result["mean_rbo"], n_ktu=result["n_ktu"], n_rbo=result["n_rbo"], topics=rows,
        lineage=lineage)
