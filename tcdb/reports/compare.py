"""Are these runs' differences on one snapshot significant? Test families and outcome breakdown.

The per-topic scores of the chosen runs (one measure, one qrels set; every topic the qrels set
judges, ∩ a topic set when one is named, unanswered ones 0 as `trec_eval -c`;
`tcdb.reports.run_scores`) go to `tcdb.analysis.significance.compare_runs`: paired t-test,
Wilcoxon signed-rank, Wilcoxon rank-sum, sign test and the randomisation (permutation) test per
pair, corrected within the pair's family (`tcdb.analysis.families`): all pairs (one family), every
run vs a baseline (one family), or each run vs every run submitted before it (one family per
run). When the qrels set has exactly one relevant document (grade > 0) per topic — MS MARCO
style — the rank of that document in each run, in trec_eval's order (score descending, then
document id descending, unresolved entries included), feeds
`tcdb.analysis.outcomes.outcome_breakdown` for the same pairs, cut at the top k (100, as in Lin
et al.'s study), with its decision rules at level α.

Each pair also carries its effect size, Cohen's d for paired samples (d_z, the mean of the
per-topic differences over their standard deviation), and the t-test's 95 % interval of the mean
difference. With `bootstrap=S` samples, each run's mean and each pair's mean difference also get
a percentile bootstrap interval over topics (`tcdb.analysis.bootstrap.bootstrap_ci`; every run
with the same seed, so the same resampled topic sets). The result types are in
`tcdb.reports.compare_result`.
"""

from __future__ import annotations

from typing import Any, Self

import numpy as np
from pydantic import field_validator, model_validator

from tcdb.analysis.means import aggregate, aggregate_word, sums_over_topics
from tcdb.errors import FieldError, NotFoundError
from tcdb.operations import Database, Name, Names, Request, argument, operation, option
from tcdb.operations.lineage import lineage_of
from tcdb.progress import Progress
from tcdb.reports.compare_result import (
    ComparePair,
    CompareResult,
    CompareRun,
    FamilyDesign,
    OutcomePair,
    Outcomes,
)
from tcdb.reports.fields import TopicChoice, alpha_option, qrels_option, topic_set_option
from tcdb.scoring.measures import MeasureName
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, Correction

K = 100  # the outcome breakdown's cutoff, as in Lin et al.'s study (MRR@100)
PERMUTATIONS = 10_000


