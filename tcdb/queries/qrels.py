"""Judgments as the reports and evaluation read them: by external ids, by integer ids, the
relevant ones, and the topics a set judges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Select, case, func, select
from sqlmodel import Session, col

from tcdb.collections.sources.records import QrelRecord
from tcdb.schema import (
    Document,
    Judgment,
    QrelsKind,
    QrelsSet,
    Score,
    SnapshotDocument,
    SnapshotTopic,
    UnresolvedJudgment,
)
from tcdb.storage.bulk import int_rows
from tcdb.storage.db import connection_of

if TYPE_CHECKING:
    import pandas as pd


def qrels_topics(bind: Connection | Session, qrels_set_id: int, snapshot_id: int
                 ) -> dict[int, str]:
    """topic.id → external id of every topic the qrels set judges (the trec_eval -c topic set).

    A `published` set holds no judgments: its topics are those its scores name (trec_eval
    reports exactly the topics its qrels judge; `tcdb.scoring.score_import`).
    """
    conn = connection_of(bind)
    kind = conn.execute(select(col(QrelsSet.kind)).where(
        col(QrelsSet.id) == qrels_set_id)).scalar_one_or_none()
    source = Score if kind == QrelsKind.published else Judgment
    query = (
        select(col(source.topic_id), col(SnapshotTopic.external_id))
        .distinct()
        .join(SnapshotTopic, (col(SnapshotTopic.topic_id) == col(source.topic_id))
              & (col(SnapshotTopic.snapshot_id) == snapshot_id))
        .where(col(source.qrels_set_id) == qrels_set_id)
    )
    return dict(conn.execute(query).tuples().all())


def qrels_records(bind: Connection | Session, qrels_set_id: int, snapshot_id: int
                  ) -> list[QrelRecord]:
    """A qrels set by external ids, with grades and iterations: topics as the snapshot names
    them, documents as the snapshot names them — or, for a document the snapshot lacks, by its
    collection key (its id, or its URL) — and the unresolved judgments as they were given."""
    conn = connection_of(bind)
    return [QrelRecord(topic, doc, grade, iteration=iteration)
            for query in _judgments_by_name(qrels_set_id, snapshot_id)
            for topic, doc, grade, iteration in conn.execute(query)]


def _judgments_by_name(qrels_set_id: int, snapshot_id: int, iteration: bool = True
                       ) -> tuple[Select[Any], ...]:
    """The queries of `qrels_records`: (topic, document, grade[, iteration]) of the resolved
    judgments, then of the unresolved ones."""
    resolved = (
        select(col(SnapshotTopic.external_id),
               func.coalesce(col(SnapshotDocument.external_id), col(Document.key)),
               col(Judgment.grade), *[col(Judgment.iteration)] * iteration)
        .select_from(Judgment)
        .join(SnapshotTopic, (col(SnapshotTopic.topic_id) == col(Judgment.topic_id))
              & (col(SnapshotTopic.snapshot_id) == snapshot_id))
        .join(Document, col(Document.id) == col(Judgment.document_id))
        .outerjoin(SnapshotDocument,
                   (col(SnapshotDocument.document_id) == col(Judgment.document_id))
                   & (col(SnapshotDocument.snapshot_id) == snapshot_id))
        .where(col(Judgment.qrels_set_id) == qrels_set_id)
    )
    unresolved = (
        select(col(SnapshotTopic.external_id), col(UnresolvedJudgment.external_doc_id),
               col(UnresolvedJudgment.grade), *[col(UnresolvedJudgment.iteration)] * iteration)
        .join(SnapshotTopic, (col(SnapshotTopic.topic_id) == col(UnresolvedJudgment.topic_id))
              & (col(SnapshotTopic.snapshot_id) == snapshot_id))
        .where(col(UnresolvedJudgment.qrels_set_id) == qrels_set_id)
    )
    return resolved, unresolved


def qrels_frame(bind: Connection | Session, qrels_set_id: int) -> pd.DataFrame:
    """A qrels set as a DataFrame of external ids — `topic, doc, grade` — as evaluation reads
    it (`qrels_records`: documents the snapshot lacks and unresolved ones included)."""
    import pandas as pd

    conn = connection_of(bind)
    snapshot_id = conn.execute(select(col(QrelsSet.snapshot_id)).where(
        col(QrelsSet.id) == qrels_set_id)).scalar_one()
    records = qrels_records(conn, qrels_set_id, snapshot_id)
    return pd.DataFrame([(r.topic_id, r.doc_id, r.grade) for r in records],
                        columns=["topic", "doc", "grade"])


def qrels_dict(frame: pd.DataFrame) -> dict[str, dict[str, int]]:
    """A qrels frame (`topic, doc, grade` as external ids) as ir_measures' dict of dicts."""
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, grade in zip(frame["topic"].tolist(), frame["doc"].tolist(),
                                 frame["grade"].tolist(), strict=True):
        qrels.setdefault(topic, {})[doc] = grade
    return qrels


