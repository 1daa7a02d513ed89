"""Assessment pools: method and parameters, contributing runs, and the documents to judge."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import LABEL_LENGTH, NAME_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, enum_column, utcnow
from tcdb.schema.enums import PoolStatus


class Pool(Keyed, SQLModel, table=True):
    """A depth-k pool over chosen runs of one snapshot, minus what a base qrels set judged."""

    __tablename__ = "pool"
    # Unique per snapshot: every round of a campaign has its own `remainder50`.
    __table_args__ = (UniqueConstraint("snapshot_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=NAME_LENGTH)
    snapshot_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE", index=True)
    method: str = Field(default="depth", max_length=LABEL_LENGTH)  # the strategy's name
    # The strategy with every parameter (`rbp:p=0.8,aggregate=sum`); None before strategies.
    parameters: str | None = Field(default=None, sa_column=Column(Text))
    budget: int | None = None  # at most this many documents (None: a plain depth-k pool)
    budget_per_topic: bool = False  # the budget is per topic, not in total
    depth: int
    tie_order: str = Field(default="trec_eval", max_length=LABEL_LENGTH)
    max_per_topic: int | None = None
    base_qrels_id: int | None = Field(default=None, foreign_key="qrels_set.id")
    # The `pooled` qrels set that collects the assessors' judgments (batches append to it).
    pooled_qrels_id: int | None = Field(default=None, foreign_key="qrels_set.id")
    status: PoolStatus = Field(
        default=PoolStatus.open,
        sa_column=Column(enum_column(PoolStatus, "pool_status"), nullable=False),
    )
    description: str | None = Field(default=None, sa_column=Column(Text))
    n_documents: int = 0
    created_at: datetime = Field(default_factory=utcnow, sa_type=aware_datetime())
    exported_at: datetime | None = Field(default=None, sa_type=aware_datetime())


class PoolRun(SQLModel, table=True):
    """A run that contributed to a pool."""

    __tablename__ = "pool_run"

    pool_id: int = Field(foreign_key="pool.id", primary_key=True, ondelete="CASCADE")
    run_id: int = Field(foreign_key="run.id", primary_key=True, ondelete="CASCADE")


class PoolEntry(SQLModel, table=True):
    """A document to judge for a topic, with the best rank any contributing run gave it.

    Without FOREIGN KEY constraints, like `RunEntry`: a depth-100 pool over a hundred runs is
    half a million rows written by one INSERT … SELECT, and per-row trigger checks would cost
    more than the pooling itself (bench/pools.py). `tcdb.pools` writes only ids it read from
    run_entry, and `tcdb.storage.housekeeping` deletes entries with their snapshot.
    """

    __tablename__ = "pool_entry"

    pool_id: int = Field(primary_key=True)
    topic_id: int = Field(primary_key=True)
    document_id: int = Field(primary_key=True)
    best_rank: int
    n_runs: int  # how many chosen runs retrieved it in their top k
    # Its place in the topic's judging order (1, 2, …): a budget is a prefix. None for pools
    # built before strategies (a depth-k pool keeps no order).
    position: int | None = None
    round: int | None = None  # the round that added it (adaptive strategies judge in rounds)
