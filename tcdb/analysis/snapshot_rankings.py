"""Do the snapshots of a collection rank the systems alike? τ between two snapshots' rankings.

LongEval's own question: the systems ranked by their mean in an earlier and in a later snapshot,
and the two rankings compared with Kendall's τ-b and τ-c (`scipy.stats.kendalltau`, variants
"b" and "c"; with no ties both equal Kendall's original τ) and the AP rank correlation τ_AP
(Yilmaz, Aslam and Robertson 2008; `tcdb.analysis.rank_correlation.tau_ap`) with the earlier
ranking as the truth: a swap near the top of the later ranking costs most; and, as LongEval's
organisers publish beside τ, Pearson's r between the two snapshots' means
(`scipy.stats.pearsonr`, two-sided p). Means are rounded first
(`tcdb.analysis.means.rounded`), so systems with mathematically equal means tie, and r is over
the same rounded means.
Pure: Series in, dicts out; no database.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float
from tcdb.analysis.means import rounded
from tcdb.analysis.rank_correlation import tau_ap

__all__ = ["compare_rankings", "ranks"]


def ranks(means: pd.Series) -> pd.Series:
    """1 for the best mean; tied means share the best rank of their group (`method="min"`)."""
    return pd.Series(rounded(means.to_numpy()), index=means.index).rank(
        ascending=False, method="min").astype(int)


def compare_rankings(earlier: pd.Series, later: pd.Series, largest: int = 5) -> dict[str, Any]:
    """τ-b, τ-c and Pearson's r (each with scipy's two-sided p-value), τ_AP (earlier = truth)
    between the rankings of the same systems by two Series of means, and the systems whose
    rank changed most (`largest` of them; positive change: climbed in the later snapshot).
    A snapshot whose means are all equal has no correlation: None (scipy's nan)."""
    if set(earlier.index) != set(later.index) or earlier.index.has_duplicates:
        raise ValueError("both snapshots' means must cover the same systems, each once")
    later = later.reindex(earlier.index)
    a = pd.Series(rounded(earlier.to_numpy()), index=earlier.index)
    b = pd.Series(rounded(later.to_numpy()), index=earlier.index)
    n = len(a)
    figures: dict[str, Any] = {"n_systems": n, "tau_b": None, "p_tau_b": None,
                               "pearson_r": None, "p_pearson_r": None,
                               "tau_c": None, "p_tau_c": None, "tau_ap": None}
    if n >= 2:
        tb = stats.kendalltau(a.to_numpy(), b.to_numpy(), variant="b")
        tc = stats.kendalltau(a.to_numpy(), b.to_numpy(), variant="c")
        r, p_r = _pearson(a.to_numpy(), b.to_numpy())
        figures.update(tau_b=json_float(tb.statistic), p_tau_b=json_float(tb.pvalue),
                       pearson_r=r, p_pearson_r=p_r,
                       tau_c=json_float(tc.statistic), p_tau_c=json_float(tc.pvalue),
                       tau_ap=json_float(tau_ap(a, b)))
    rank_a, rank_b = ranks(a), ranks(b)
    frame = pd.DataFrame({"system": a.index, "score_earlier": a.to_numpy(),
                          "score_later": b.to_numpy(), "rank_earlier": rank_a.to_numpy(),
                          "rank_later": rank_b.to_numpy()})
    frame["rank_change"] = frame["rank_earlier"] - frame["rank_later"]
    frame["_abs"] = frame["rank_change"].abs()
    frame = frame.sort_values(["_abs", "rank_later", "system"], ascending=[False, True, True],
                              kind="stable")
    changes = [{"system": str(r.system), "rank_earlier": int(r.rank_earlier),
                "rank_later": int(r.rank_later), "rank_change": int(r.rank_change),
                "score_earlier": json_float(r.score_earlier),
                "score_later": json_float(r.score_later)}
               for r in frame.itertuples(index=False) if r.rank_change != 0]
    figures["largest_changes"] = changes[:largest]
    figures["n_changed"] = len(changes)
    return figures


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float | None, float | None]:
    """Pearson's r and its two-sided p (`scipy.stats.pearsonr`); (None, None) when either side
    is constant (r undefined: scipy warns and gives nan)."""
    if np.all(x == x[0]) or np.all(y == y[0]):
        return None, None
    result = stats.pearsonr(x, y)  # two systems: r is ±1 and p is 1
    return json_float(result.statistic), json_float(result.pvalue)
