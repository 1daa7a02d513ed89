"""Pairwise significance tests between runs over the same topics, with correction.

Every p-value comes straight from scipy on the two per-topic score vectors, so the numbers equal
what a reader gets by calling scipy themselves: paired t-test (`ttest_rel`), Wilcoxon
signed-rank (`wilcoxon`, scipy defaults: zero differences dropped), Wilcoxon rank-sum
(`ranksums`, unpaired), sign test (`binomtest` on the count of positive among non-zero
differences, p = 0.5, two-sided) and the randomisation test (`permutation_test`,
`permutation_type='samples'`: each topic's two scores swapped or not, statistic the mean
difference, two-sided, `n_resamples` and `random_state` as given). Where scipy's test is
undefined (identical vectors in a t-test, no non-zero difference in the sign test) the p-value
is NaN and stays NaN after correction; corrections count only the defined p-values of a test.

A family is the set of comparisons one claim rests on (all pairs; every run vs a baseline; one
new run vs each earlier one): p-values are corrected within their family, never across families.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float
from tcdb.analysis.means import DECIMALS, trec_eval_mean
from tcdb.vocabulary import Correction

__all__ = ["benjamini_hochberg", "bonferroni", "compare_runs", "correct", "correct_within",
           "holm", "paired_effect_size", "p_value", "permutation_p", "sign_test", "t_interval"]

TESTS = ("t", "wilcoxon", "ranksum", "sign", "permutation")
PERMUTATIONS = 10_000  # resamples of the randomisation test unless told otherwise
_CELLS = 2_000_000  # resampled topic scores held at once (scipy's `batch`; same p-value)


def _adjusted(p_values: Sequence[float], method: str) -> np.ndarray:
    """statsmodels' `multipletests(p, method=method)` adjusted p-values over the defined
    p-values (multipletests has no notion of NaN: it would sort them in); NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    if defined.any():
        out[defined] = multipletests(p[defined], method=method)[1]
    return out


