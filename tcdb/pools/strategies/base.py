"""The one small interface every pooling strategy implements, and the registry of strategies.

A strategy reads one topic's rankings (each chosen run's documents in rank order) and gives
the order in which that topic's documents should be judged. A budget is then a cut of that
order, so one order serves every budget. Adaptive strategies (move-to-front, bandits) learn
from the grades of what they already chose: they ask a `Judge`, which in a simulation reads a
complete qrels set and in real use the judgments of earlier rounds (`None`: not judged yet,
taken as not relevant until it is).

Strategies are registered by name, as ir_measures registers measures, and written
`name:key=value,key=value` where one is chosen (`rbp:p=0.9`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from tcdb.errors import FieldError

Judge = Callable[[str], "int | None"]  # a document's grade for the topic, None if unknown


@dataclass(frozen=True)
class RunRanking:
    """One run's ranking of one topic: documents (external ids) and their 1-based positions.

    Positions may skip numbers: an entry the snapshot lacks keeps its place but cannot be
    judged, so it is not among the documents.
    """

    docs: np.ndarray  # object array of str
    ranks: np.ndarray  # int64, ascending


@dataclass(frozen=True)
class TopicRanking:
    """The chosen runs' rankings of one topic, in run order (runs without the topic: empty)."""

    topic: str
    runs: tuple[RunRanking, ...]

    @functools.cached_property
    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every run's entries one after the other, in run order, as (codes, positions, names):
        `names[codes]` are the documents, and the codes are numbered in the documents' sorted
        order, so sorting by code sorts by document id. Built once, read by every strategy
        that scores documents from their ranks (integer keys group and sort fast)."""
        source = self.__dict__.get("_source")
        if source is not None:  # made by `without`: the source's codes, masked
            parent, keep = source
            codes, ranks, names = parent.flat
            mask = np.repeat(keep, [len(r.docs) for r in parent.runs])
            return (codes[mask], ranks[mask], names)
        runs = [r for r in self.runs if len(r.docs)]
        if not runs:
            return (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                    np.empty(0, dtype=object))
        # `np.unique(…, return_inverse=True)` would sort every entry as a Python object; the
        # distinct documents are a few thousand, so sort those and look each entry up
        entries = np.concatenate([r.docs for r in runs]).tolist()
        names = sorted(set(entries))
        code_of = {doc: i for i, doc in enumerate(names)}
        codes = np.fromiter(map(code_of.__getitem__, entries), dtype=np.int64,
                            count=len(entries))
        return (codes, np.concatenate([r.ranks for r in runs]),
                np.array(names, dtype=object))

    def without(self, keep: Sequence[bool]) -> TopicRanking:
        """The same topic with only the runs whose `keep` is true (leave-one-group-out); it
        shares this ranking's document codes, computed once, and masks them only when a
        strategy reads them (the adaptive ones never do)."""
        reduced = TopicRanking(self.topic, tuple(r for r, k in zip(self.runs, keep, strict=True)
                                                 if k))
        reduced.__dict__["_source"] = (self, np.array(keep, dtype=bool))
        return reduced


class Strategy(Protocol):
    """Orders one topic's documents for judging; `limit` lets an adaptive strategy stop early."""

    name: ClassVar[str]
    adaptive: ClassVar[bool]

    def order(self, topic: TopicRanking, judge: Judge, limit: int | None = None) -> list[str]:
        ...


REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator: make a strategy known by its `name`."""
    REGISTRY[cls.name] = cls
    return cls


def strategy_names() -> list[str]:
    return sorted(REGISTRY)


def _value(field: str, parameter: dataclasses.Field[object], text: str) -> object:
    kind = parameter.type if isinstance(parameter.type, type) else {
        "float": float, "int": int, "str": str}.get(str(parameter.type))
    try:
        return kind(text) if kind is not None else text
    except ValueError:
        raise FieldError(field, f"{parameter.name}={text!r} is not a {parameter.type}") from None


def make_strategy(spec: str, field: str = "strategy") -> Strategy:
    """A strategy from `name` or `name:key=value,…`; a FieldError names the request's field
    (`strategy`, or `strategies` where several are given) and what is wrong."""
    name, _, rest = spec.strip().partition(":")
    cls = REGISTRY.get(name)
    if cls is None:
        raise FieldError(field, f"no pooling strategy {name!r} (known: "
                         f"{', '.join(strategy_names())})")
    fields: dict[str, dataclasses.Field[object]] = (
        {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {})
    params: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = part.partition("=")
        if not eq or key not in fields:
            known = ", ".join(fields) or "none"
            raise FieldError(field, f"{spec!r}: {part!r} is not key=value with a parameter "
                             f"of {name} (parameters: {known})")
        params[key] = _value(field, fields[key], text)
    strategy = cls(**params)
    check = getattr(strategy, "check", None)
    if check is not None:
        check(field)
    return strategy


def describe(strategy: Strategy) -> str:
    """`name:key=value,…` with every parameter: what a pool or a simulation row records."""
    instance: Any = strategy
    names = ([f.name for f in dataclasses.fields(instance)]
             if dataclasses.is_dataclass(instance) else [])
    params = ",".join(f"{n}={getattr(strategy, n)}" for n in names)
    return f"{strategy.name}:{params}" if params else strategy.name


def is_relevant(grade: int | None, threshold: int = 1) -> bool:
    return grade is not None and grade >= threshold


def cut(orders: dict[str, list[str]], budget: int, per_topic: bool,
        topic_order: Sequence[str]) -> dict[str, list[str]]:
    """The documents a budget buys: a prefix of each topic's order.

    Per topic: the first `budget` of each. In total: round robin over the topics (in
    `topic_order`), every topic's i-th document before any topic's (i+1)-th, until `budget`
    documents are chosen; a topic that runs out leaves its share to the others. A depth-k
    order cut this way grows like a depth-k pool, level by level.
    """
    lengths = {t: len(orders.get(t, [])) for t in topic_order}
    return {t: orders.get(t, [])[:n] for t, n in cut_lengths(lengths, budget, per_topic,
                                                              topic_order).items()}


def cut_lengths(lengths: Mapping[str, int], budget: int, per_topic: bool,
                topic_order: Sequence[str]) -> dict[str, int]:
    """How long a prefix of each topic's order `cut` takes, from the orders' lengths alone.

    In total, the round robin completes `level` rounds — every topic gives min(length, level)
    — for the highest level whose rounds fit the budget; what is left goes one each to the
    first topics (in `topic_order`) that still have documents.
    """
    sizes = [lengths.get(t, 0) for t in topic_order]
    if per_topic:
        return {t: min(n, budget) for t, n in zip(topic_order, sizes, strict=True)}
    if sum(sizes) <= budget:
        return dict(zip(topic_order, sizes, strict=True))
    low, high = 0, max(sizes)  # rounds(low) <= budget < rounds(high)
    while high - low > 1:
        middle = (low + high) // 2
        if sum(min(n, middle) for n in sizes) <= budget:
            low = middle
        else:
            high = middle
    taken = [min(n, low) for n in sizes]
    left = budget - sum(taken)
    for i, n in enumerate(sizes):
        if left == 0:
            break
        if n > low:
            taken[i] += 1
            left -= 1
    return dict(zip(topic_order, taken, strict=True))
