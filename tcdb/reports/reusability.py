"""Is a collection reusable? The TREC-8 re-judging comparison, fed from the database.

Rank every run by its mean score under qrels A (`qrels`, the original judgments) and under
qrels B (`vs`, e.g. the expanded set after a new pool), compare the rankings (τ, τ-b, τ_AP,
per-topic τ), and count per run how many of its top-K documents A never judged and B found
relevant. The figures come from `tcdb.analysis.reusability`; this module only loads what it
needs with Core SQL:

* per-topic scores stored by `tcdb.scoring.evaluate` (missing ones are computed first);
* the top-K entries of every run in one query, in trec_eval's order (the stored `eval_rank`:
  an index range scan per run and topic);
* both qrels sets' judgments.

Means follow `trec_eval -c` over the topics judged in both A and B, under the topic selection
(all, core or a topic set, as every report): a topic a run did not answer counts 0. A run
without stored scores for a measure under A or B (an imported run lacking it) is left out of
that measure and named in `skipped`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, model_validator

from tcdb.errors import FieldError, InputError
from tcdb.operations import (
    Database,
    Name,
    Names,
    Request,
    Result,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.operations.paper import PaperTable
from tcdb.queries import load_judgments, load_top_k, stored_scores
from tcdb.queries.topic_selection import select_topics
from tcdb.reports.common import Interval, per_topic_frame
from tcdb.reports.fields import qrels_option, topics_option
from tcdb.reports.paper_tables import counts_note, number
from tcdb.scoring.measures import MeasureNames
from tcdb.vocabulary import (
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    PERCENTILE_BOOTSTRAP,
    TAU_FIGURES,
    bootstrap_said,
    tau_legend,
)

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.schema import Run

LARGEST_CHANGES = 5
# the τ variants the bootstrap gives intervals for: report key → tcdb.analysis method
TAU_METHODS: tuple[tuple[str, Literal["omit_ties", "b"]], ...] = (
    ("kendall_tau", "omit_ties"), ("tau_b", "b"))


class ReusabilityRequest(Request):
    """Which two qrels sets of a snapshot, which runs and measures a reusability report ranks."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()  # set A (the original judgments unless named)
    vs: Name = option(help="Qrels set B (e.g. the expanded judgments).", flag="--vs")
    measures: MeasureNames = option(["AP"], help="Measure (repeat).", short="-m")
    runs: Names | None = option(None, help="Only these run tags (repeat).")
    all_runs: bool = option(False, help="Every run of the snapshot (the default when no run "
                            "is named).")
    depth: int = option(100, ge=1, help="Top K counted for unjudged / new relevant.")
    topics: Name = topics_option()
    threshold: float = option(0.9, help="Per-topic τ threshold.")
    bootstrap: int = option(0, ge=0, le=1_000_000,
                            help=f"Bootstrap samples for τ CIs (e.g. {BOOTSTRAP_SAMPLES}; 0: "
                            "none).")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the bootstrap.")
    compute: bool = option(True, help="Compute missing scores first (else only read).")

    @model_validator(mode="after")
    def _consistent(self) -> ReusabilityRequest:
        if self.runs and self.all_runs:
            raise FieldError("runs/all_runs", "give runs (run tags) or all_runs, not both")
        if self.qrels == self.vs:
            raise FieldError("vs", f"compare two different qrels sets, not {self.qrels!r} "
                             "with itself")
        return self


class TopicTau(BaseModel):
    topic: str
    tau: float | None
    n_runs: int


class PerTopicTauSummary(BaseModel):
    min: float | None
    median: float | None
    below_threshold: list[str]  # topics whose τ is under the threshold


class ReusabilityRun(BaseModel):
    """One run under A and B: mean, rank, and its top-K documents A never judged."""

    run: str
    score_a: float | None
    rank_a: int
    score_b: float | None
    rank_b: int
    rank_change: int  # places gained under B (+) or lost (−)
    moved: str  # climbed, fell or same (the sign of rank_change, for a legend)
    n_retrieved: int | None  # None: the run has no stored entries (imported scores only)
    unjudged_top_k: int | None
    new_relevant_top_k: int | None


class RankChange(BaseModel):
    run: str
    rank_a: int
    rank_b: int
    rank_change: int
    new_relevant_top_k: int | None


class ReusabilityMeasure(BaseModel):
    """One measure's figures; with fewer than two comparable runs only `error` and `skipped`."""

    n_runs: int
    skipped: list[str]  # runs without scores under both sets
    error: str | None = None
    kendall_tau: float | None = None
    tau_b: float | None = None
    tau_ap: float | None = None
    n_topics: int | None = None
    per_topic_tau: PerTopicTauSummary | None = None
    tau_per_topic: list[TopicTau] = []
    runs: list[ReusabilityRun] = []
    largest_rank_changes: list[RankChange] = []
    bootstrap: dict[str, Interval] | None = None  # kendall_tau, tau_b → interval


