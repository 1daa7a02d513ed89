"""Leave-one-group-out orders: a strategy's order of one topic with each group's runs left out
in turn, all groups at once — what the simulation's leave-one-group-out τ pools.

`depth`, `rrf` and `rbp` order documents by aggregates of their entries (best rank and count,
sums or maxima of rank weights). One matrix holds every entry of the topic once per left-out
group, blank (NaN) where the entry is the group's own, and one pandas group-by aggregates all
columns at once. pandas skips a blank without touching a sum or its compensation, so each
column sums exactly the entries the reduced ranking holds, in the same order, with the same
kernel as `order` on `TopicRanking.without`: the same floats, the same order. Adaptive
strategies (and any other) learn from what they read, so leaving runs out changes their path:
they run again on each reduced ranking.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tcdb.pools.strategies.base import Judge, Strategy, TopicRanking
from tcdb.pools.strategies.fixed import Depth, RankBiasedPrecision, ReciprocalRankFusion

Order = Sequence[str] | np.ndarray  # a list, or an object array of document ids


def aggregates(strategy: Strategy) -> bool:
    """Whether the strategy orders by aggregates of the entries (all groups at once here)."""
    return isinstance(strategy, Depth | ReciprocalRankFusion | RankBiasedPrecision)


def orders_without(strategy: Strategy, topic: TopicRanking, left_out: Sequence[Sequence[int]],
                   judge: Judge, limit: int | None = None) -> list[Order]:
    """`strategy.order(topic.without(keep), judge, limit)` for each run set of `left_out`
    (indices into `topic.runs`), keep being every other run."""
    n = len(topic.runs)
    if not left_out:
        return []
    if aggregates(strategy):
        return _by_aggregates(strategy, topic, left_out, limit)  # type: ignore[arg-type]
    result: list[Order] = []
    for runs in left_out:
        gone = set(runs)
        reduced = topic.without([i not in gone for i in range(n)])
        result.append(strategy.order(reduced, judge, limit))
    return result


def _by_aggregates(strategy: Depth | ReciprocalRankFusion | RankBiasedPrecision,
                   topic: TopicRanking, left_out: Sequence[Sequence[int]],
                   limit: int | None) -> list[Order]:
    codes, ranks, names = topic.flat
    if not len(codes):
        return [names[:0] for _ in left_out]
    # each run's entries are one slice of the topic's entries
    ends = np.cumsum([len(r.docs) for r in topic.runs]).tolist()
    starts = [0, *ends[:-1]]
    count = np.repeat(np.bincount(codes, minlength=len(names))[:, None], len(left_out), axis=1)
    for j, runs in enumerate(left_out):
        own = [codes[starts[r]:ends[r]] for r in runs]
        if own:
            count[:, j] -= np.bincount(np.concatenate(own), minlength=len(names))
    if isinstance(strategy, Depth):
        values, how = ranks.astype(float), "min"
    else:
        values, how = strategy.weights(ranks), strategy.aggregate
    matrix = np.empty((len(values), len(left_out)))
    matrix[:] = values[:, None]
    for j, runs in enumerate(left_out):
        for r in runs:
            matrix[starts[r]:ends[r], j] = np.nan
    grouped = pd.DataFrame(matrix, copy=False).groupby(codes, sort=True)
    table = {"min": grouped.min, "max": grouped.max, "sum": grouped.sum}[how]()
    index = table.index.to_numpy(dtype=np.int64)
    aggregated = table.to_numpy(dtype=float)
    result: list[Order] = []
    for j in range(len(left_out)):
        present = count[index, j] > 0
        docs, scores = index[present], aggregated[present, j]
        if isinstance(strategy, Depth):
            best = scores.astype(np.int64)
            order = docs[np.lexsort((docs, -count[docs, j], best))]
        else:
            order = docs[np.lexsort((docs, -scores))]
        result.append(names[order if limit is None else order[:limit]])
    return result
