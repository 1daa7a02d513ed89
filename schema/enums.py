"""Statuses and kinds, in the field's words."""

from __future__ import annotations

from enum import StrEnum


class DocIdentity(StrEnum):
    """How a document keeps its identity across snapshots."""

    doc_id = "doc_id"
    url = "url"


class TopicIdentity(StrEnum):
    """How a topic keeps its identity across snapshots (LongEval re-numbers queries: use text)."""

    query_id = "query_id"
    text = "text"


class SnapshotStatus(StrEnum):
    """A snapshot is visible to reports only when `complete`."""

    ingesting = "ingesting"
    complete = "complete"
    failed = "failed"


class QrelsKind(StrEnum):
    """Where a qrels set comes from."""

    original = "original"  # shipped with the snapshot or published by the organisers
    pooled = "pooled"  # judgments collected on one of our pools
    expanded = "expanded"  # a parent set ∪ a pooled set
    derived = "derived"  # a parent set filtered (leave-one-group-out, topic subset, …)


class RunCategory(StrEnum):
    lexical = "lexical"
    neural = "neural"
    llm = "llm"
    other = "other"


class PoolStatus(StrEnum):
    open = "open"
    exported = "exported"
    judged = "judged"


class ResultRole(StrEnum):
    """What a reported figure in the literature stands for."""

    baseline = "baseline"
    best = "best"
    other = "other"