def qrels_of(bind: Connection | Session, qrels_set_id: int) -> dict[str, dict[str, int]]:
    """A stored qrels set as ir_measures reads it: topic → document → grade, external ids
    (`qrels_records`' names and order). The one way evaluation, pooling and the reports load
    judgments to score: the rows go straight into the dicts (a record and a frame row per
    judgment cost ~20 µs each, 3 s for a pool simulation's 150,000 judgments)."""
    conn = connection_of(bind)
    snapshot_id = conn.execute(select(col(QrelsSet.snapshot_id)).where(
        col(QrelsSet.id) == qrels_set_id)).scalar_one()
    qrels: dict[str, dict[str, int]] = {}
    for query in _judgments_by_name(qrels_set_id, snapshot_id, iteration=False):
        for topic, doc, grade in conn.execute(query).tuples():
            judged = qrels.get(topic)
            if judged is None:
                judged = qrels[topic] = {}
            judged[doc] = grade
    return qrels


def unresolved_judgments(bind: Connection | Session, qrels_set_id: int
                         ) -> list[tuple[int, str, int, str | None]]:
    """(topic id, external doc id, grade, iteration) of the judgments of documents no
    snapshot holds."""
    query = select(col(UnresolvedJudgment.topic_id), col(UnresolvedJudgment.external_doc_id),
                   col(UnresolvedJudgment.grade), col(UnresolvedJudgment.iteration)).where(
        col(UnresolvedJudgment.qrels_set_id) == qrels_set_id)
    return [(t, d, g, i) for t, d, g, i in connection_of(bind).execute(query)]


def load_judgments(conn: Connection, qrels_set_id: int) -> pd.DataFrame:
    """A qrels set as integer ids: `[topic, doc, grade]`."""
    import pandas as pd

    data = int_rows(conn, "SELECT topic_id, document_id, grade FROM judgment "
                    f"WHERE qrels_set_id = {int(qrels_set_id)}", 3)
    return pd.DataFrame({"topic": data[:, 0], "doc": data[:, 1], "grade": data[:, 2]})


def relevant_documents(conn: Connection, qrels_set_id: int, snapshot_id: int
                       ) -> dict[int, list[tuple[int, str]]]:
    """topic.id → [(document.id, external doc id)] of the relevant (grade > 0) judgments."""
    from tcdb.schema import Judgment, SnapshotDocument

    query = (
        select(col(Judgment.topic_id), col(Judgment.document_id), col(SnapshotDocument.external_id))
        .join(SnapshotDocument, (col(SnapshotDocument.document_id) == col(Judgment.document_id))
              & (col(SnapshotDocument.snapshot_id) == snapshot_id))
        .where(col(Judgment.qrels_set_id) == qrels_set_id, col(Judgment.grade) > 0)
    )
    found: dict[int, list[tuple[int, str]]] = {}
    for topic_id, doc_id, external in conn.execute(query):
        found.setdefault(topic_id, []).append((doc_id, external))
    return found


def judgment_counts(bind: Connection | Session, qrels_set_id: int, snapshot_id: int
                    ) -> list[tuple[str, int, int]]:
    """(external topic id, judged documents, relevant ones: grade > 0) per topic of a set."""
    query = (
        select(col(SnapshotTopic.external_id), func.count(),
               func.sum(case((col(Judgment.grade) > 0, 1), else_=0)))
        .join(SnapshotTopic, (col(SnapshotTopic.topic_id) == col(Judgment.topic_id))
              & (col(SnapshotTopic.snapshot_id) == snapshot_id))
        .where(col(Judgment.qrels_set_id) == qrels_set_id)
        .group_by(col(SnapshotTopic.external_id))
    )
    return [(topic, int(n), int(relevant or 0))
            for topic, n, relevant in connection_of(bind).execute(query)]
