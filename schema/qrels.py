"""Qrels sets — named, immutable sets of judgments of one snapshot — and their judgments."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, SmallInteger, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import CHECKSUM_LENGTH, DOC_ID_LENGTH, ITERATION_LENGTH, NAME_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, enum_column, utcnow
from tcdb.schema.enums import QrelsKind


class QrelsSet(Keyed, SQLModel, table=True):
    """Immutable once written. `expanded` sets name both parents: the base and the pooled set."""

    __tablename__ = "qrels_set"
    __table_args__ = (UniqueConstraint("snapshot_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    snapshot_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE", index=True)
    name: str = Field(max_length=NAME_LENGTH)
    kind: QrelsKind = Field(sa_column=Column(enum_column(QrelsKind, "qrels_kind"), nullable=False))
    parent_id: int | None = Field(default=None, foreign_key="qrels_set.id")
    second_parent_id: int | None = Field(default=None, foreign_key="qrels_set.id")
    assessor: str | None = Field(default=None, max_length=NAME_LENGTH)
    method: str | None = Field(default=None, max_length=NAME_LENGTH)  # how made: file, expand, …
    description: str | None = Field(default=None, sa_column=Column(Text))
    source: str | None = Field(default=None, sa_column=Column(Text))  # file path or ir_datasets id
    checksum: str | None = Field(default=None, max_length=CHECKSUM_LENGTH)  # of its file
    # sha256 of its judgments as lineage defines it (`tcdb.operations.lineage`), kept when the
    # set is written so a report's lineage reads it instead of hashing every judgment
    judgments_checksum: str | None = Field(default=None, max_length=CHECKSUM_LENGTH)
    n_judgments: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class Judgment(SQLModel, table=True):
    """(qrels set, topic, document) → grade. The primary key serves lookups by set and topic.

    The document may be any document of the collection, not only one of the set's snapshot:
    later qrels judge documents an earlier snapshot lacks. `iteration` is the qrels file's
    second column as it was given (TREC-COVID: the round that judged it).
    """

    __tablename__ = "judgment"

    qrels_set_id: int = Field(foreign_key="qrels_set.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    document_id: int = Field(foreign_key="document.id", primary_key=True)
    grade: int = Field(sa_type=SmallInteger)
    iteration: str | None = Field(default=None, max_length=ITERATION_LENGTH)


class UnresolvedJudgment(SQLModel, table=True):
    """A judgment of a document no snapshot of the collection holds (`--allow-unknown-docs`).

    Kept, not dropped: a relevant document counts in recall and AP however it is named, so
    evaluation must see it, as it sees run entries the snapshot lacks.
    """

    __tablename__ = "judgment_unresolved"

    qrels_set_id: int = Field(foreign_key="qrels_set.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    external_doc_id: str = Field(primary_key=True, max_length=DOC_ID_LENGTH)
    grade: int = Field(sa_type=SmallInteger)
    iteration: str | None = Field(default=None, max_length=ITERATION_LENGTH)
