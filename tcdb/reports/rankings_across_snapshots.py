"""`tcdb report rankings`: do the snapshots of a collection rank the systems alike?

LongEval's own question. For every pair of the chosen snapshots (`--pairs all`, the default),
or for each later one against the first (`--pairs first`, LongEval's reference snapshot), the
systems followed across all of them are ranked by their mean in the earlier and in the later
snapshot, and the rankings compared with Kendall's τ-b and τ-c (scipy), Pearson's r between the
means (scipy; as LongEval's `evaluate_system_ranking.py` publishes beside τ) and τ_AP (the
earlier ranking the truth), with the systems whose rank changed most
(`tcdb.analysis.snapshot_rankings`). The means come

* from per-topic scores (`--from scores`, the default: runs evaluated or per-topic scores
  imported; `tcdb.reports.persistence_scores`), each pair over the topics both snapshots have
  (matched by the collection's topic identity, judged in both: named in the result), a topic
  a system did not answer counting 0 as `trec_eval -c`; or
* from an organiser's results table (`--from results`, `tcdb results import`): the published
  figures, over whatever topics the organiser averaged.

Means are rounded before ranking (`tcdb.analysis.means`), so equal means tie; r is over the
same rounded means. A system without a figure in every chosen snapshot is listed under
`skipped`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, SerializerFunctionWrapHandler, field_validator, model_serializer

from tcdb.errors import FieldError
from tcdb.operations import (
    Database,
    Labels,
    Name,
    Names,
    Request,
    Result,
    TwoOrMoreSnapshots,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.published.listing import TableSource
from tcdb.reports.fields import ALL_QRELS, QrelsSets, qrels_sets_option, topics_option

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.operations.paper import PaperTable

LARGEST_CHANGES = 5
TAU_AP_TRUTH = "the earlier snapshot's ranking"
PAIR_COLUMNS = ["measure", "earlier", "later", "against_first", "n_systems", "n_topics",
                "tau_b", "p_tau_b", "pearson_r", "p_pearson_r", "tau_c", "p_tau_c", "tau_ap",
                "n_changed"]


class RankingsRequest(Request):
    """Which snapshots, measures and source of means the rankings compare."""

    collection: Name = argument(help="Collection name.")
    snapshots: TwoOrMoreSnapshots | None = option(
        None, flag="--snapshots", short="-s", help="Snapshots, first one first (repeat, or "
        "space-separated; default: every complete one, or every one with published results).")
    measures: Labels = option(["nDCG@10"], short="-m", help="Measure (repeat).")
    source: Literal["scores", "results"] = option(
        "scores", flag="--from", metavar="scores|results", help="Rank by means of per-topic "
        "scores (scores) or by an imported results table's figures (results).")
    qrels: QrelsSets = qrels_sets_option()
    topics: Name = topics_option()
    systems: Names | None = option(None, flag="--system", help="Only this system (repeat).")
    pairs: Literal["all", "first"] = option(
        "all", flag="--pairs", metavar="all|first", help="Which pairs of snapshots to compare: "
        "every pair (all) or each later snapshot against the first (first).")
    largest: int = option(LARGEST_CHANGES, ge=1, le=1000,
                          help="Systems whose rank changed most, listed per pair.")
    compute: bool = option(True, help="Compute missing scores first (--no-compute: only read "
                           "stored ones, as the dashboard does).")

    @field_validator("measures")
    @classmethod
    def _some(cls, measures: list[str]) -> list[str]:
        if not measures:
            raise ValueError("give at least one measure")
        return measures


class RankMove(BaseModel):
    """A system whose rank differs between the two snapshots (+: climbed in the later one)."""

    system: str
    rank_earlier: int
    rank_later: int
    rank_change: int
    score_earlier: float | None
    score_later: float | None


class SnapshotPair(BaseModel):
    """Two snapshots' rankings compared; `topics` the topics the means are over (scores)."""

    earlier: str
    later: str
    against_first: bool
    n_systems: int
    n_topics: int | None  # None: a results table's means (the organiser's topics)
    topics: list[str] | None  # external ids in the earlier snapshot
    tau_b: float | None
    p_tau_b: float | None
    pearson_r: float | None  # Pearson's r between the two snapshots' (rounded) means
    p_pearson_r: float | None
    tau_c: float | None
    p_tau_c: float | None
    tau_ap: float | None  # the earlier ranking the truth
    n_changed: int
    largest_changes: list[RankMove]
    reason: str | None = None  # why there are no figures


