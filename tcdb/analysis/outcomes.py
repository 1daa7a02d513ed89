"""Outcome breakdown of two runs on qrels with one relevant document per topic (MS MARCO style).

After Lin et al.: with a single relevant document, a topic's outcome for a run is just whether,
and where, the run retrieved it in the top k. Comparing two runs splits the topics into
neither / only A / only B / both. On "both" topics we compare mean expected search length
(ESL = rank − 1, the non-relevant documents read before the relevant one) and mean reciprocal
rank, with paired t-tests; on "only one" topics a binomial test (p = 0.5) asks whether one run
wins such topics more often than chance.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float

__all__ = ["outcome_breakdown", "outcome_table"]

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


def _paired_p(x: np.ndarray, y: np.ndarray) -> float:
    """Paired t-test p-value; NaN with fewer than two pairs."""
    if len(x) < 2:
        return float("nan")
    return float(stats.ttest_rel(x, y).pvalue)


def outcome_breakdown(
    ranks_a: Mapping[Any, Any] | pd.Series,
    ranks_b: Mapping[Any, Any] | pd.Series,
    k: int | None = None,
) -> dict[str, Any]:
    """Counts and shares of neither/only_a/only_b/both, ESL and RR on "both", binomial test.

    `ranks_*` map topic → 1-based rank of the relevant document, None/NaN if not in the top k
    (ranks above `k`, when given, count as not retrieved). Returns a JSON-able dict:
    `n_topics, counts{…}, shares{…}, both{n, mean_esl_a, mean_esl_b, p_esl, mrr_a, mrr_b, p_rr},
    only_one{n_only_a, n_only_b, p_value}`. NaN becomes None.
    """
    table = outcome_table(ranks_a, ranks_b, k)
    n = len(table)
    counts = {name: int((table["outcome"] == name).sum()) for name in OUTCOMES}
    shares = {name: (counts[name] / n if n else None) for name in OUTCOMES}
    both = table[table["outcome"] == "both"]
    ra = both["rank_a"].to_numpy(dtype=float)
    rb = both["rank_b"].to_numpy(dtype=float)
    esl_a, esl_b = ra - 1.0, rb - 1.0
    rr_a, rr_b = 1.0 / ra, 1.0 / rb
    n_a, n_b = counts["only_a"], counts["only_b"]
    p_binom = float(stats.binomtest(n_a, n_a + n_b, 0.5).pvalue) if n_a + n_b else float("nan")
    return {
        "n_topics": n,
        "counts": counts,
        "shares": shares,
        "both": {
            "n": len(both),
            "mean_esl_a": json_float(esl_a.mean()) if len(both) else None,
            "mean_esl_b": json_float(esl_b.mean()) if len(both) else None,
            "p_esl": json_float(_paired_p(esl_a, esl_b)),
            "mrr_a": json_float(rr_a.mean()) if len(both) else None,
            "mrr_b": json_float(rr_b.mean()) if len(both) else None,
            "p_rr": json_float(_paired_p(rr_a, rr_b)),
        },
        "only_one": {"n_only_a": n_a, "n_only_b": n_b, "p_value": json_float(p_binom)},
    }
