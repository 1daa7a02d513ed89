"""Strategies that need no judgments: depth (today's depth-k pools), reciprocal-rank fusion and
rank-biased precision weights, as trectools' `TrecPoolMaker` computes the latter two.

Each scores a topic's documents from their ranks in the runs, then orders them by score; equal
scores go by document id ascending (byte order), as trectools' stable sort of its groups does.
The fusion scores are summed with pandas in run order, the same sum trectools takes, so the
last bit of a score (and with it the order of near-equal ones) is the same too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from tcdb.errors import FieldError
from tcdb.pools.strategies.base import Judge, TopicRanking, register


def _by_score(codes: np.ndarray, names: np.ndarray, scores: np.ndarray,
              limit: int | None) -> list[str]:
    """The documents `codes` (one each) by `scores` descending, then id ascending (the codes
    follow the ids' sorted order)."""
    order = np.lexsort((codes, -scores))
    chosen = codes[order] if limit is None else codes[order[:limit]]
    return names[chosen].tolist()


def _sums(codes: np.ndarray, values: np.ndarray, how: str) -> tuple[np.ndarray, np.ndarray]:
    """Per document code present: the sum (or max) of its entries' values, summed by pandas in
    entry order — the same sums, to the last bit, as trectools' groupby over the same runs."""
    grouped = pd.Series(values, copy=False).groupby(codes, sort=True)
    result = grouped.sum() if how == "sum" else grouped.max()
    return result.index.to_numpy(dtype=np.int64), result.to_numpy(dtype=float)


@register
@dataclass(frozen=True)
class Depth:
    """Best rank first (depth 1 of every run, then depth 2, …), then documents more runs
    retrieved, then by id: cut after the documents of best rank ≤ k, it is the depth-k pool."""

    name: ClassVar[str] = "depth"
    adaptive: ClassVar[bool] = False

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        codes, ranks, names = topic.flat
        count = np.bincount(codes, minlength=len(names))
        best = np.full(len(names), np.iinfo(np.int64).max)
        np.minimum.at(best, codes, ranks)
        present = np.flatnonzero(count)
        order = present[np.lexsort((present, -count[present], best[present]))]
        return names[order if limit is None else order[:limit]].tolist()


@register
@dataclass(frozen=True)
class ReciprocalRankFusion:
    """Σ over runs of 1 / (k + rank) (Cormack, Clarke, Büttcher 2009); trectools' `rrf`."""

    k: float = 60.0
    name: ClassVar[str] = "rrf"
    adaptive: ClassVar[bool] = False
    aggregate: ClassVar[str] = "sum"

    def check(self, field: str) -> None:
        if self.k < 0:
            raise FieldError(field, f"rrf k must be ≥ 0 (got {self.k})")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        codes, ranks, names = topic.flat
        present, scores = _sums(codes, self.weights(ranks), self.aggregate)
        return _by_score(present, names, scores, limit)

    def weights(self, ranks: np.ndarray) -> np.ndarray:
        """Each entry's weight 1 / (k + rank), the one definition `order` and the
        leave-one-group-out orders sum."""
        return 1.0 / (self.k + ranks)


@register
@dataclass(frozen=True)
class RankBiasedPrecision:
    """Σ (or max) over runs of the RBP weight (1 − p)·p^(rank − 1) (Moffat, Webber, Zobel
    2007); trectools' `rbp` with `rbp_strategy` sum or max."""

    p: float = 0.8
    aggregate: str = "sum"
    name: ClassVar[str] = "rbp"
    adaptive: ClassVar[bool] = False

    def check(self, field: str) -> None:
        if not 0 < self.p < 1:
            raise FieldError(field, f"rbp p must be between 0 and 1 (got {self.p})")
        if self.aggregate not in ("sum", "max"):
            raise FieldError(field, f"rbp aggregate must be sum or max (got "
                              f"{self.aggregate!r})")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        codes, ranks, names = topic.flat
        present, scores = _sums(codes, self.weights(ranks), self.aggregate)
        return _by_score(present, names, scores, limit)

    def weights(self, ranks: np.ndarray) -> np.ndarray:
        """Each entry's weight (1 − p)·p^(rank − 1), written as trectools writes it (the same
        last bit); the one definition `order` and the leave-one-group-out orders aggregate."""
        return (1.0 - self.p) * self.p ** (ranks - 1)
