"""The stored kinds and statuses, beside the tables that hold them.

They are defined once, in `tcdb.vocabulary` (which imports nothing, so the CLI can use them
without loading the schema); this module names the ones the tables store.
"""

from tcdb.vocabulary import (
    DocIdentity,
    JudgeKind,
    PoolStatus,
    QrelsKind,
    ResultRole,
    RunCategory,
    RunType,
    SnapshotStatus,
    TieOrder,
    TopicIdentity,
    TopicMatch,
)

__all__ = [
    "DocIdentity", "JudgeKind", "PoolStatus", "QrelsKind", "ResultRole", "RunCategory", "RunType",
    "SnapshotStatus", "TieOrder", "TopicIdentity", "TopicMatch",
]
