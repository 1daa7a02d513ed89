"""Outcome breakdown of two runs on qrels with one relevant document per topic (MS MARCO style).

After Lin, Campos, Craswell, Mitra and Yilmaz ("Significant improvements over the state of the
art? A case study of the MS MARCO document ranking leaderboard", SIGIR 2021): with a single
relevant document, a topic's outcome for a run is just whether, and where, the run retrieved it
in the top k (the study: k = 100). Comparing two runs splits the topics into neither / only A /
only B / both, and each kind is tested on its own instead of folding them into one mean:

* on "both" topics, the expected search length (ESL: the rank of the relevant document, rank 1
  scores 1, as the study defines it; lower is better) and the reciprocal rank (RR = 1 / rank),
  each with the paired t-test (`ttest_rel`) and the Wilcoxon signed-rank test (`wilcoxon`);
* on "only one" topics, the two-sided binomial test (p = 0.5) of only-A vs only-B counts.

The two decision rules (A against B, at level α, p-values uncorrected). The study's exact
wording was not at hand; tcdb's reading of it:

* **A is worse on a family** when B wins it significantly: more only-B than only-A topics with
  binomial p < α, or on "both" topics a higher mean ESL for A with p < α (the `both_test`, the
  t-test by default: ESL counts documents read, an interval scale, so a mean and a t-test on it
  are permissible — unlike on RR);
* **A is significantly better than B** when A wins at least one family significantly (the mirror
  images of the above) and is worse on neither;
* **A does no harm** (relative to B) when A is worse on neither family: what a new entry should
  at least show against the state of the art.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float

__all__ = ["decisions", "outcome_breakdown", "outcome_table"]

OUTCOMES = ("neither", "only_a", "only_b", "both")


def _rank(value: Any, k: int | None) -> float:
    """A rank as float, NaN when absent, missing or beyond the cutoff k."""
    if value is None:
        return float("nan")
    rank = float(value)
    if np.isnan(rank):
        return rank
    if rank < 1 or rank != int(rank):
        raise ValueError(f"rank must be a positive integer, got {value!r}")
    if k is not None and rank > k:
        return float("nan")
    return rank


def outcome_table(
    ranks_a: Mapping[Any, Any] | pd.Series,
    ranks_b: Mapping[Any, Any] | pd.Series,
    k: int | None = None,
) -> pd.DataFrame:
    """`[topic, rank_a, rank_b, outcome]` over the union of topics (absent = not retrieved)."""
    a = dict(ranks_a.items())
    b = dict(ranks_b.items())
    topics = list(dict.fromkeys([*a, *b]))
    rows = []
    for topic in topics:
        ra, rb = _rank(a.get(topic), k), _rank(b.get(topic), k)
        found_a, found_b = not np.isnan(ra), not np.isnan(rb)
        if found_a and found_b:
            outcome = "both"
        elif found_a:
            outcome = "only_a"
        elif found_b:
            outcome = "only_b"
        else:
            outcome = "neither"
        rows.append({"topic": topic, "rank_a": ra, "rank_b": rb, "outcome": outcome})
    return pd.DataFrame(rows, columns=["topic", "rank_a", "rank_b", "outcome"])


def _paired_p(x: np.ndarray, y: np.ndarray, test: str = "t") -> float:
    """Paired t-test or Wilcoxon signed-rank p-value; NaN with fewer than two pairs or where
    scipy's test is undefined (no non-zero difference)."""
    if len(x) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            if test == "wilcoxon":
                return float(stats.wilcoxon(x, y).pvalue)
            return float(stats.ttest_rel(x, y).pvalue)
        except ValueError:
            return float("nan")