def bonferroni(p_values: Sequence[float]) -> np.ndarray:
    """Bonferroni: p × m capped at 1, m = number of non-NaN p-values (statsmodels)."""
    return _adjusted(p_values, "bonferroni")


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down correction (controls the family-wise error rate, unlike FDR methods).

    Sort the m defined p-values ascending p(1) ≤ … ≤ p(m); the adjusted p(i) is
    max_{j ≤ i} min(1, (m − j + 1) · p(j)), returned in the input order; NaN stays NaN
    (statsmodels' `multipletests(p, method="holm")`).
    """
    return _adjusted(p_values, "holm")


def benjamini_hochberg(p_values: Sequence[float]) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (false discovery rate): scipy's
    `false_discovery_control(p, method='bh')` over the defined p-values; NaN stays NaN.

    Not statsmodels' `fdr_bh`: it divides p by i/m where scipy multiplies by m/i, which moves
    some adjusted p-values by an ulp from the values reported so far."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    if defined.any():
        out[defined] = stats.false_discovery_control(p[defined], method="bh")
    return out


def correct(p_values: Sequence[float], method: Correction | str) -> np.ndarray:
    """Apply the named correction to one family of p-values."""
    if method == "holm":
        return holm(p_values)
    if method == "bonferroni":
        return bonferroni(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    if method == "none":
        return np.asarray(p_values, dtype=float).copy()
    raise ValueError(f"unknown correction {method!r}; use {', '.join(Correction)}")


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def permutation_p(x: np.ndarray, y: np.ndarray, n_resamples: int = PERMUTATIONS,
                  seed: int = 0) -> float:
    """Two-sided paired randomisation test of the mean difference: scipy's `permutation_test`
    with `permutation_type='samples'` and `random_state=seed` (exact when 2^topics ≤
    n_resamples, as scipy decides). NaN for no topics or `n_resamples` 0 (not run)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not len(x) or n_resamples < 1:
        return float("nan")
    batch = max(1, min(n_resamples, _CELLS // (2 * len(x))))
    result = stats.permutation_test((x, y), _mean_difference, permutation_type="samples",
                                    vectorized=True, n_resamples=n_resamples, batch=batch,
                                    alternative="two-sided", random_state=seed)
    return float(result.pvalue)


def t_interval(x: np.ndarray, y: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The paired t-test's confidence interval of the mean difference x − y (scipy's
    `ttest_rel(x, y).confidence_interval(level)`); NaN where it is undefined."""
    if len(x) < 2:
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = stats.ttest_rel(x, y).confidence_interval(confidence_level=level)
    return float(ci.low), float(ci.high)


def p_value(test: str, x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS,
            seed: int = 0) -> float:
    """One test's two-sided p-value for runs x and y (per-topic scores in the same order)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if test == "t":
        return _safe_p(stats.ttest_rel, x, y)
    if test == "wilcoxon":
        return _safe_p(stats.wilcoxon, x, y)
    if test == "ranksum":
        return _safe_p(stats.ranksums, x, y)
    if test == "sign":
        return sign_test(x, y)[2]
    if test == "permutation":
        return permutation_p(x, y, permutations, seed)
    raise ValueError(f"unknown test {test!r}; use {', '.join(TESTS)}")


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
    *,
    families: Sequence[Any] | None = None,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    on_pair: Callable[[], object] | None = None,
) -> pd.DataFrame:
    """Test each pair of runs (columns of a topic × run frame; NaN scores count 0).

    `pairs` defaults to all pairs in column order. One row per pair: `run_a, run_b, family,
    n_topics, mean_a, mean_b, mean_diff` (a − b), `diff_t_low, diff_t_high` (the t-test's 95 %
    interval of the mean difference), `p_t, p_wilcoxon, p_ranksum, p_sign, p_permutation`
    (`permutations` resamples seeded with `seed`; 0 skips it: NaN), `wins, losses`, and
    `p_<test>_corrected` with the correction applied per test within each family (`families`:
    one label per pair; default one family of all pairs). `on_pair` is called after each pair
    (a progress bar: all pairs of 129 runs take minutes).
    Why: comparing many runs inflates false positives; correcting per test family keeps the
    reported significance honest.
    """
    if correction not in tuple(Correction):
        raise ValueError(f"unknown correction {correction!r}; use {', '.join(Correction)}")
    scores = wide.astype(float).fillna(0.0)
    pair_list = list(combinations(scores.columns, 2)) if pairs is None else list(pairs)
    for a, b in pair_list:
        for name in (a, b):
            if name not in scores.columns:
                raise ValueError(f"run {name!r} is not a column of the score table")
    labels = ["all"] * len(pair_list) if families is None else list(families)
    if len(labels) != len(pair_list):
        raise ValueError("give one family label per pair")
    rows = []
    for (a, b), family in zip(pair_list, labels, strict=True):
        x = scores[a].to_numpy()
        y = scores[b].to_numpy()
        wins, losses, p_sign = sign_test(x, y)
        low, high = t_interval(x, y)
        rows.append(
            {
                "run_a": a,
                "run_b": b,
                "family": family,
                "n_topics": len(x),
                "mean_a": trec_eval_mean(x.tolist()),
                "mean_b": trec_eval_mean(y.tolist()),
                "mean_diff": float((x - y).mean()) if len(x) else float("nan"),
                "diff_t_low": low,
                "diff_t_high": high,
                "p_t": _safe_p(stats.ttest_rel, x, y),
                "p_wilcoxon": _safe_p(stats.wilcoxon, x, y),
                "p_ranksum": _safe_p(stats.ranksums, x, y),
                "p_sign": p_sign,
                "p_permutation": permutation_p(x, y, permutations, seed),
                "wins": wins,
                "losses": losses,
            }
        )
        if on_pair is not None:
            on_pair()
    columns = [
        "run_a", "run_b", "family", "n_topics", "mean_a", "mean_b", "mean_diff", "diff_t_low",
        "diff_t_high", "p_t", "p_wilcoxon", "p_ranksum", "p_sign", "p_permutation", "wins",
        "losses",
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    for test in TESTS:
        table[f"p_{test}_corrected"] = correct_within(table[f"p_{test}"].to_numpy(), labels,
                                                      correction)
    return table


def correct_within(p_values: Sequence[float], families: Sequence[Any],
                   method: Correction | str) -> np.ndarray:
    """`correct` applied to each family's p-values on their own (one label per p-value)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    labels = list(families)
    for family in dict.fromkeys(labels):
        members = np.array([i for i, label in enumerate(labels) if label == family], dtype=int)
        out[members] = correct(p[members], method)
    return out
