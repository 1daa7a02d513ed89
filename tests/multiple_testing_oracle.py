"""An oracle for the multiple-testing corrections that shares no code with
`tcdb.analysis.significance`: the textbook adjusted p-values, written out.

tcdb computes Holm and Bonferroni with statsmodels' `multipletests`, so the oracle does not:
`tests/test_significance_families.py` checks these functions against literal values computed by
hand, so the tests that use them rest on that hand computation (and on scipy for BH).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats


def adjusted_by_hand(p_values: Sequence[float] | np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values over the m defined p-values of one family (NaN is no test and stays NaN).

    Bonferroni: min(1, m·p). Holm: sort ascending; the k-th smallest (k = 1…m) gets
    min(1, (m − k + 1)·p), then the running maximum. Benjamini–Hochberg: scipy's
    `false_discovery_control(p, method="bh")`.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    defined = [i for i in range(len(p)) if not np.isnan(p[i])]
    m = len(defined)
    if method == "bonferroni":
        for i in defined:
            out[i] = min(1.0, m * float(p[i]))
    elif method == "holm":
        running = 0.0
        for k, i in enumerate(sorted(defined, key=lambda i: p[i]), start=1):
            running = max(running, min(1.0, (m - k + 1) * float(p[i])))
            out[i] = running
    elif method == "bh":
        if m:
            out[defined] = stats.false_discovery_control(p[defined], method="bh")
    else:
        raise ValueError(f"unknown correction {method!r}")
    return out
