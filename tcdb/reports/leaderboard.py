"""Was each new state of the art on this snapshot a significant improvement? The leaderboard over
time (`tcdb report leaderboard`).

The runs' per-topic scores (one measure, one qrels set, every judged topic ∩ an optional topic
set; `tcdb.reports.run_scores`) and their `submitted` dates go to
`tcdb.analysis.leaderboard.sota_chain`. Every run needs a date: a run without one is named in
the error (give the dated runs, or date it with `tcdb run update … --date`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, computed_field, field_validator, model_validator

from tcdb.errors import FieldError, some
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.operations.paper import PaperTable
from tcdb.reports.aggregates import figure_said
from tcdb.reports.fields import TopicChoice, alpha_option, qrels_option, topic_set_option
from tcdb.reports.paper_tables import BETTER, summed_note, test_said, topics_said
from tcdb.scoring.measures import MeasureName
from tcdb.vocabulary import Correction, PairedTest

if TYPE_CHECKING:
    import pandas as pd


# How each run stands in the chain (the dashboard's colours, in this order).
KINDS = ["new SOTA, significant", "new SOTA, not significant", "first SOTA", "other run"]


class LeaderboardRequest(Request):
    """Which snapshot's runs to order by date, and how each new state of the art is tested."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    measure: MeasureName = option(help="Measure.", short="-m")
    qrels: Name = qrels_option()
    test: str = option(PairedTest.t.value,
                       help=f"Paired test of each step: {', '.join(PairedTest)}.")
    alpha: float = alpha_option()
    correction: str = option(Correction.holm.value, help="Correction within each new entry's "
                             "family (it vs every earlier SOTA): "
                             f"{', '.join(Correction)}.")
    topics: TopicChoice = topic_set_option()
    runs: Names | None = option(None, help="Only these runs (repeat; default: every run, each "
                                 "needs a submitted date).")
    permutations: int = option(10_000, metavar="N", help="Resamples of the randomisation test.")
    seed: int = option(0, help="Seed of the randomisation test.")
    compute: bool = option(True, help="Compute missing scores first (else only read).")

    @field_validator("test")
    @classmethod
    def _known_test(cls, value: str) -> str:
        if value not in tuple(PairedTest):
            raise ValueError(f"unknown test {value!r}; use {', '.join(PairedTest)}")
        return value

    @field_validator("correction")
    @classmethod
    def _known_correction(cls, value: str) -> str:
        if value not in tuple(Correction):
            raise ValueError(f"unknown correction {value!r}; use {', '.join(Correction)}")
        return value

    @model_validator(mode="after")
    def _resamples(self) -> Self:
        if self.permutations < 1 and self.test == PairedTest.permutation:
            raise FieldError("permutations", "the randomisation test needs at least one "
                             "resample")
        return self


class EarlierSota(BaseModel):
    """A new SOTA against one earlier SOTA: a member of its test family."""

    run: str
    mean_diff: float | None
    p: float | None
    p_corrected: float | None
    significant: bool


class LeaderboardRun(BaseModel):
    """One run in submission order; a new SOTA carries its tests against the earlier ones."""

    run: str
    system: str | None
    submitted: str | None  # ISO date
    mean: float
    best_before: float | None  # the best mean of the runs submitted before it
    is_sota: bool
    previous_sota: str | None  # the SOTA it replaced (None: the first, or not a SOTA)
    p: float | None
    p_corrected: float | None
    significant: bool | None  # vs the previous SOTA
    significant_vs_all: bool | None  # vs every earlier SOTA
    family: list[EarlierSota] | None
    state_of_the_art: float  # the best mean up to this run: the SOTA step line
    kind: str  # one of KINDS


