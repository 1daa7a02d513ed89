"""The one mean of tcdb: a run's score over a topic list, as `trec_eval -c` gives it.

Sum the per-topic values with `math.fsum` (exact, so the order they come in does not matter),
divide by the number of topics (a topic the run has no value for counts 0 by being absent from
the sum), and round to 12 decimals. Why the rounding: means that are mathematically equal must
compare equal. P@5 means are multiples of 0.2/T; summed in different orders they differ in the
last bit (0.5599999999999999 vs 0.56), and a ranking that sees two different values where
trec_eval prints one breaks a tie that is not there (τ-b over 143 TREC-COVID runs: 55 tied
pairs instead of 116). Every ranking and comparison of means in tcdb uses these functions.

Counts are not averaged: trec_eval's `num_ret`, `num_rel`, `num_rel_ret`, `num_q` (ir_measures'
NumRet, NumRel, NumRet(rel=1), NumQ) are summed over the topics in its `all` line, and so does
ir_measures' `calc_aggregate` (their aggregator is `SumAgg`). `aggregate` asks ir_measures which
a measure is, so the two references and tcdb say the same figure; `aggregate_word` names it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

DECIMALS = 12  # far below any difference a measure can make, far above float noise

__all__ = ["DECIMALS", "aggregate", "aggregate_word", "column_means", "exact_mean", "rounded",
           "sums_over_topics", "trec_eval_mean", "unanswered_value", "counts_unanswered"]


@lru_cache(maxsize=256)
def sums_over_topics(measure: str) -> bool:
    """Is `measure` (an ir_measures name) a count that trec_eval and ir_measures sum over
    topics (NumRet, NumRel, NumRet(rel=1), NumQ)? Unknown names are means."""
    import ir_measures
    from ir_measures.measures import SumAgg

    try:
        return isinstance(ir_measures.parse_measure(measure).aggregator(), SumAgg)
    except Exception:  # a name ir_measures does not parse (imported scores): a mean
        return False


def unanswered_value(measure: str, judged: Mapping[str, int]) -> float:
    """What `trec_eval -c` gives a judged topic the run did not answer: the measure on an
    empty ranking, `judged` being the topic's document → grade.

    Why not always 0: the counts that do not depend on the ranking keep their value. trec_eval
    10's `out.test.aqc` prints `num_rel 302 77` and `num_q all 3` for a run without topic
    302: NumQ counts the topic (1) and NumRel its relevant documents (grade ≥ `rel`, 1 by
    default, as ir_measures counts them). Every other measure, and the counts of retrieved
    documents (NumRet, NumRelRet), is 0 on an empty ranking.
    """
    import ir_measures

    try:
        parsed = ir_measures.parse_measure(measure)
    except Exception:  # a name ir_measures does not parse (imported scores): 0
        return 0.0
    if parsed.NAME == "NumQ":
        return 1.0
    if parsed.NAME == "NumRel":
        rel = int(parsed.params.get("rel", 1))
        return float(sum(1 for grade in judged.values() if grade >= rel))
    return 0.0


def counts_unanswered(measure: str) -> bool:
    """Does an unanswered topic add something other than 0 to `measure` (NumQ, NumRel)?"""
    return sums_over_topics(measure) and measure.split("(")[0] in ("NumQ", "NumRel")


def aggregate_word(measure: str) -> str:
    """`sum` for a count, `mean` otherwise: how a front end labels the figure."""
    return "sum" if sums_over_topics(measure) else "mean"


def aggregate(measure: str, values: Iterable[float], n_topics: int | None = None) -> float:
    """A run's figure of `measure` over `n_topics` topics as trec_eval's `all` line gives it:
    the sum of a count (absent topics add 0; NaN for no topics), else `trec_eval_mean`."""
    if not sums_over_topics(measure):
        return trec_eval_mean(values, n_topics)
    values = list(values)
    n = len(values) if n_topics is None else n_topics
    return math.nan if n == 0 else round(math.fsum(values), DECIMALS)


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
