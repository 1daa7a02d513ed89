"""Systems, their runs on snapshots, the ranked entries, and per-topic scores."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import (
    CHECKSUM_LENGTH,
    DOC_ID_LENGTH,
    MEASURE_LENGTH,
    NAME_LENGTH,
    VERSION_LENGTH,
)
from tcdb.schema.base import Keyed, aware_datetime, enum_column, utcnow
from tcdb.schema.enums import RunCategory, RunType


class System(Keyed, SQLModel, table=True):
    """A retrieval system followed across snapshots (its runs share it).

    Identified by its group and its name: two groups' `run1` are two systems. `group_name` is
    "" for a system of no known group.
    """

    __tablename__ = "system"
    __table_args__ = (UniqueConstraint("collection_id", "group_name", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE")
    group_name: str = Field(default="", max_length=NAME_LENGTH)
    name: str = Field(max_length=NAME_LENGTH)
    description: str | None = Field(default=None, sa_column=Column(Text))


class Run(Keyed, SQLModel, table=True):
    """One system's run on one snapshot, with what the campaign knows about it."""

    __tablename__ = "run"
    __table_args__ = (UniqueConstraint("snapshot_id", "tag"),)

    id: int | None = Field(default=None, primary_key=True)
    snapshot_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE", index=True)
    system_id: int = Field(foreign_key="system.id", index=True)
    tag: str = Field(max_length=NAME_LENGTH)
    group_name: str | None = Field(default=None, max_length=NAME_LENGTH)
    run_type: RunType = Field(
        default=RunType.automatic,
        sa_column=Column(enum_column(RunType, "run_type"), nullable=False,
                         server_default=RunType.automatic.value),
    )
    contributed: bool = False  # fed the official pools (a judged run)
    category: RunCategory | None = Field(
        default=None, sa_column=Column(enum_column(RunCategory, "run_category"), nullable=True)
    )
    submitted: dt.date | None = None
    first_stage: str | None = Field(default=None, max_length=NAME_LENGTH)  # the run it re-ranked
    checksum: str | None = Field(default=None, max_length=CHECKSUM_LENGTH)  # sha256 of the run file
    source: str | None = Field(default=None, sa_column=Column(Text))
    description: str | None = Field(default=None, sa_column=Column(Text))
    # Its retrieval toolkit(s), else libraries, from its ir_metadata: reports group by it.
    platform: str | None = Field(default=None, sa_column=Column(Text))
    # {"ir_metadata": {"yaml": its text as given, "data": parsed, "source": header or file}}
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column("metadata", JSON))
    n_entries: int = 0
    n_unresolved: int = 0
    # lines of its file set aside under --on-bad-lines warn|skip (migration 0020)
    n_rejected: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    # The version its entries are (migration 0022): the label its import gave (LongEval's
    # resubmission timestamp) or the number tcdb counted ("1", "2", …). Earlier versions, kept
    # when a changed file replaced them, are `RunVersion` rows.
    version: str = Field(default="1", max_length=VERSION_LENGTH,
                         sa_column_kwargs={"server_default": "1"})
    created_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class RunVersion(Keyed, SQLModel, table=True):
    """An earlier version of a run: what a resubmission superseded, kept with its entries.

    `run import --replace` of a changed file makes the new file the run (its id, its place in
    pools, its scores to come) and moves what it replaced here, so reports use the latest
    version and an earlier one can still be scored (`evaluate --version`). The entries move
    with it to `run_version_entry` and `run_version_unresolved`.
    """

    __tablename__ = "run_version"
    __table_args__ = (UniqueConstraint("run_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", ondelete="CASCADE", index=True)
    version: str = Field(max_length=VERSION_LENGTH)
    checksum: str | None = Field(default=None, max_length=CHECKSUM_LENGTH)
    source: str | None = Field(default=None, sa_column=Column(Text))
    submitted: dt.date | None = None
    meta: dict[str, Any] | None = Field(default=None, sa_column=Column("metadata", JSON))
    n_entries: int = 0
    n_unresolved: int = 0
    n_rejected: int = 0
    imported_at: dt.datetime = Field(sa_type=aware_datetime())  # when this version came in
    superseded_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class RunVersionEntry(SQLModel, table=True):
    """A `RunEntry` of an earlier version, moved as it was (no FOREIGN KEY, like `RunEntry`)."""

    __tablename__ = "run_version_entry"

    version_id: int = Field(primary_key=True)
    topic_id: int = Field(primary_key=True)
    eval_rank: int = Field(primary_key=True)
    document_id: int
    rank: int
    score: float


class RunVersionUnresolved(SQLModel, table=True):
    """An `UnresolvedRunEntry` of an earlier version, moved as it was."""

    __tablename__ = "run_version_unresolved"

    version_id: int = Field(foreign_key="run_version.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    external_doc_id: str = Field(primary_key=True, max_length=DOC_ID_LENGTH)
    rank: int
    eval_rank: int
    score: float


class RunEntry(SQLModel, table=True):
    """(run, topic, document) → rank, score. The big table: integer keys only.

    Keyed by (run, topic, eval_rank), the run's ranking as trec_eval sees it, so that the one
    index is also every "top k" (pools, unjudged counts, first relevant rank) as a range scan.
    A second index on the document cost half of COPY's speed (bench/runs.py): the writer
    (`tcdb.runs`) refuses a document twice per topic before anything is written.

    Deliberately without FOREIGN KEY constraints: PostgreSQL checks them with one trigger call
    per row, which cuts COPY from ~620k to ~50k rows/s (bench/bulk_load.py). The writer
    resolves every id inside the same transaction, and deleting a run deletes its entries
    (`tcdb.storage.housekeeping`), so the references hold without the triggers.
    """

    __tablename__ = "run_entry"

    run_id: int = Field(primary_key=True)
    topic_id: int = Field(primary_key=True)
    # The rank evaluation sees: trec_eval's order (score descending, then document id
    # descending) over all of the run's entries for the topic, unresolved ones included.
    eval_rank: int = Field(primary_key=True)
    document_id: int
    rank: int  # the file's rank column, as submitted (trec_eval ignores it)
    score: float


class UnresolvedRunEntry(SQLModel, table=True):
    """Entries for documents the snapshot does not have (`--allow-unknown-docs`).

    Kept, not dropped: they occupy ranks, so evaluation must see them to match trec_eval.
    """

    __tablename__ = "run_entry_unresolved"

    run_id: int = Field(foreign_key="run.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    external_doc_id: str = Field(primary_key=True, max_length=DOC_ID_LENGTH)
    rank: int
    eval_rank: int  # see RunEntry.eval_rank
    score: float


class Measure(Keyed, SQLModel, table=True):
    """An evaluation measure by its ir_measures name (`nDCG@10`, `AP`)."""

    __tablename__ = "measure"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=MEASURE_LENGTH, unique=True)


class Evaluation(SQLModel, table=True):
    """That (run, qrels set, measure) was evaluated, so it is not computed again.

    `residual_of_id` is 0 for the run as submitted; otherwise the qrels set whose judged
    documents were removed from the run before scoring (residual evaluation, TREC-COVID).
    """

    __tablename__ = "evaluation"

    run_id: int = Field(foreign_key="run.id", primary_key=True, ondelete="CASCADE")
    qrels_set_id: int = Field(foreign_key="qrels_set.id", primary_key=True, ondelete="CASCADE")
    residual_of_id: int = Field(default=0, primary_key=True)
    measure_id: int = Field(foreign_key="measure.id", primary_key=True)
    source: str = Field(default="ir_measures", max_length=32)  # or "imported" (trec_eval -q)
    n_topics: int = 0
    computed_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class Score(SQLModel, table=True):
    """(run, qrels set, measure, topic) → value, with trec_eval semantics.

    Without FOREIGN KEY constraints for the same reason as `RunEntry`: written in bulk by
    `tcdb.scoring.evaluate`, which resolves every id; `tcdb.storage.housekeeping` deletes with the
    run.
    """

    __tablename__ = "score"

    run_id: int = Field(primary_key=True)
    qrels_set_id: int = Field(primary_key=True)
    residual_of_id: int = Field(default=0, primary_key=True)  # see Evaluation
    measure_id: int = Field(primary_key=True)
    topic_id: int = Field(primary_key=True)
    value: float