class CompareRequest(Request):
    """Which runs of one snapshot to test against each other, in which families, how."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()
    runs: Names | None = option(None, help="Run tag (repeat; default: every run of the "
                                 "snapshot).")
    measure: MeasureName = option(help="Measure.", short="-m")
    baseline: Name | None = option(None, metavar="RUN", help="Test every other run against "
                                  "this one (one family).")
    vs_earlier: bool = option(False, help="Test each run against every run submitted on an "
                              "earlier date (`run update --date`); one family per run.")
    correction: str = option(Correction.holm.value, help="Multiple-comparison correction within "
                             f"each family: {', '.join(Correction)} (bh: Benjamini–Hochberg).")
    topics: TopicChoice = topic_set_option()
    k: int = option(K, help="Cutoff of the outcome breakdown (100 as in Lin et al.'s MS MARCO "
                    "study).")
    alpha: float = alpha_option("Level of the outcome decision rules.")
    permutations: int = option(PERMUTATIONS, metavar="N", help="Resamples of the randomisation "
                               "test (0: skip it).")
    bootstrap: int = option(0, metavar="N", help="Bootstrap samples for 95 % intervals of each "
                            f"run's mean and each pair's mean difference (e.g. "
                            f"{BOOTSTRAP_SAMPLES}; 0: none).")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the randomisation test and bootstrap.")
    compute: bool = option(True, help="Compute missing scores first (else only read).")
    progress: bool = option(True, help="A progress bar while the pairs are tested (all pairs "
                            "of a large track take minutes); drawn only on a terminal's stderr.")

    @field_validator("correction")
    @classmethod
    def _known_correction(cls, value: str) -> str:
        if value not in tuple(Correction):
            raise ValueError(f"unknown correction {value!r}; use {', '.join(Correction)}")
        return value

    @field_validator("k")
    @classmethod
    def _positive_k(cls, value: int) -> int:
        if value < 1:
            raise ValueError("k must be at least 1")
        return value

    @field_validator("bootstrap")
    @classmethod
    def _samples(cls, value: int) -> int:
        if value < 0:
            raise ValueError("the number of bootstrap samples cannot be negative")
        return value

    @field_validator("permutations")
    @classmethod
    def _permutations(cls, value: int) -> int:
        if value < 0:
            raise ValueError("the number of permutations cannot be negative (0: no "
                             "randomisation test)")
        return value

    @model_validator(mode="after")
    def _one_design(self) -> Self:
        if self.baseline is not None and self.vs_earlier:
            raise FieldError("baseline/vs_earlier", "give one family design: every run vs a "
                             "baseline, or each run vs the earlier ones")
        return self


@operation("compare", command="report compare")
def compare(request: CompareRequest, db: Database) -> CompareResult:
    """Significance tests per pair of runs, corrected within the family; outcome breakdown for
    one-relevant qrels.

    Paired t-test, Wilcoxon signed-rank, Wilcoxon rank-sum, sign test and randomisation test;
    effect size d_z and the t-test's 95 % interval of the mean difference. With one relevant
    document per topic (Lin et al., SIGIR 2021): neither / only A / only B / both in the top k,
    ESL (the relevant document's rank) and RR on "both" topics, the binomial test on "only one"
    topics, and the rules: A is "better" when it wins a family (only-one by the binomial test,
    or both by a lower ESL, t-test) at level α and loses none; "no harm" when it loses none.
    Why: a difference in means is only worth reporting with its p-values, corrected within the
    family of comparisons the claim rests on. No runs: every run of the snapshot (the baseline
    is added when missing).
    """
    from tcdb.analysis.families import all_pairs, baseline_pairs, submission_order
    from tcdb.analysis.outcomes import outcome_breakdown
    from tcdb.analysis.significance import compare_runs, paired_effect_size
    from tcdb.reports.run_scores import load_run_scores

    r = request
    tags = None if r.runs is None else list(dict.fromkeys(r.runs))
    if tags is not None and r.baseline is not None and r.baseline not in tags:
        tags = [r.baseline, *tags]
    if tags is not None and len(tags) < 2:
        raise FieldError("runs", "compare needs at least two different runs")
    data = load_run_scores(db, r.collection, r.snapshot, r.qrels, tags, r.measure,
                           compute=r.compute, topics=r.topics, ranks=True)
    wide, tags = data.wide, list(data.wide.columns)
    if len(tags) < 2:
        raise FieldError("runs", f"snapshot {r.snapshot!r} has {len(tags)} run(s); compare "
                         "needs at least two")
    if r.baseline is not None:
        if r.baseline not in tags:
            raise NotFoundError(f"no run {r.baseline!r} in snapshot {r.snapshot!r} to be the "
                                "baseline")
        pairs, design = baseline_pairs(tags, r.baseline), "baseline"
    elif r.vs_earlier:
        pairs, design = _earlier(data.submitted), "vs-earlier"
        tags = submission_order(data.submitted)  # the runs table in the order they came
    else:
        pairs, design = all_pairs(tags), "all-pairs"
    with Progress("testing pairs of runs", total=len(pairs),
                  enabled=r.progress and len(pairs) > 1) as bar:
        table = compare_runs(wide, [(a, b) for a, b, _ in pairs], correction=r.correction,
                             families=[f for _, _, f in pairs], permutations=r.permutations,
                             seed=r.seed, on_pair=bar.advance)
    rows = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    for row in rows:
        difference = (wide[row["run_a"]] - wide[row["run_b"]]).to_numpy(dtype=float)
        row["effect_size"] = paired_effect_size(difference)
        if r.bootstrap:
            ci = mean_ci(difference, r.bootstrap, r.seed)
            row["diff_ci_low"], row["diff_ci_high"] = ci["low"], ci["high"]
    outcomes = Outcomes(applicable=data.outcome_reason is None, reason=data.outcome_reason,
                        k=r.k, alpha=r.alpha, pairs=[])
    if data.outcome_reason is None:
        outcomes.pairs = [
            OutcomePair(run_a=a, run_b=b, family=family,
                        **outcome_breakdown(data.ranks[a], data.ranks[b], r.k, r.alpha))
            for a, b, family in pairs]
    # A count (NumRet…) is summed over topics as trec_eval's `all` line does; the pairs' tests
    # stay on means (the sum is n × the mean over the same topics: same order, same p).
    counts = sums_over_topics(data.measure)
    return CompareResult(
        collection=r.collection, snapshot=r.snapshot, qrels=r.qrels, measure=data.measure,
        correction=r.correction,
        family=FamilyDesign(design=design, baseline=r.baseline,
                            n_families=len({f for _, _, f in pairs})),
        topic_set=r.topics, n_topics=len(wide), alpha=r.alpha, permutations=r.permutations,
        seed=r.seed, bootstrap=r.bootstrap,
        runs=[CompareRun(run=tag, system=data.systems[tag],
                         submitted=_iso(data.submitted[tag]),
                         mean=aggregate(data.measure, wide[tag].tolist()),
                         **_interval(wide[tag].to_numpy(dtype=float), r.bootstrap, r.seed,
                                     scale=len(wide) if counts else 1))
              for tag in tags],
        pairs=[ComparePair(**row) for row in rows],
        outcomes=outcomes, aggregate=aggregate_word(data.measure),
        lineage=lineage_of(db, r.collection, runs=[(r.snapshot, t) for t in tags],
                           qrels=[(r.snapshot, r.qrels)], topics=r.topics,
                           measures=[data.measure]))


def _earlier(submitted: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each run vs every earlier-submitted one; clear errors for undated runs or no order."""
    from tcdb.analysis.families import earlier_pairs

    undated = [tag for tag, date in submitted.items() if date is None]
    if undated:
        raise FieldError("vs_earlier", f"run(s) without a submitted date: "
                         f"{', '.join(undated)} (set it with `tcdb run update COLLECTION "
                         "SNAPSHOT TAG --date YYYY-MM-DD`, or leave them out of the runs)")
    pairs = earlier_pairs(submitted)
    if not pairs:
        raise FieldError("vs_earlier", "every run has the same submitted date: none was "
                         "submitted earlier than another")
    return pairs


def _iso(date: Any) -> str | None:
    return None if date is None else date.isoformat()


def mean_ci(values: np.ndarray, n_samples: int, seed: int) -> dict[str, Any]:
    """Percentile bootstrap interval (95 %) of the mean of per-topic values over topics."""
    from tcdb.analysis.bootstrap import bootstrap_ci

    return bootstrap_ci(lambda weights: weights[0] @ values, [len(values)], n_samples,
                        seed=seed)


def _interval(values: np.ndarray, n_samples: int, seed: int, scale: int = 1
              ) -> dict[str, Any]:
    """The run's bootstrap interval; `scale` = n topics turns the mean's into the sum's."""
    if not n_samples:
        return {}
    ci = mean_ci(values, n_samples, seed)
    if scale == 1:
        return {"ci_low": ci["low"], "ci_high": ci["high"]}
    return {k: None if ci[c] is None else ci[c] * scale
            for k, c in (("ci_low", "low"), ("ci_high", "high"))}
