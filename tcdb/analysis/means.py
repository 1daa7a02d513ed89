"""The one mean of tcdb: a run's score over a topic list, as `trec_eval -c` gives it.

Sum the per-topic values with `math.fsum` (exact, so the order they come in does not matter),
divide by the number of topics (a topic the run has no value for counts 0 by being absent from
the sum), and round to 12 decimals. Why the rounding: means that are mathematically equal must
compare equal. P@5 means are multiples of 0.2/T; summed in different orders they differ in the
last bit (0.5599999999999999 vs 0.56), and a ranking that sees two different values where
trec_eval prints one breaks a tie that is not there (τ-b over 143 TREC-COVID runs: 55 tied
pairs instead of 116). Every ranking and comparison of means in tcdb uses these functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

DECIMALS = 12  # far below any difference a measure can make, far above float noise

__all__ = ["DECIMALS", "column_means", "exact_mean", "rounded", "trec_eval_mean"]


def trec_eval_mean(values: Iterable[float], n_topics: int | None = None) -> float:
    """Mean of `values` over `n_topics` topics (default: as many as values), rounded; NaN for
    no topics. What is shown, compared and ranked."""
    return round(exact_mean(values, n_topics), DECIMALS)


def exact_mean(values: Iterable[float], n_topics: int | None = None) -> float:
    """The same mean before rounding: for arithmetic on means (differences, ratios), which
    rounding first would only make less exact."""
    values = list(values)
    n = len(values) if n_topics is None else n_topics
    if n == 0:
        return math.nan
    return math.fsum(values) / n


def column_means(wide: pd.DataFrame) -> pd.Series:
    """Per column (run) of a topic × run matrix: `trec_eval_mean` over all its rows."""
    import pandas as pd

    n = wide.shape[0]
    return pd.Series({column: trec_eval_mean(wide[column].tolist(), n) for column in wide.columns},
                     dtype="float64")


def rounded(values: Any) -> Any:
    """Means computed some other way (a bootstrap's weight matrix product) rounded alike."""
    return np.round(np.asarray(values, dtype=float), DECIMALS)
