"""Pairwise significance tests between runs over the same topics, with correction.

Every p-value comes straight from scipy on the two per-topic score vectors, so the numbers equal
what a reader gets by calling scipy themselves: paired t-test (`ttest_rel`), Wilcoxon
signed-rank (`wilcoxon`, scipy defaults: zero differences dropped), Wilcoxon rank-sum
(`ranksums`, unpaired), sign test (`binomtest` on the count of positive among non-zero
differences, p = 0.5, two-sided). Where scipy's test is undefined (identical vectors in a
t-test, no non-zero difference in the sign test) the p-value is NaN and stays NaN after
correction; corrections count only the defined p-values of a test.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float
from tcdb.analysis.means import DECIMALS, trec_eval_mean
from tcdb.vocabulary import Correction

__all__ = ["bonferroni", "compare_runs", "correct", "holm", "paired_effect_size", "sign_test"]

TESTS = ("t", "wilcoxon", "ranksum", "sign")


def bonferroni(p_values: Sequence[float]) -> np.ndarray:
    """Bonferroni: p × m capped at 1, m = number of non-NaN p-values."""
    p = np.asarray(p_values, dtype=float)
    m = int(np.sum(~np.isnan(p)))
    return np.minimum(p * m, 1.0)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down correction (controls the family-wise error rate, unlike FDR methods).

    Sort the m defined p-values ascending p(1) ≤ … ≤ p(m); the adjusted p(i) is
    max_{j ≤ i} min(1, (m − j + 1) · p(j)), returned in the input order; NaN stays NaN.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    m = len(defined)
    if m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = np.minimum((m - np.arange(m)) * p[order], 1.0)
    out[order] = np.maximum.accumulate(scaled)
    return out


def correct(p_values: Sequence[float], method: Correction | str) -> np.ndarray:
    """Apply the named correction to one family of p-values."""
    if method == "holm":
        return holm(p_values)
    if method == "bonferroni":
        return bonferroni(p_values)
    if method == "none":
        return np.asarray(p_values, dtype=float).copy()
    raise ValueError(f"unknown correction {method!r}; use bonferroni, holm or none")


def sign_test(a: np.ndarray, b: np.ndarray) -> tuple[int, int, float]:
    """(#topics a > b, #topics a < b, two-sided binomial p on them); p NaN if no difference."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    wins, losses = int(np.sum(diff > 0)), int(np.sum(diff < 0))
    if wins + losses == 0:
        return wins, losses, float("nan")
    return wins, losses, float(stats.binomtest(wins, wins + losses, 0.5).pvalue)


def paired_effect_size(difference: np.ndarray) -> float | None:
    """Cohen's d for paired samples (d_z): mean per-topic difference / its standard deviation
    (ddof 1); None when it is undefined (fewer than two topics, or no spread). Differences
    are rounded as means are first, so float noise between equal scores is no spread."""
    if len(difference) < 2:
        return None
    difference = np.round(np.asarray(difference, dtype=float), DECIMALS)
    spread = float(np.std(difference, ddof=1))
    return json_float(float(np.mean(difference)) / spread) if spread > 0 else None


def _safe_p(test: Any, *args: np.ndarray) -> float:
    """scipy's p-value, NaN where scipy refuses the input (e.g. empty vectors).

    scipy's RuntimeWarnings for degenerate input (all differences zero) are silenced: the
    p-value it returns (NaN or 1.0) is reported as is.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(test(*args).pvalue)
    except ValueError:
        return float("nan")


def compare_runs(
    wide: pd.DataFrame,
    pairs: Iterable[tuple[Any, Any]] | None = None,
    correction: Correction | str = Correction.holm,
) -> pd.DataFrame:
    """Test each pair of runs (columns of a topic × run frame; NaN scores count 0).

    `pairs` defaults to all pairs in column order. One row per pair: `run_a, run_b, n_topics,
    mean_a, mean_b, mean_diff` (a − b), `p_t, p_wilcoxon, p_ranksum, p_sign`, `wins, losses`, and
    `p_<test>_corrected` with the correction applied across the pairs, per test.
    Why: comparing many runs inflates false positives; correcting per test family keeps the
    reported significance honest.
    """
    if correction not in ("bonferroni", "holm", "none"):
        raise ValueError(f"unknown correction {correction!r}; use bonferroni, holm or none")
    scores = wide.astype(float).fillna(0.0)
    pair_list = list(combinations(scores.columns, 2)) if pairs is None else list(pairs)
    for a, b in pair_list:
        for name in (a, b):
            if name not in scores.columns:
                raise ValueError(f"run {name!r} is not a column of the score table")
    rows = []
    for a, b in pair_list:
        x = scores[a].to_numpy()
        y = scores[b].to_numpy()
        wins, losses, p_sign = sign_test(x, y)
        rows.append(
            {
                "run_a": a,
                "run_b": b,
                "n_topics": len(x),
                "mean_a": trec_eval_mean(x.tolist()),
                "mean_b": trec_eval_mean(y.tolist()),
                "mean_diff": float((x - y).mean()) if len(x) else float("nan"),
                "p_t": _safe_p(stats.ttest_rel, x, y),
                "p_wilcoxon": _safe_p(stats.wilcoxon, x, y),
                "p_ranksum": _safe_p(stats.ranksums, x, y),
                "p_sign": p_sign,
                "wins": wins,
                "losses": losses,
            }
        )
    columns = [
        "run_a", "run_b", "n_topics", "mean_a", "mean_b", "mean_diff",
        "p_t", "p_wilcoxon", "p_ranksum", "p_sign", "wins", "losses",
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    for test in TESTS:
        table[f"p_{test}_corrected"] = correct(table[f"p_{test}"].to_numpy(), correction)
    return table
