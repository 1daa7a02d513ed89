"""The relational model of tcdb (see DESIGN.md): SQLModel tables and enums, nothing else."""

from tcdb.schema.base import metadata
from tcdb.schema.churn import SnapshotChurn
from tcdb.schema.collection import (
    Collection,
    Content,
    Document,
    Snapshot,
    SnapshotDocument,
    SnapshotTopic,
    Topic,
)
from tcdb.schema.enums import (
    DocIdentity,
    JudgeKind,
    PoolStatus,
    QrelsKind,
    ResultRole,
    RunCategory,
    RunType,
    SnapshotStatus,
    TopicIdentity,
    TopicMatch,
)
from tcdb.schema.literature import ReportedResult
from tcdb.schema.pools import Pool, PoolEntry, PoolRun
from tcdb.schema.published import PublishedResult
from tcdb.schema.qrels import (
    Judgment,
    JudgmentAnswer,
    QrelsProvenance,
    QrelsSet,
    UnresolvedJudgment,
)
from tcdb.schema.runs import (
    Evaluation,
    Measure,
    Run,
    RunEntry,
    RunVersion,
    RunVersionEntry,
    RunVersionUnresolved,
    Score,
    System,
    UnresolvedRunEntry,
)
from tcdb.schema.schema_upgrade import SchemaUpgrade
from tcdb.schema.topic_sets import TopicSet, TopicSetMember

__all__ = [
    "Collection", "Content", "DocIdentity", "Document", "Evaluation", "Judgment", "Measure",
    "Pool", "PoolEntry", "PoolRun", "PoolStatus", "PublishedResult", "QrelsKind", "QrelsSet",
    "ReportedResult",
    "ResultRole", "Run", "RunCategory", "RunEntry", "RunType", "RunVersion", "RunVersionEntry",
    "RunVersionUnresolved", "Score", "Snapshot",
    "SnapshotChurn", "SnapshotDocument", "SnapshotStatus", "SnapshotTopic", "System", "Topic",
    "TopicIdentity", "TopicMatch",
    "TopicSet", "TopicSetMember", "UnresolvedJudgment", "UnresolvedRunEntry", "metadata",
    "SchemaUpgrade", "JudgeKind", "JudgmentAnswer", "QrelsProvenance",
]
