"""What the pool operations return: typed, JSON-able dicts the CLI, flows and dashboard read."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict


class SizeStats(TypedDict):
    """Documents per topic of a pool."""

    min: int
    max: int
    mean: float
    total: int


class PoolParameters(TypedDict):
    """What every pool result names: the pool, how it was built, and its size."""

    name: str
    collection: str
    snapshot: str
    depth: int
    tie_order: str
    max_per_topic: int | None
    exclude_judged: str | None  # the qrels set whose judged documents were left out
    strategy: str  # `depth`, or the strategy with its parameters (`rbp:p=0.8,aggregate=sum`)
    budget: int | None  # a budgeted pool's budget (None: every document of the depth-k pool)
    budget_per_topic: bool  # the budget is per topic
    n_documents: int
    n_topics: int
    size: SizeStats
    status: str


class PoolBuildReport(PoolParameters):
    """`build_pool`: the pool built (status `built`, or `unchanged`) and how its runs were
    chosen."""

    runs: list[str]
    chosen: str
    n_unresolved_skipped: int
    seconds: float


class PoolSummary(PoolParameters):
    """One pool as `list_pools` gives it: parameters, sizes, status, judged fraction."""

    pooled_qrels: str | None
    n_runs: int
    n_judged: int
    judged_fraction: float
    created_at: dt.datetime
    exported_at: dt.datetime | None


class PoolTopic(TypedDict):
    topic: str
    n_documents: int
    n_judged: int


class PoolRunContribution(TypedDict):
    """A chosen run's pooled documents, and those no other chosen run retrieved."""

    run: str  # its tag
    n_pooled: int
    unique: int


class PoolDetail(PoolSummary):
    """`show_pool`: a summary with sizes per topic and each run's contribution."""

    per_topic: list[PoolTopic]
    runs: list[PoolRunContribution]
    description: str | None


class PoolExportReport(TypedDict):
    """`export_pool`: what was written for assessors, and the seed of a shuffled order."""

    name: str
    format: str
    out: str
    n_documents: int
    n_topics: int
    order: str
    seed: int | None
    status: str