class ReusabilityResult(Result):
    """The run rankings under qrels A and B compared, per measure."""

    collection: str
    snapshot: str
    qrels: str
    vs: str
    depth: int
    order: str
    topics: str
    n_topics: int
    threshold: float
    measures: dict[str, ReusabilityMeasure]
    seconds: dict[str, float]  # load, total
    seed: int | None = None  # of the bootstrap behind the intervals (None: no intervals)
    lineage: Lineage | None = None  # what the figures were computed from

    def paper_table(self) -> PaperTable:
        """Scores and ranks under both qrels sets per measure; τ in the caption."""
        return reusability_paper(self)

    def to_frame(self) -> pd.DataFrame:
        """One row per measure × run: scores and ranks under A and B, the rank change, the
        top-K counts, and the measure's τ, τ-b and τ_AP."""
        import pandas as pd

        columns = ["measure", "run", "score_a", "rank_a", "score_b", "rank_b", "rank_change",
                   "n_retrieved", "unjudged_top_k", "new_relevant_top_k", "kendall_tau",
                   "tau_b", "tau_ap"]
        rows = [{"measure": name, **run.model_dump(exclude={"moved"}),
                 "kendall_tau": m.kendall_tau, "tau_b": m.tau_b, "tau_ap": m.tau_ap}
                for name, m in self.measures.items() for run in m.runs]
        return pd.DataFrame(rows, columns=columns)


def _moved(change: int) -> str:
    return "climbed" if change > 0 else ("fell" if change < 0 else "same")


@operation("reusability", command="report reusability")
def reusability(request: ReusabilityRequest, db: Database) -> ReusabilityResult:
    """Is the collection reusable? τ between the run rankings under two qrels sets."""
    from tcdb.analysis.means import counts_unanswered
    from tcdb.analysis.reusability import reusability_report as analyse
    from tcdb.analysis.reusability import unjudged_and_new_relevant
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids, qrels_topics
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import with_unanswered

    started = time.perf_counter()
    collection, snapshot, runs = request.collection, request.snapshot, request.runs or None
    names = list(request.measures)  # parsed by the request (MeasureNames)
    if request.compute:
        evaluate(db, collection, snapshot, request.qrels, names, runs)
        evaluate(db, collection, snapshot, request.vs, names, runs)
    with db.session() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        set_a = get_qrels_set(session, snap, request.qrels)
        set_b = get_qrels_set(session, snap, request.vs)
        run_list: list[Run] = get_runs(session, snap, runs)
        if not run_list:
            raise InputError(f"snapshot {snapshot}", None, "no runs to compare")
        run_ids = [r.pk for r in run_list]
        tags = {r.pk: r.tag for r in run_list}
        ids = measure_ids(conn, names)
        done_a = evaluations(conn, set_a.pk, run_ids, list(ids.values()))
        done_b = evaluations(conn, set_b.pk, run_ids, list(ids.values()))
        scores_a = stored_scores(conn, set_a.pk, run_ids, list(ids.values()))
        scores_b = stored_scores(conn, set_b.pk, run_ids, list(ids.values()))
        if any(counts_unanswered(n) for n in names):  # NumRel, NumQ: as trec_eval -c
            scores_a = with_unanswered(conn, set_a.pk, names, ids,
                                       qrels_topics(conn, set_a.pk, snap.pk), done_a, scores_a)
            scores_b = with_unanswered(conn, set_b.pk, names, ids,
                                       qrels_topics(conn, set_b.pk, snap.pk), done_b, scores_b)
        with_entries = [r.pk for r in run_list if r.n_entries > 0]
        top = load_top_k(conn, snap.pk, with_entries, request.depth)
        judgments_a = load_judgments(conn, set_a.pk)
        judgments_b = load_judgments(conn, set_b.pk)
        judged = set(judgments_a["topic"].unique().tolist()) & set(
            judgments_b["topic"].unique().tolist())
        topic_names = select_topics(session, collection, snap, sorted(judged), request.topics)
    loaded = time.perf_counter()

    wanted = list(topic_names)
    top = top[top["topic"].isin(wanted)]
    judgments_a = judgments_a[judgments_a["topic"].isin(wanted)]
    judgments_b = judgments_b[judgments_b["topic"].isin(wanted)]
    counts = unjudged_and_new_relevant(top, judgments_a, judgments_b)
    by_run = {tags[int(row.run)]: (int(row.n_retrieved), int(row.unjudged_a),
                                   int(row.new_relevant_b))
              for row in counts.itertuples(index=False)}
    has_entries = {tags[r] for r in with_entries}

    measures: dict[str, ReusabilityMeasure] = {}
    for name in names:
        mid = ids.get(name)
        usable = [r for r in run_ids
                  if mid is not None and (r, mid) in done_a and (r, mid) in done_b]
        skipped = [tags[r] for r in run_ids if r not in set(usable)]
        if len(usable) < 2:
            measures[name] = ReusabilityMeasure(
                n_runs=len(usable), skipped=skipped,
                error="fewer than two runs have scores under both qrels sets")
            continue
        per_a = per_topic_frame(scores_a, usable, tags, mid or 0, topic_names)
        per_b = per_topic_frame(scores_b, usable, tags, mid or 0, topic_names)
        figures = analyse(per_a, per_b, topics=list(topic_names.values()), measure=name,
                          threshold=request.threshold)
        run_rows = []
        for entry in figures["runs"]:
            n, unjudged, new = by_run.get(entry["run"], (0, 0, 0))
            present = entry["run"] in has_entries
            run_rows.append(ReusabilityRun(
                **entry, moved=_moved(entry["rank_change"]),
                n_retrieved=n if present else None,
                unjudged_top_k=unjudged if present else None,
                new_relevant_top_k=new if present else None))
        intervals = None
        if request.bootstrap:
            from tcdb.analysis.bootstrap import tau_ci

            intervals = {key: Interval(**tau_ci(per_a, per_b,
                                                   topics=list(topic_names.values()),
                                                   method=method, n_samples=request.bootstrap,
                                                   seed=request.seed))
                         for key, method in TAU_METHODS}
        measures[name] = ReusabilityMeasure(
            n_runs=figures["n_runs"], skipped=skipped, kendall_tau=figures["kendall_tau"],
            tau_b=figures["tau_b"], tau_ap=figures["tau_ap"], n_topics=figures["n_topics"],
            per_topic_tau=PerTopicTauSummary(**figures["per_topic_tau"]),
            tau_per_topic=[TopicTau(**t) for t in figures["tau_per_topic"]],
            runs=run_rows,
            largest_rank_changes=[
                RankChange(run=r.run, rank_a=r.rank_a, rank_b=r.rank_b,
                           rank_change=r.rank_change, new_relevant_top_k=r.new_relevant_top_k)
                for r in run_rows[:LARGEST_CHANGES] if r.rank_change != 0],
            bootstrap=intervals)
    return ReusabilityResult(
        collection=collection, snapshot=snapshot, qrels=request.qrels, vs=request.vs,
        depth=request.depth, order="trec_eval", topics=request.topics,
        n_topics=len(topic_names), threshold=request.threshold, measures=measures,
        seed=request.seed if request.bootstrap else None,
        seconds={"load": loaded - started, "total": time.perf_counter() - started},
        lineage=lineage_of(db, collection, runs=[(snapshot, t) for t in tags.values()],
                           qrels=[(snapshot, request.qrels), (snapshot, request.vs)],
                           topics=request.topics, measures=names))