def decisions(only_a: int, only_b: int, p_binomial: float | None, mean_esl_a: float | None,
              mean_esl_b: float | None, p_esl: float | None, alpha: float = 0.05
              ) -> dict[str, Any]:
    """The two decision rules of the module docstring, with the family results they rest on:
    `{alpha, better_only_one, worse_only_one, better_both, worse_both, significantly_better,
    does_no_harm}`."""
    def significant(p: float | None) -> bool:
        return p is not None and not np.isnan(p) and p < alpha

    better_only = only_a > only_b and significant(p_binomial)
    worse_only = only_b > only_a and significant(p_binomial)
    better_both = worse_both = False
    if mean_esl_a is not None and mean_esl_b is not None and significant(p_esl):
        better_both, worse_both = mean_esl_a < mean_esl_b, mean_esl_a > mean_esl_b
    harm = worse_only or worse_both
    return {"alpha": alpha, "better_only_one": better_only, "worse_only_one": worse_only,
            "better_both": better_both, "worse_both": worse_both,
            "significantly_better": (better_only or better_both) and not harm,
            "does_no_harm": not harm}


def outcome_breakdown(
    ranks_a: Mapping[Any, Any] | pd.Series,
    ranks_b: Mapping[Any, Any] | pd.Series,
    k: int | None = None,
    alpha: float = 0.05,
    both_test: str = "t",
) -> dict[str, Any]:
    """Counts and shares of neither/only_a/only_b/both, ESL and RR on "both", binomial test,
    and the decision rules (`both_test`, t or wilcoxon: the ESL test the rules use).

    `ranks_*` map topic → 1-based rank of the relevant document, None/NaN if not in the top k
    (ranks above `k`, when given, count as not retrieved). Returns a JSON-able dict:
    `n_topics, counts{…}, shares{…}, both{n, mean_esl_a, mean_esl_b, p_esl, p_esl_wilcoxon,
    mrr_a, mrr_b, p_rr, p_rr_wilcoxon}, only_one{n_only_a, n_only_b, p_value},
    decision{…}` (`p_esl`, `p_rr`: paired t-tests). NaN becomes None.
    """
    if both_test not in ("t", "wilcoxon"):
        raise ValueError(f"unknown test {both_test!r} for ESL; use t or wilcoxon")
    table = outcome_table(ranks_a, ranks_b, k)
    n = len(table)
    counts = {name: int((table["outcome"] == name).sum()) for name in OUTCOMES}
    shares = {name: (counts[name] / n if n else None) for name in OUTCOMES}
    both = table[table["outcome"] == "both"]
    ra = both["rank_a"].to_numpy(dtype=float)
    rb = both["rank_b"].to_numpy(dtype=float)
    esl_a, esl_b = ra, rb  # ESL = rank: the relevant document at rank 1 scores 1
    rr_a, rr_b = 1.0 / ra, 1.0 / rb
    n_a, n_b = counts["only_a"], counts["only_b"]
    p_binom = float(stats.binomtest(n_a, n_a + n_b, 0.5).pvalue) if n_a + n_b else float("nan")
    mean_a = json_float(esl_a.mean()) if len(both) else None
    mean_b = json_float(esl_b.mean()) if len(both) else None
    p_esl = {test: json_float(_paired_p(esl_a, esl_b, test)) for test in ("t", "wilcoxon")}
    return {
        "n_topics": n,
        "counts": counts,
        "shares": shares,
        "both": {
            "n": len(both),
            "mean_esl_a": mean_a,
            "mean_esl_b": mean_b,
            "p_esl": p_esl["t"],
            "p_esl_wilcoxon": p_esl["wilcoxon"],
            "mrr_a": json_float(rr_a.mean()) if len(both) else None,
            "mrr_b": json_float(rr_b.mean()) if len(both) else None,
            "p_rr": json_float(_paired_p(rr_a, rr_b)),
            "p_rr_wilcoxon": json_float(_paired_p(rr_a, rr_b, "wilcoxon")),
        },
        "only_one": {"n_only_a": n_a, "n_only_b": n_b, "p_value": json_float(p_binom)},
        "decision": {"esl_test": both_test,
                     **decisions(n_a, n_b, json_float(p_binom), mean_a, mean_b,
                                 p_esl[both_test], alpha)},
    }
