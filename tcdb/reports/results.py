"""What the reports return: typed, JSON-able dicts (`--json` prints them as they are).

The top level of each report is typed here; the per-measure figures inside follow the shapes
the report modules' docstrings give (they come from `tcdb.analysis`, already JSON-able).
"""

from __future__ import annotations

from typing import Any, TypedDict


class ReusabilityReport(TypedDict):
    """`tcdb report reusability`: run rankings under qrels A and B compared, per measure."""

    collection: str
    snapshot: str
    qrels_a: str
    qrels_b: str
    depth: int
    order: str
    topic_set: str | None
    n_topics: int
    threshold: float
    measures: dict[str, dict[str, Any]]
    seconds: dict[str, float]  # load, total


class LeaveOutGroup(TypedDict):
    """One group left out: its runs' rank changes and τ between the full and reduced rankings."""

    group: str
    qrels: str | None  # the stored derived set, with `save`
    n_removed: int
    runs: list[dict[str, Any]]
    kendall_tau: float | None
    tau_b: float | None
    tau_ap: float | None
    max_drop: int


class LeaveOutMeasure(TypedDict):
    n_runs: int
    groups: list[LeaveOutGroup]


class LeaveOutReport(TypedDict):
    """`tcdb report leave-out`: Zobel's uniques test, per measure and group."""

    collection: str
    snapshot: str
    qrels: str
    depth: int
    by: str
    topic_set: str | None
    n_topics: int
    saved: str | None
    measures: dict[str, LeaveOutMeasure]
    seconds: float


class PersistenceMeasure(TypedDict):
    systems: list[dict[str, Any]]  # persistence_table records, with runs (and ci)
    skipped: list[dict[str, str]]  # {system, reason}


class PersistenceReport(TypedDict):
    """`tcdb report persistence`: every system against the pivot, each later snapshot against
    the first, per measure."""

    collection: str
    pivot: str
    snapshots: list[str]
    qrels: dict[str, str]
    topics: dict[str, Any]  # selection, n_topics per snapshot
    bootstrap: dict[str, Any] | None
    measures: dict[str, PersistenceMeasure]
    warnings: list[str]  # e.g. a system whose runs name different groups


class CompareReport(TypedDict):
    """`tcdb report compare`: pairwise tests between runs on one snapshot within test families,
    and the outcome breakdown when the qrels have one relevant document per topic."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    correction: str
    family: dict[str, Any]  # design (all-pairs, baseline, vs-earlier), baseline, n_families
    topic_set: str | None
    n_topics: int
    alpha: float
    permutations: int
    seed: int
    bootstrap: int
    runs: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    outcomes: dict[str, Any]


class SnapshotDiff(TypedDict):
    """`tcdb snapshot diff`: documents, topics and qrels between two snapshots."""

    collection: str
    a: str
    b: str
    documents: dict[str, int]
    # per source label (human, llm, …): the same counts; empty when no document is labelled
    sources: dict[str, dict[str, int]]
    topics: dict[str, Any]
    qrels: dict[str, dict[str, Any]]
