"""Strategies that learn from judgments as they go: move-to-front and the MaxMean bandit.

Both treat each run as a source of documents read in rank order; a document already chosen
through another run is passed over (it costs no judgment and teaches nothing). A document the
judge does not know yet (`None`, a round not judged yet) counts as not relevant.
"""

from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from typing import ClassVar

from tcdb.errors import FieldError
from tcdb.pools.strategies.base import Judge, TopicRanking, is_relevant, register


class _Sources:
    """The runs' rankings with a read position each, skipping documents already chosen. The
    rankings are read where they stand (no copy): a simulation asks for a few hundred
    documents of runs a thousand deep, once per left-out group."""

    def __init__(self, topic: TopicRanking) -> None:
        self.topic = topic
        self.docs = [r.docs for r in topic.runs]
        self.at = [0] * len(self.docs)
        self.chosen: set[str] = set()
        self.order: list[str] = []

    def next_of(self, run: int) -> str | None:
        """The run's next document not chosen yet (and choose it), or None when it has none."""
        docs, i, chosen = self.docs[run], self.at[run], self.chosen
        n = len(docs)
        while i < n and docs[i] in chosen:
            i += 1
        self.at[run] = i + 1
        if i >= n:
            return None
        doc = docs[i]
        chosen.add(doc)
        self.order.append(doc)
        return str(doc)


@register
@dataclass(frozen=True)
class MoveToFront:
    """Move-to-front pooling (Cormack, Palmer, Clarke 1998): judge the current run's next
    document while they are relevant; on a non-relevant one lower that run's priority by one
    and go on with the run of highest priority (the next one after it on a tie)."""

    relevant_grade: int = 1
    name: ClassVar[str] = "mtf"
    adaptive: ClassVar[bool] = True

    def check(self, field: str) -> None:
        if self.relevant_grade < 1:
            raise FieldError(field, "mtf relevant_grade must be at least 1")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        sources = _Sources(topic)
        n = len(sources.docs)
        stop = math.inf if limit is None else limit  # or until every run is read to its end
        # the live runs by priority, each level's runs in run order: the next run is the
        # first after the current one (cyclically) on the highest level
        priority = [0] * n
        levels: dict[int, list[int]] = {0: list(range(n))}
        top, n_live, current = 0, n, 0
        order = sources.order
        while len(order) < stop and n_live:
            doc = sources.next_of(current)
            level = levels[priority[current]]
            if doc is None:
                del level[bisect.bisect_left(level, current)]
                n_live -= 1
            elif is_relevant(judge(doc), self.relevant_grade):
                continue
            else:
                del level[bisect.bisect_left(level, current)]
                priority[current] -= 1
                bisect.insort(levels.setdefault(priority[current], []), current)
            if not n_live:
                break
            while not levels.get(top):  # priorities only fall: the top level only falls
                top -= 1
            best = levels[top]
            after = bisect.bisect_right(best, current)
            current = best[after] if after < len(best) else best[0]
        return order


@register
@dataclass(frozen=True)
class MaxMean:
    """The MaxMean bandit (Losada, Parapar, Barreiro 2016): each run is an arm whose reward is
    the relevance of its next document; pull the arm with the highest posterior mean
    (relevant + 1) / (judged + 2) under a uniform Beta prior, the first such arm on a tie."""

    relevant_grade: int = 1
    name: ClassVar[str] = "maxmean"
    adaptive: ClassVar[bool] = True

    def check(self, field: str) -> None:
        if self.relevant_grade < 1:
            raise FieldError(field, "maxmean relevant_grade must be at least 1")

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        sources = _Sources(topic)
        n = len(sources.docs)
        stop = math.inf if limit is None else limit  # or until every arm is exhausted
        relevant = [0] * n
        pulled = [0] * n
        mean = [0.5] * n
        # arms by (-mean, arm): the highest mean, the first arm on a tie; an entry whose mean
        # is no longer the arm's is stale and skipped (an exhausted arm's mean is -1)
        heap = [(-0.5, arm) for arm in range(n)]
        while len(sources.order) < stop and heap:
            key, arm = heap[0]
            if -key != mean[arm]:
                heapq.heappop(heap)
                continue
            doc = sources.next_of(arm)
            if doc is None:
                mean[arm] = -1.0
                continue
            pulled[arm] += 1
            relevant[arm] += is_relevant(judge(doc), self.relevant_grade)
            mean[arm] = (relevant[arm] + 1) / (pulled[arm] + 2)
            heapq.heapreplace(heap, (-mean[arm], arm))
        return sources.order
