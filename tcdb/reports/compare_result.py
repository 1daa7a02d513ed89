"""What `compare` returns: the runs' means, every tested pair, and the outcome breakdown.

Field names are the `--json` keys of `tcdb report compare`; `to_frame()` is one row per pair,
`runs_frame()` one per run and `outcome_frame()` one per pair and outcome, for notebooks and
the dashboard's charts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, computed_field

from tcdb.operations import Result
from tcdb.operations.lineage import Lineage
from tcdb.operations.paper import PaperTable
from tcdb.reports.aggregates import figure_said
from tcdb.reports.paper_tables import (
    BETTER,
    WORSE,
    bootstrap_note,
    letter,
    summed_note,
    test_said,
    topics_said,
)

if TYPE_CHECKING:
    import pandas as pd


OUTCOMES = ("neither", "only_a", "only_b", "both")


class FamilyDesign(BaseModel):
    """How the pairs were grouped into families for the correction."""

    design: str  # all-pairs, baseline, vs-earlier
    baseline: str | None
    n_families: int


class CompareRun(BaseModel):
    run: str
    system: str | None
    submitted: str | None  # ISO date
    mean: float | None  # the sum over topics for a count measure (NumRet…): `aggregate`
    ci_low: float | None = None  # with bootstrap samples only
    ci_high: float | None = None


class ComparePair(BaseModel):
    """One pair's tests (`tcdb.analysis.significance.compare_runs`), effect size, intervals."""

    run_a: str
    run_b: str
    family: str
    n_topics: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    diff_t_low: float | None
    diff_t_high: float | None
    p_t: float | None
    p_wilcoxon: float | None
    p_ranksum: float | None
    p_sign: float | None
    p_permutation: float | None
    wins: int
    losses: int
    p_t_corrected: float | None
    p_wilcoxon_corrected: float | None
    p_ranksum_corrected: float | None
    p_sign_corrected: float | None
    p_permutation_corrected: float | None
    effect_size: float | None  # Cohen's d_z
    diff_ci_low: float | None = None  # with bootstrap samples only
    diff_ci_high: float | None = None


class BothFound(BaseModel):
    """Topics where both runs rank the relevant document in the top k: ESL and RR."""

    n: int
    mean_esl_a: float | None
    mean_esl_b: float | None
    p_esl: float | None
    p_esl_wilcoxon: float | None
    mrr_a: float | None
    mrr_b: float | None
    p_rr: float | None
    p_rr_wilcoxon: float | None


class OnlyOne(BaseModel):
    """Topics where only one run finds it: the binomial test of only-A vs only-B."""

    n_only_a: int
    n_only_b: int
    p_value: float | None


class Decision(BaseModel):
    """Lin et al.'s two decision rules and the family results they rest on."""

    esl_test: str
    alpha: float
    better_only_one: bool
    worse_only_one: bool
    better_both: bool
    worse_both: bool
    significantly_better: bool
    does_no_harm: bool


class OutcomePair(BaseModel):
    run_a: str
    run_b: str
    family: str
    n_topics: int
    counts: dict[str, int]  # neither, only_a, only_b, both → topics
    shares: dict[str, float | None]
    both: BothFound
    only_one: OnlyOne
    decision: Decision


class Outcomes(BaseModel):
    """The outcome breakdown; not applicable unless every topic has one relevant document."""

    applicable: bool
    reason: str | None
    k: int
    alpha: float
    pairs: list[OutcomePair]