class SystemRanking(BaseModel):
    """A system's mean and rank in each snapshot (over that snapshot's own topics)."""

    system: str
    score: dict[str, float | None]
    rank: dict[str, int]


class SkippedSystem(BaseModel):
    system: str
    reason: str


class RankingsMeasure(BaseModel):
    aggregate: str  # mean, or sum for a count (NumRet…)
    systems: list[SystemRanking]
    pairs: list[SnapshotPair]
    skipped: list[SkippedSystem]


class RankingsResult(Result):
    """Kendall's τ-b and τ-c, Pearson's r and τ_AP (earlier ranking the truth) between the
    system rankings of every pair of snapshots (or each against the first: `pairs`), with the
    systems whose rank changed most."""

    collection: str
    source: str  # scores or results
    snapshots: list[str]
    qrels: dict[str, str] | None  # per snapshot (scores)
    topics: str  # the selection (scores)
    topics_said: str  # which topics each pair's means are over, in words
    pairs: Literal["all", "first"] = "all"  # every pair, or each against the first
    tau_ap_truth: str = TAU_AP_TRUTH
    measures: dict[str, RankingsMeasure]
    tables: list[TableSource] = []  # the results tables the means came from (results)
    lineage: Lineage | None = None
    # several qrels sets (`--qrels` repeated or all): each set's rankings, keyed by its name;
    # the fields above are then the first set's, and the lineage names every set
    qrels_sets: dict[str, RankingsResult] | None = None
    qrels_left_out: dict[str, list[str]] | None = None  # all: set → the snapshots lacking it
    qrels_judges: dict[str, str] | None = None  # several sets: set → who judged it (lineage)

    @model_serializer(mode="wrap")
    def _by_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """One set: `--json` as ever; several: each set's rankings under its name."""
        from tcdb.reports.persistence_sets import by_set

        return by_set(handler(self), "source", "pairs")

    def paper_table(self) -> PaperTable:
        """The pairs' τ, captioned with where the means come from: the topics each pair's
        means are over, or the results tables (file and sha256) they were published in."""
        from tcdb.operations.paper import frame_table, lineage_caption

        source = (f"means: {self.topics_said}" if self.source == "scores" else
                  "published figures from " + ", ".join(
                      f"{t.source} (sha256 {t.checksum})" for t in self.tables))
        lineage = lineage_caption(self.lineage) if self.source == "scores" else \
            "measures " + ", ".join(self.measures)
        if self.qrels_sets:
            from tcdb.reports.persistence_sets import several_said

            source += "; " + several_said(self.qrels_judges or {})
        which = ("each pair of snapshots" if self.pairs == "all" else
                 f"each later snapshot and {self.snapshots[0]}")
        caption = (f"Kendall's τ-b and τ-c, Pearson's r between the means (scipy, two-sided p) "
                   f"and τ_AP (truth: {self.tau_ap_truth}) between the system rankings of "
                   f"{which} of {self.collection}; {source}; {lineage}.")
        return frame_table(self.to_frame(), caption=caption, lineage=self.lineage,
                           label="tab:rankings")

    def to_frame(self) -> pd.DataFrame:
        """One row per measure × pair of snapshots: τ-b, Pearson's r and τ-c with scipy's p,
        τ_AP, and how many systems and topics they are over."""
        import pandas as pd

        if self.qrels_sets:  # each set's rows under a leading `qrels` column
            return pd.concat([r.to_frame().assign(qrels=name)[["qrels", *PAIR_COLUMNS]]
                              for name, r in self.qrels_sets.items()], ignore_index=True)
        rows = [{"measure": m, **p.model_dump(exclude={"topics", "largest_changes", "reason"})}
                for m, figures in self.measures.items() for p in figures.pairs]
        return pd.DataFrame(rows, columns=PAIR_COLUMNS)