class LeaderboardResult(Result):
    """Runs by submission date, the SOTA chain and whether each step was significant."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    test: str
    alpha: float
    correction: str
    topic_set: str | None
    n_topics: int
    permutations: int
    seed: int
    chain: list[str]
    n_steps: int  # new SOTAs after the first
    n_significant: int  # of those, significant vs the previous SOTA
    runs: list[LeaderboardRun]
    lineage: Lineage | None = None  # what the figures were computed from
    aggregate: str = "mean"  # what `mean` is: "sum" over topics for a count (NumRet…)

    def paper_table(self) -> PaperTable:
        """Runs in submission order; † on a significant new state of the art."""
        return leaderboard_paper(self)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tests(self) -> dict[str, str]:
        """`p` and `p_corrected` in words: the test, and the correction within each family."""
        from tcdb.vocabulary import CORRECTIONS, SIGNIFICANCE_TESTS

        test = SIGNIFICANCE_TESTS.get(self.test, self.test)
        return {"p": f"{test}, uncorrected",
                "p_corrected": f"{test}, {CORRECTIONS.get(self.correction, self.correction)} "
                "correction within each new entry's family (vs every earlier SOTA)"}

    def to_frame(self) -> pd.DataFrame:
        """One row per run in submission order: `run, system, submitted, mean, best_before,
        is_sota, previous_sota, p, p_corrected, significant, significant_vs_all,
        state_of_the_art, kind` (the family of tests is in `runs[i].family`)."""
        import pandas as pd

        columns = [c for c in LeaderboardRun.model_fields if c != "family"]
        return pd.DataFrame([r.model_dump(exclude={"family"}) for r in self.runs],
                            columns=columns)


@operation("leaderboard", command="report leaderboard")
def leaderboard(request: LeaderboardRequest, db: Database) -> LeaderboardResult:
    """Leaderboard over time: each run whose mean beats every earlier run's is a new SOTA;
    is it significantly better than the SOTA it replaced (and than every earlier SOTA)?

    Means are compared after rounding (equal means tie; a tie is no new SOTA); runs submitted
    the same day are not earlier than one another. Each new SOTA is tested against every
    earlier SOTA, corrected within that family. Why: a leaderboard crowns whoever tops the
    mean; whether the new entry is significantly better is the question a reader has.
    """
    from tcdb.analysis.leaderboard import sota_chain
    from tcdb.analysis.means import aggregate_word
    from tcdb.reports.run_scores import load_run_scores

    r = request
    data = load_run_scores(db, r.collection, r.snapshot, r.qrels, r.runs, r.measure,
                           compute=r.compute, topics=r.topics)
    if data.wide.shape[1] == 0:
        raise FieldError("runs", f"snapshot {r.snapshot!r} has no runs")
    undated = [tag for tag, date in data.submitted.items() if date is None]
    if undated:
        raise FieldError("runs", f"run(s) without a submitted date: {some(undated)} "
                         "(date them with `tcdb run update COLLECTION SNAPSHOT TAG --date "
                         "YYYY-MM-DD`, or give only the dated runs)")
    rows = sota_chain(data.wide, data.submitted, PairedTest(r.test), r.alpha,
                      Correction(r.correction), permutations=r.permutations, seed=r.seed)
    rows = _summed(rows, data.wide, data.measure)
    runs, best = [], None
    for row in rows:
        best = row["mean"] if best is None else max(best, row["mean"])
        runs.append(LeaderboardRun(**row, system=data.systems[row["run"]],
                                   state_of_the_art=best, kind=_kind(row)))
    steps = [run for run in runs if run.previous_sota is not None]
    return LeaderboardResult(
        collection=r.collection, snapshot=r.snapshot, qrels=r.qrels, measure=data.measure,
        test=r.test, alpha=r.alpha, correction=r.correction, topic_set=r.topics,
        n_topics=len(data.wide), permutations=r.permutations, seed=r.seed,
        chain=[run.run for run in runs if run.is_sota], n_steps=len(steps),
        lineage=lineage_of(db, r.collection, runs=[(r.snapshot, run.run) for run in runs],
                           qrels=[(r.snapshot, r.qrels)], topics=r.topics,
                           measures=[data.measure]),
        n_significant=sum(bool(run.significant) for run in steps), runs=runs,
        aggregate=aggregate_word(data.measure))


def _summed(rows: list[dict[str, Any]], wide: pd.DataFrame, measure: str
            ) -> list[dict[str, Any]]:
    """A count's means as sums over the topics (trec_eval's `all` line). The chain and its
    tests stay on means: over one topic set the sum is n × the mean, the same order."""
    from tcdb.analysis.means import aggregate, sums_over_topics, trec_eval_mean

    if not sums_over_topics(measure):
        return rows
    # integer-valued per-topic counts: equal means are equal sums, so the map is exact
    sums = {trec_eval_mean(wide[tag].tolist()): aggregate(measure, wide[tag].tolist())
            for tag in wide.columns}
    return [{**row, **{key: sums.get(row[key], row[key]) for key in ("mean", "best_before")
                       if row[key] is not None}} for row in rows]


def _kind(row: dict[str, object]) -> str:
    """A run's place in the chain: a significant or not significant new SOTA, the first, or
    any other run."""
    if not row["is_sota"]:
        return KINDS[3]
    if row["previous_sota"] is None:
        return KINDS[2]
    return KINDS[0] if row["significant"] else KINDS[1]


def leaderboard_paper(result: LeaderboardResult) -> PaperTable:
    """Runs in submission order; † on a new SOTA significantly better than the one it
    replaced."""
    m = result.measure
    rows = [[r.run, r.system, r.submitted, r.mean, "yes" if r.is_sota else "",
             r.previous_sota, r.p_corrected] for r in result.runs]
    marks = [{m: BETTER if r.is_sota and r.significant else ""} for r in result.runs]
    how = test_said(result.test, result.correction)
    topics = topics_said(result.topic_set)
    caption = (f"Leaderboard over time: {figure_said(m, result.aggregate)} on "
               f"{result.collection} {result.snapshot}, "
               f"qrels {result.qrels}, {topics} ({result.n_topics} topics), in submission "
               f"order; best in bold. {BETTER}: a new state of the art significantly better "
               f"than the one it replaced (p < {result.alpha:g}, {how} within each new entry's "
               "family of earlier SOTAs; p: corrected)."
               f"{summed_note(m, result.aggregate, result.n_topics)}")
    return PaperTable(columns=["run", "system", "submitted", m, "SOTA", "replaces", "p"],
                      rows=rows, figures={m: True}, marks=marks, p_columns=["p"],
                      caption=caption, label="tab:leaderboard", lineage=result.lineage)