class CompareResult(Result):
    """Pairwise tests between runs on one snapshot within test families, and the outcome
    breakdown when the qrels have one relevant document per topic."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    correction: str
    family: FamilyDesign
    topic_set: str | None
    n_topics: int
    alpha: float
    permutations: int
    seed: int
    bootstrap: int
    runs: list[CompareRun]
    pairs: list[ComparePair]
    outcomes: Outcomes
    lineage: Lineage | None = None  # what the figures were computed from
    aggregate: str = "mean"  # what a run's `mean` is: "sum" for counts, as trec_eval's `all`

    def paper_table(self) -> PaperTable:
        """Runs and means, marks from the paired t-test corrected within each family."""
        return compare_paper(self)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tests(self) -> dict[str, str]:
        """Each p-value's test in words, by JSON key (corrected ones as `correction` says)."""
        from tcdb.vocabulary import SIGNIFICANCE_TESTS as TESTS

        words = {f"p_{t}": TESTS[t] for t in ("t", "wilcoxon", "ranksum", "sign", "permutation")}
        return {**words, **{f"{k}_corrected": f"{v}, {self.correction_description}"
                            for k, v in words.items()},
                "only_one.p_value": TESTS["binomial"] + " of only-A vs only-B topics, "
                "uncorrected",
                "both.p_esl": TESTS["t"] + ", uncorrected",
                "both.p_rr": TESTS["t"] + ", uncorrected",
                "both.p_esl_wilcoxon": TESTS["wilcoxon"] + ", uncorrected",
                "both.p_rr_wilcoxon": TESTS["wilcoxon"] + ", uncorrected"}

    @computed_field  # type: ignore[prop-decorator]
    @property
    def correction_description(self) -> str:
        """The correction in words, and within which family it applies."""
        from tcdb.vocabulary import CORRECTIONS

        return (f"{CORRECTIONS.get(self.correction, self.correction)} correction within each "
                "family")

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: its family, means, difference, p-values raw and corrected, wins,
        losses, effect size and intervals, with the snapshot, qrels and measure."""
        import pandas as pd

        columns = list(ComparePair.model_fields)
        return pd.DataFrame(
            [{"collection": self.collection, "snapshot": self.snapshot, "qrels": self.qrels,
              "measure": self.measure, "correction": self.correction, **p.model_dump()}
             for p in self.pairs],
            columns=["collection", "snapshot", "qrels", "measure", "correction", *columns])

    def runs_frame(self) -> pd.DataFrame:
        """One row per run: `run, system, submitted, mean, ci_low, ci_high`."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs],
                            columns=list(CompareRun.model_fields))

    def outcome_frame(self) -> pd.DataFrame:
        """The outcome breakdown as `pair, outcome, topics, share` (one row per pair and
        outcome; empty when not applicable)."""
        import pandas as pd

        rows = [{"pair": f"{p.run_a} vs {p.run_b}", "outcome": outcome,
                 "topics": p.counts[outcome], "share": p.shares[outcome]}
                for p in self.outcomes.pairs for outcome in OUTCOMES if outcome in p.counts]
        return pd.DataFrame(rows, columns=["pair", "outcome", "topics", "share"])


def compare_paper(result: CompareResult, test: str = "t") -> PaperTable:
    """Runs with their mean; marks from the pairs' corrected p-values of `test`."""
    runs = [r.run for r in result.runs]
    means = {r.run: r.mean for r in result.runs}
    baseline = result.family.baseline if result.family.design == "baseline" else None
    marks: dict[str, str] = dict.fromkeys(runs, "")
    for pair in result.pairs:
        p = getattr(pair, f"p_{test}_corrected")
        a, b = pair.run_a, pair.run_b
        if p is None or p >= result.alpha or means[a] is None or means[b] is None \
                or means[a] == means[b]:
            continue
        winner, loser = (a, b) if means[a] > means[b] else (b, a)  # type: ignore[operator]
        if baseline is not None:
            other = a if b == baseline else b
            marks[other] += BETTER if winner == other else WORSE
        else:
            marks[winner] += letter(runs.index(loser))
    if baseline is None:
        marks = {run: "".join(sorted(m, key=lambda c: (len(c), c))) for run, m in marks.items()}
    boot = bool(result.bootstrap)
    columns = ([] if baseline else ["#"]) + ["run", "system", result.measure] + (
        ["95 % CI low", "95 % CI high"] if boot else [])
    rows = [([] if baseline else [letter(i)]) + [r.run, r.system, r.mean] + (
        [r.ci_low, r.ci_high] if boot else []) for i, r in enumerate(result.runs)]
    how = test_said(test, result.correction)
    design = {"baseline": f"each run vs the baseline {baseline}",
              "vs-earlier": "each run vs the runs submitted before it",
              "all-pairs": "all pairs"}[result.family.design]
    if baseline:
        legend = (f"{BETTER} / {WORSE}: significantly better / worse than the baseline "
                  f"{baseline} (p < {result.alpha:g}, {how}).")
    else:
        legend = (f"Superscripts: the letters of the runs this run is significantly better "
                  f"than (p < {result.alpha:g}, {how} within each family: {design}).")
    topics = topics_said(result.topic_set)
    figure = figure_said(result.measure, result.aggregate)
    caption = (f"{figure[0].upper()}{figure[1:]} on {result.collection} {result.snapshot}, "
               f"qrels {result.qrels}, {topics} ({result.n_topics} topics); best in bold. "
               f"{legend}{summed_note(result.measure, result.aggregate, result.n_topics)}")
    return PaperTable(columns=columns, rows=rows, figures={result.measure: True},
                      marks=[{result.measure: marks[r.run]} for r in result.runs],
                      caption=caption, label="tab:compare", lineage=result.lineage,
                      notes=bootstrap_note(result.bootstrap, result.seed))