@operation("ranking_across_snapshots", command="report rankings")
def ranking_across_snapshots(request: RankingsRequest, db: Database) -> RankingsResult:
    """Do the snapshots rank the systems alike? Kendall's τ-b, τ-c, Pearson's r and τ_AP
    between the system rankings of every pair of snapshots (or each against the first), with
    the systems that moved most.

    Why: LongEval asks whether a system's place among the others persists as the collection
    changes, not only its score.
    """
    from tcdb.reports.persistence_sets import qrels_choices, side_by_side

    if request.source == "results":
        if isinstance(request.qrels, list) and (len(request.qrels) > 1 or ALL_QRELS in
                                                request.qrels):
            raise FieldError("qrels", "a results table's figures name no qrels set: rank from "
                             "per-topic scores (--from scores) to compare qrels sets")
        return _from_results(request, db)
    labels = request.snapshots or _complete_snapshots(request.collection, db)
    asked = qrels_choices(db, request.collection, labels, request.qrels)
    return side_by_side({str(c): _from_scores(request, db, labels, c) for c in asked.choices},
                        asked)


def _pair_list(labels: list[str], which: str = "all") -> list[tuple[str, str]]:
    """Every pair (earlier, later) in the given order, those against the first first; only
    those when `which` is `first`."""
    return [(labels[i], labels[j]) for i in range(1 if which == "first" else len(labels))
            for j in range(i + 1, len(labels))]


def _pair(earlier: str, later: str, first: str, figures: dict, n_topics: int | None,
          topics: list[str] | None) -> SnapshotPair:
    return SnapshotPair(
        earlier=earlier, later=later, against_first=earlier == first,
        n_topics=n_topics, topics=topics,
        **{k: figures[k] for k in ("n_systems", "tau_b", "p_tau_b", "pearson_r", "p_pearson_r",
                                   "tau_c", "p_tau_c", "tau_ap", "n_changed")},
        largest_changes=[RankMove(**c) for c in figures["largest_changes"]],
        reason=None if figures["n_systems"] >= 2 else "fewer than two systems to rank")


def _systems(means: dict[str, dict[str, float]], labels: list[str]) -> list[SystemRanking]:
    """Per system its mean and rank (1 = best, ties share the best) in every snapshot."""
    import pandas as pd

    from tcdb.analysis import json_float
    from tcdb.analysis.snapshot_rankings import ranks

    by_snapshot = {s: ranks(pd.Series({system: v[s] for system, v in means.items()}))
                   for s in labels}
    out = [SystemRanking(system=system, score={s: json_float(v[s]) for s in labels},
                         rank={s: int(by_snapshot[s][system]) for s in labels})
           for system, v in means.items()]
    return sorted(out, key=lambda r: (r.rank[labels[0]], r.system))


def _from_results(request: RankingsRequest, db: Database) -> RankingsResult:
    import pandas as pd

    from tcdb.analysis.snapshot_rankings import compare_rankings
    from tcdb.published.listing import published_means
    from tcdb.reports.persistence_scores import choose_systems
    from tcdb.sorting import natural_key

    if request.topics != "all":
        raise FieldError("topics", "a results table gives each run's mean over the organiser's "
                         "topics: rank from per-topic scores (--from scores) to choose topics")
    with db.session() as session:
        data = published_means(session, request.collection, request.snapshots,
                               request.measures)
    labels = data.snapshots
    if len(labels) < 2:
        raise FieldError("snapshots", f"the published results of {request.collection!r} cover "
                         f"one snapshot ({labels[0]}): rankings compare at least two")
    first = labels[0]
    measures: dict[str, RankingsMeasure] = {}
    for measure, by_system in data.values.items():
        known = sorted(by_system, key=natural_key)
        chosen = choose_systems(known, request.systems, None,
                                f"the published results of {request.collection!r}")
        skipped, means = [], {}
        for system in chosen:
            missing = [s for s in labels if s not in by_system[system]]
            if missing:
                skipped.append(SkippedSystem(system=system, reason=f"no published {measure} "
                                             f"for snapshot {missing[0]!r}"))
            else:
                means[system] = by_system[system]
        pairs = []
        for earlier, later in _pair_list(labels, request.pairs):
            figures = compare_rankings(pd.Series({s: v[earlier] for s, v in means.items()},
                                                 dtype=float),
                                       pd.Series({s: v[later] for s, v in means.items()},
                                                 dtype=float), request.largest)
            pairs.append(_pair(earlier, later, first, figures, None, None))
        measures[measure] = RankingsMeasure(
            aggregate="published", systems=_systems(means, labels), pairs=pairs,
            skipped=skipped)
    return RankingsResult(
        collection=request.collection, source="results", snapshots=labels, qrels=None,
        topics="published", pairs=request.pairs, topics_said="each run's published figure "
        "(over the organiser's topics of that snapshot)", measures=measures, tables=data.sources,
        lineage=lineage_of(db, request.collection, measures=list(data.values)))


