"""Strategies that learn from judgments as they go: move-to-front and the MaxMean bandit.

Both treat each run as a source of documents read in rank order; a document already chosen
through another run is passed over (it costs no judgment and teaches nothing). A document the
judge does not know yet (`None`, a round not judged yet) counts as not relevant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tcdb.errors import OptionError
from tcdb.pools.strategies.base import Judge, TopicRanking, is_relevant, register


class _Sources:
    """The runs' rankings with a read position each, skipping documents already chosen."""

    def __init__(self, topic: TopicRanking) -> None:
        self.topic = topic
        self.docs = [r.docs.tolist() for r in topic.runs]
        self.at = [0] * len(self.docs)
        self.chosen: set[str] = set()
        self.order: list[str] = []

    def next_of(self, run: int) -> str | None:
        """The run's next document not chosen yet (and choose it), or None when it has none."""
        docs, i = self.docs[run], self.at[run]
        while i < len(docs) and docs[i] in self.chosen:
            i += 1
        self.at[run] = i + 1
        if i >= len(docs):
            return None
        self.chosen.add(docs[i])
        self.order.append(docs[i])
        return str(docs[i])

    def total(self) -> int:
        """How many distinct documents the runs hold (from the topic's shared codes)."""
        codes = self.topic.flat[0]
        return int(np.count_nonzero(np.bincount(codes))) if len(codes) else 0


@register
@dataclass(frozen=True)
class MoveToFront:
    """Move-to-front pooling (Cormack, Palmer, Clarke 1998): judge the current run's next
    document while they are relevant; on a non-relevant one lower that run's priority by one
    and go on with the run of highest priority (the next one after it on a tie)."""

    relevant_grade: int = 1
    name: ClassVar[str] = "mtf"
    adaptive: ClassVar[bool] = True

    def check(self, option: str) -> None:
        if self.relevant_grade < 1:
            raise OptionError(option, "mtf relevant_grade must be at least 1")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        sources = _Sources(topic)
        n = len(sources.docs)
        limit = sources.total() if limit is None else min(limit, sources.total())
        priority = np.zeros(n)
        live = np.ones(n, dtype=bool)
        current = 0
        while len(sources.order) < limit and live.any():
            doc = sources.next_of(current)
            if doc is None:
                live[current] = False
            elif is_relevant(judge(doc), self.relevant_grade):
                continue
            else:
                priority[current] -= 1
            if not live.any():
                break
            best = priority[live].max()
            # the highest priority, first after the current run in cyclic order
            candidates = np.flatnonzero(live & (priority == best))
            after = candidates[candidates > current]
            current = int(after[0] if len(after) else candidates[0])
        return sources.order


@register
@dataclass(frozen=True)
class MaxMean:
    """The MaxMean bandit (Losada, Parapar, Barreiro 2016): each run is an arm whose reward is
    the relevance of its next document; pull the arm with the highest posterior mean
    (relevant + 1) / (judged + 2) under a uniform Beta prior, the first such arm on a tie."""

    relevant_grade: int = 1
    name: ClassVar[str] = "maxmean"
    adaptive: ClassVar[bool] = True

    def check(self, option: str) -> None:
        if self.relevant_grade < 1:
            raise OptionError(option, "maxmean relevant_grade must be at least 1")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        sources = _Sources(topic)
        n = len(sources.docs)
        limit = sources.total() if limit is None else min(limit, sources.total())
        relevant = np.zeros(n)
        pulled = np.zeros(n)
        mean = np.full(n, 0.5)
        while len(sources.order) < limit:
            arm = int(np.argmax(mean))
            if mean[arm] < 0:
                break  # every arm is exhausted
            doc = sources.next_of(arm)
            if doc is None:
                mean[arm] = -1.0
                continue
            pulled[arm] += 1
            relevant[arm] += is_relevant(judge(doc), self.relevant_grade)
            mean[arm] = (relevant[arm] + 1) / (pulled[arm] + 2)
        return sources.order
