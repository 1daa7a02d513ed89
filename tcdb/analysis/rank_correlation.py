"""Rank correlations between two rankings of the same systems, in one place.

Kendall's τ-b (`scipy.stats.kendalltau`, and its row-wise form for the bootstrap), Goodman and
Kruskal's γ (the τ that omits tied pairs; the reports' `kendall_tau`) and the AP rank
correlation τ_AP. Reusability, leave-out, assessor agreement, the pool simulation, the
bootstrap and KTU all use these, so every τ of the project is computed the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "ScoreVector",
    "goodman_kruskal_gamma",
    "goodman_kruskal_gamma_matrix",
    "tau_ap",
    "tau_b",
    "tau_b_matrix",
]

ScoreVector: TypeAlias = "pd.Series | np.ndarray | Sequence[float]"


def _aligned(a: ScoreVector, b: ScoreVector) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    """Two score vectors over the same systems, aligned by name when both are Series."""
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        if set(a.index) != set(b.index) or a.index.has_duplicates or b.index.has_duplicates:
            raise ValueError("score vectors must cover the same systems, each once")
        b = b.reindex(a.index)
        names = list(a.index)
        return a.to_numpy(dtype=float), b.to_numpy(dtype=float), names
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"score vectors must be 1-d of equal length, got {x.shape} and {y.shape}")
    names = list(a.index) if isinstance(a, pd.Series) else list(range(len(x)))
    return x, y, names


def _pair_signs(x: np.ndarray) -> np.ndarray:
    """Sign of x[..., i] − x[..., j] for every pair (upper triangle used by callers)."""
    return np.sign(x[..., :, None] - x[..., None, :])


def goodman_kruskal_gamma_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Goodman–Kruskal γ for each row of two (samples × systems) arrays; NaN if no untied pair.

    Why vectorised: the bootstrap needs τ for ten thousand resampled rankings.
    """
    x = np.atleast_2d(np.asarray(x, dtype=float))
    y = np.atleast_2d(np.asarray(y, dtype=float))
    n = x.shape[-1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    out = np.empty(x.shape[0])
    chunk = max(1, 4_000_000 // max(1, n * n))
    for start in range(0, x.shape[0], chunk):
        prod = _pair_signs(x[start : start + chunk]) * _pair_signs(y[start : start + chunk])
        prod = prod[:, upper]
        concordant = (prod > 0).sum(axis=1)
        discordant = (prod < 0).sum(axis=1)
        total = concordant + discordant
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + chunk] = np.where(
                total > 0, (concordant - discordant) / np.maximum(total, 1), np.nan
            )
    return out


def goodman_kruskal_gamma(a: ScoreVector, b: ScoreVector) -> float:
    """Goodman–Kruskal's γ: Kendall's τ over the pairs of systems ordered in both rankings.

    This is what the reports call the tie-omitting τ (`kendall_tau` in their output).
    Definition: over all pairs (i, j), a pair is concordant if a and b order it the same way,
    discordant if opposite ways, and omitted if it is tied in a or in b;
    γ = (concordant − discordant) / (concordant + discordant), NaN when no pair is left.
    Why: with many tied scores (per-topic rankings, shallow measures) τ-b's tie correction
    mixes tie structure into the agreement; omitting tied pairs measures order agreement only.
    """
    x, y, _ = _aligned(a, b)
    if len(x) < 2:
        return float("nan")
    return float(goodman_kruskal_gamma_matrix(x, y)[0])


def tau_b(a: ScoreVector, b: ScoreVector) -> float:
    """Kendall's τ-b (`scipy.stats.kendalltau`, variant "b"), the usual tie-corrected τ."""
    x, y, _ = _aligned(a, b)
    if len(x) < 2:
        return float("nan")
    return float(stats.kendalltau(x, y, variant="b").statistic)


def descending_order(scores: Sequence[float] | np.ndarray, names: Sequence[Any]) -> list[int]:
    """Positions sorted by score descending, ties by name ascending (trectools' order, and the
    order τ_AP and RBO rank systems by)."""
    keys = [str(n) for n in names]
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), keys[i]))


def tau_ap(truth: ScoreVector, estimate: ScoreVector) -> float:
    """AP rank correlation τ_AP (Yilmaz, Aslam, Robertson 2008) of `estimate` against `truth`.

    Both rankings sort systems by score descending, ties broken by name ascending, as trectools'
    `sort_systems_by` does. With the estimated ranking e_1..e_N, C(i) counts the systems above
    e_i in the estimate that are also above it in the truth; p = Σ_{i=2..N} C(i)/(i−1) / (N−1),
    τ_AP = 2p − 1. Asymmetric: swaps at the top of the *estimate* cost most. This equals
    `trectools.misc.get_correlation(sorted_truth, sorted_estimate, "tauap")[0]` — trectools
    treats its first argument as the ground truth.
    """
    x, y, names = _aligned(truth, estimate)
    n = len(x)
    if n < 2:
        return float("nan")
    truth_pos = np.empty(n, dtype=int)
    truth_pos[descending_order(x, names)] = np.arange(n)
    order = descending_order(y, names)
    pos = truth_pos[order]  # truth position of each system, in estimate order
    above = pos[None, :] < pos[:, None]  # above[i, j]: j ranked above i in truth
    lower = np.tril(np.ones((n, n), dtype=bool), k=-1)  # j above i in the estimate
    correct = (above & lower).sum(axis=1)[1:]
    p = float(np.sum(correct / np.arange(1, n))) / (n - 1)
    return 2.0 * p - 1.0


def tau_b_matrix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """τ-b for each row of two (samples × systems) arrays, the formula scipy uses.

    Why not `scipy.stats.kendalltau` per row: the bootstrap needs ten thousand of them.
    """
    n = x.shape[1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    out = np.empty(x.shape[0])
    chunk = max(1, 4_000_000 // max(1, n * n))
    for start in range(0, x.shape[0], chunk):
        sx = _pair_signs(x[start : start + chunk])[:, upper]
        sy = _pair_signs(y[start : start + chunk])[:, upper]
        numerator = (sx * sy).sum(axis=1)
        denominator = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + chunk] = np.where(
                denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
            )
    return out