def _from_scores(request: RankingsRequest, db: Database, labels: list[str],
                 qrels: str | dict[str, str]) -> RankingsResult:
    """The rankings on one qrels choice: a set on every snapshot, or one per snapshot."""
    import pandas as pd

    from tcdb.analysis.means import aggregate, aggregate_word
    from tcdb.analysis.snapshot_rankings import compare_rankings
    from tcdb.reports.persistence_scores import load_persistence_scores
    from tcdb.sorting import natural_key

    data = load_persistence_scores(db, request.collection, labels, request.measures,
                                   qrels, request.topics, compute=request.compute,
                                   systems=request.systems)
    labels = data.snapshots
    first = labels[0]
    measures: dict[str, RankingsMeasure] = {}
    common = {(a, b): sorted(set(data.topics[a]) & set(data.topics[b]))
              for a, b in _pair_list(labels, request.pairs)}
    for measure, frame in data.frames.items():
        values: dict[tuple[str, str], dict[int, float]] = {}
        for system, snapshot, topic, value in frame.itertuples(index=False):
            values.setdefault((system, snapshot), {})[int(topic)] = float(value)
        followed = sorted(data.runs[measure], key=natural_key)

        def mean(system: str, snapshot: str, topics: list[int],
                 values: dict[tuple[str, str], dict[int, float]] = values,
                 measure: str = measure) -> float:
            by_topic = values.get((system, snapshot), {})
            return aggregate(measure, [by_topic.get(t, 0.0) for t in topics], len(topics))

        own = {system: {s: mean(system, s, data.topics[s]) for s in labels}
               for system in followed}
        pairs = []
        for earlier, later in _pair_list(labels, request.pairs):
            topics = common[(earlier, later)]
            names = data.topic_names[earlier]
            said = sorted((names.get(t, (str(t), ""))[0] for t in topics), key=natural_key)
            if not topics:
                pairs.append(SnapshotPair(
                    earlier=earlier, later=later, against_first=earlier == first,
                    n_systems=len(followed), n_topics=0, topics=[], tau_b=None, p_tau_b=None,
                    pearson_r=None, p_pearson_r=None, tau_c=None, p_tau_c=None, tau_ap=None,
                    n_changed=0, largest_changes=[],
                    reason="no topic both snapshots have and judge"))
                continue
            figures = compare_rankings(
                pd.Series({s: mean(s, earlier, topics) for s in followed}, dtype=float),
                pd.Series({s: mean(s, later, topics) for s in followed}, dtype=float),
                request.largest)
            pairs.append(_pair(earlier, later, first, figures, len(topics), said))
        measures[measure] = RankingsMeasure(
            aggregate=aggregate_word(measure), systems=_systems(own, labels), pairs=pairs,
            skipped=[SkippedSystem(system=s["system"], reason=s["reason"])
                     for s in data.skipped[measure]])
    selection = request.topics
    topics_said = ("the topics both snapshots of a pair have and judge" if selection == "all" else
                   "the core topics (judged in every chosen snapshot)" if selection == "core"
                   else f"the topics of set {selection!r} both snapshots of a pair have and "
                   "judge")
    return RankingsResult(
        collection=request.collection, source="scores", snapshots=labels, qrels=data.qrels,
        topics=selection, topics_said=topics_said, pairs=request.pairs, measures=measures,
        lineage=lineage_of(db, request.collection, runs=[
            (label, tag) for by_system in data.runs.values() for tags in by_system.values()
            for label, tag in tags.items()], qrels=list(data.qrels.items()),
            topics=selection, measures=list(data.frames)))


def _complete_snapshots(collection: str, db: Database) -> list[str]:
    """Every complete snapshot of the collection, in its order."""
    from sqlmodel import col, select

    from tcdb.catalog.collections import get_collection
    from tcdb.schema import Snapshot, SnapshotStatus

    with db.session() as session:
        coll = get_collection(session, collection)
        labels = list(session.exec(select(Snapshot.label).where(
            Snapshot.collection_id == coll.pk, Snapshot.status == SnapshotStatus.complete)
            .order_by(col(Snapshot.ordinal), col(Snapshot.label))).all())
    if len(labels) < 2:
        raise FieldError("snapshots", f"{collection!r} has {len(labels)} complete snapshot(s): "
                         "rankings compare at least two")
    return labels
