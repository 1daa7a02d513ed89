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
with the same seed, so the same resampled topic sets).

The report (`compare_report`) is a dict::

    {collection, snapshot, qrels, measure, correction, family{design, baseline, n_families},
     topic_set, n_topics, alpha, permutations, seed, bootstrap,
     runs: [{run, system, submitted, mean[, ci_low, ci_high]}],
     pairs: [compare_runs row… + effect_size[, diff_ci_low, diff_ci_high]],
     outcomes: {applicable, reason, k, alpha, pairs: [{run_a, run_b, family,
                                                       **outcome_breakdown}]}}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tcdb.analysis.means import trec_eval_mean
from tcdb.errors import NotFoundError, OptionError
from tcdb.progress import Progress
from tcdb.reports.results import CompareReport
from tcdb.vocabulary import Correction, one_of

K = 100  # the outcome breakdown's cutoff, as in Lin et al.'s study (MRR@100)
PERMUTATIONS = 10_000


def compare_report(
    collection: str,
    snapshot: str,
    qrels: str,
    runs: Sequence[str] | None,
    measure: str,
    correction: Correction | str = Correction.holm,
    k: int = K,
    *,
    compute: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
    baseline: str | None = None,
    vs_earlier: bool = False,
    permutations: int = PERMUTATIONS,
    alpha: float = 0.05,
    topics: str | None = None,
    progress: bool = False,
) -> CompareReport:
    """Significance tests between runs on one snapshot within test families, and the outcome
    breakdown.

    Why: a difference in means is only worth reporting with its p-values, corrected within the
    family of comparisons the claim rests on; with one relevant document per topic, where each
    run finds it says more. `runs` None: every run of the snapshot (the baseline is added when
    missing). `progress`: a bar on stderr (a terminal's) while the pairs are tested.
    """
    from tcdb.analysis.families import all_pairs, baseline_pairs, submission_order
    from tcdb.analysis.outcomes import outcome_breakdown
    from tcdb.analysis.significance import compare_runs, paired_effect_size
    from tcdb.reports.run_scores import load_run_scores

    tags = None if runs is None else list(dict.fromkeys(runs))
    if tags is not None and baseline is not None and baseline not in tags:
        tags = [baseline, *tags]
    if tags is not None and len(tags) < 2:
        raise OptionError("--run", "compare needs at least two different runs")
    correction = one_of(Correction, correction, "--correction",
                        "unknown correction {value!r}; use {choices}")
    _check(k, bootstrap, permutations, alpha, baseline, vs_earlier)
    data = load_run_scores(collection, snapshot, qrels, tags, measure, compute=compute,
                           topics=topics, ranks=True)
    wide, tags = data.wide, list(data.wide.columns)
    if len(tags) < 2:
        raise OptionError("--run", f"snapshot {snapshot!r} has {len(tags)} run(s); compare "
                          "needs at least two")
    if baseline is not None:
        if baseline not in tags:
            raise NotFoundError(f"no run {baseline!r} in snapshot {snapshot!r} to be the "
                                "baseline")
        pairs, design = baseline_pairs(tags, baseline), "baseline"
    elif vs_earlier:
        pairs, design = _earlier(data.submitted), "vs-earlier"
        tags = submission_order(data.submitted)  # the runs table in the order they came
    else:
        pairs, design = all_pairs(tags), "all-pairs"
    with Progress("testing pairs of runs", total=len(pairs),
                  enabled=progress and len(pairs) > 1) as bar:
        table = compare_runs(wide, [(a, b) for a, b, _ in pairs], correction=correction,
                             families=[f for _, _, f in pairs], permutations=permutations,
                             seed=seed, on_pair=bar.advance)
    rows = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    for row in rows:
        difference = (wide[row["run_a"]] - wide[row["run_b"]]).to_numpy(dtype=float)
        row["effect_size"] = paired_effect_size(difference)
        if bootstrap:
            ci = mean_ci(difference, bootstrap, seed)
            row["diff_ci_low"], row["diff_ci_high"] = ci["low"], ci["high"]
    outcomes: dict[str, Any] = {"applicable": data.outcome_reason is None,
                                "reason": data.outcome_reason, "k": k, "alpha": alpha,
                                "pairs": []}
    if data.outcome_reason is None:
        for a, b, family in pairs:
            outcomes["pairs"].append({"run_a": a, "run_b": b, "family": family,
                                      **outcome_breakdown(data.ranks[a], data.ranks[b], k,
                                                          alpha)})
    return {
        "collection": collection,
        "snapshot": snapshot,
        "qrels": qrels,
        "measure": data.measure,
        "correction": correction,
        "family": {"design": design, "baseline": baseline,
                   "n_families": len({f for _, _, f in pairs})},
        "topic_set": topics,
        "n_topics": len(wide),
        "alpha": alpha,
        "permutations": permutations,
        "seed": seed,
        "bootstrap": bootstrap,
        "runs": [{"run": tag, "system": data.systems[tag],
                  "submitted": _iso(data.submitted[tag]),
                  "mean": trec_eval_mean(wide[tag].tolist()),
                  **_interval(wide[tag].to_numpy(dtype=float), bootstrap, seed)}
                 for tag in tags],
        "pairs": rows,
        "outcomes": outcomes,
    }


def _check(k: int, bootstrap: int, permutations: int, alpha: float, baseline: str | None,
           vs_earlier: bool) -> None:
    """Refuse options that cannot mean anything, before any work is done."""
    if k < 1:
        raise OptionError("--k", "k must be at least 1")
    if bootstrap < 0:
        raise OptionError("--bootstrap", "the number of bootstrap samples cannot be negative")
    if permutations < 0:
        raise OptionError("--permutations", "the number of permutations cannot be negative "
                          "(0: no randomisation test)")
    if not 0 < alpha < 1:
        raise OptionError("--alpha", f"the significance level must be between 0 and 1, not "
                          f"{alpha}")
    if baseline is not None and vs_earlier:
        raise OptionError("--baseline/--vs-earlier", "give one family design: every run vs a "
                          "baseline, or each run vs the earlier ones")


def _earlier(submitted: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Each run vs every earlier-submitted one; clear errors for undated runs or no order."""
    from tcdb.analysis.families import earlier_pairs

    undated = [tag for tag, date in submitted.items() if date is None]
    if undated:
        raise OptionError("--vs-earlier", f"run(s) without a submitted date: "
                          f"{', '.join(undated)} (set it with `tcdb run update COLLECTION "
                          "SNAPSHOT TAG --date YYYY-MM-DD`, or leave them out with --run)")
    pairs = earlier_pairs(submitted)
    if not pairs:
        raise OptionError("--vs-earlier", "every run has the same submitted date: none was "
                          "submitted earlier than another")
    return pairs


def _iso(date: Any) -> str | None:
    return None if date is None else date.isoformat()


def mean_ci(values: np.ndarray, n_samples: int, seed: int) -> dict[str, Any]:
    """Percentile bootstrap interval (95 %) of the mean of per-topic values over topics."""
    from tcdb.analysis.bootstrap import bootstrap_ci

    return bootstrap_ci(lambda weights: weights[0] @ values, [len(values)], n_samples,
                        seed=seed)


def _interval(values: np.ndarray, n_samples: int, seed: int) -> dict[str, Any]:
    if not n_samples:
        return {}
    ci = mean_ci(values, n_samples, seed)
    return {"ci_low": ci["low"], "ci_high": ci["high"]}
