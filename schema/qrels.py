"""Qrels sets — named, immutable sets of judgments of one snapshot — and their judgments."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Column, Enum, SmallInteger, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import CHECKSUM_LENGTH, DOC_ID_LENGTH, ITERATION_LENGTH, NAME_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, enum_column, utcnow
from tcdb.schema.enums import JudgeKind, QrelsKind


def _judge_kind_column() -> Enum:
    """`enum_column`'s portable enum, wide enough for `click_through_rate` (18 characters)."""
    return Enum(JudgeKind, name="judge_kind", native_enum=False, create_constraint=True,
                length=24, values_callable=lambda members: [m.value for m in members],
                validate_strings=True)


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
    # who judged (issue 44): sets stored before it was recorded are `unknown`; an LLM's model,
    # prompt and settings are in `qrels_provenance`
    judge_kind: JudgeKind = Field(default=JudgeKind.unknown, sa_column=Column(
        _judge_kind_column(), nullable=False, server_default=JudgeKind.unknown.value))


class QrelsProvenance(SQLModel, table=True):
    """How a qrels set was judged, beyond its judge kind: for an LLM the model, prompt and
    decoding settings, samples and their aggregation, and the answers that did not parse.

    A 1:1 table beside `qrels_set`, not columns of it: every report reads `qrels_set`, most sets
    are people's and have none of this, and a prompt template runs to pages of text.
    """

    __tablename__ = "qrels_provenance"

    qrels_set_id: int = Field(foreign_key="qrels_set.id", primary_key=True, ondelete="CASCADE")
    model: str | None = Field(default=None, max_length=NAME_LENGTH)  # gpt-4o, llama3.3:70b
    model_revision: str | None = Field(default=None, max_length=NAME_LENGTH)  # or digest
    provider: str | None = Field(default=None, max_length=NAME_LENGTH)  # openai, ollama, …
    prompt_template: str | None = Field(default=None, sa_column=Column(Text))
    prompt_sha256: str | None = Field(default=None, max_length=CHECKSUM_LENGTH)
    prompt_variant: str | None = Field(default=None, max_length=NAME_LENGTH)  # bing, basic, …
    few_shot_examples: str | None = Field(default=None, sa_column=Column(Text))
    few_shot_count: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = Field(default=None, sa_type=BigInteger)
    samples: int | None = None  # answers asked per (topic, document)
    aggregation: str | None = Field(default=None, max_length=NAME_LENGTH)  # mode, mean, …
    # the grades the judge was asked to re-judge (UMBRELA's `judge_cat`): the others in the
    # file are the base qrels' own; None: all
    judged_grades: str | None = Field(default=None, max_length=NAME_LENGTH)
    judged_at: date | None = None
    # (topic, document) pairs whose every answer failed to parse: kept in `judgment_answer`,
    # left out of `judgment` (never scored as grade 0)
    n_unparsed: int = 0
    source: str | None = Field(default=None, sa_column=Column(Text))  # sidecar / answers files


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


class JudgmentAnswer(SQLModel, table=True):
    """One answer of a judge for (qrels set, topic, document): raw text, whether it parsed,
    the grade parsed, tokens and cost. `sample` counts answers to the same pair (0, 1, …).

    Keyed by the document's external id, as the judge saw it: an answer is kept whether or not
    it parsed and whether or not a snapshot holds the document. Scoring never reads this table:
    it reads `judgment`, which holds only grades (so an unparsed answer is never a 0).
    """

    __tablename__ = "judgment_answer"

    qrels_set_id: int = Field(foreign_key="qrels_set.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    doc_id: str = Field(primary_key=True, max_length=DOC_ID_LENGTH)
    sample: int = Field(default=0, primary_key=True)
    answer: str | None = Field(default=None, sa_column=Column(Text))
    parsed: bool
    grade: int | None = Field(default=None, sa_type=SmallInteger)
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