def reusability_paper(result: ReusabilityResult) -> PaperTable:
    """Runs' scores and ranks under qrels A and B per measure; the caption holds each measure's
    τ (with the bootstrap interval when asked)."""
    a, b = result.qrels, result.vs
    columns = ["run", f"score {a}", f"rank {a}", f"score {b}", f"rank {b}", "rank change",
               f"new relevant top {result.depth}"]
    rows: list[list[Any]] = []
    groups: list[str | None] = []
    taus = []
    for measure, block in result.measures.items():
        for run in block.runs:
            rows.append([run.run, run.score_a, run.rank_a, run.score_b, run.rank_b,
                         run.rank_change, run.new_relevant_top_k])
            groups.append(measure)
        tau = f"{measure}: " + ", ".join(f"{name} {number(getattr(block, key))}"
                                         for key, name in TAU_FIGURES.items())
        interval = (block.bootstrap or {}).get("kendall_tau")
        if interval is not None:
            tau += (f" ({TAU_FIGURES['kendall_tau']} {100 * (1 - interval.alpha):g} % CI "
                    f"[{number(interval.low)}, {number(interval.high)}], {PERCENTILE_BOOTSTRAP}, "
                    f"{bootstrap_said(interval.n_samples, result.seed or 0)})")
        taus.append(tau)
    caption = (f"Reusability of {result.collection} {result.snapshot}: run rankings under "
               f"qrels {a} vs {b}, topics {result.topics} ({result.n_topics} topics); best "
               f"scores in bold. {'; '.join(taus)}. {tau_legend(f'the ranking under {b}')}."
               f"{counts_note(list(result.measures))}")
    return PaperTable(columns=columns, rows=rows,
                      figures={f"score {a}": True, f"score {b}": True}, groups=groups,
                      caption=caption, label="tab:reusability", lineage=result.lineage)
