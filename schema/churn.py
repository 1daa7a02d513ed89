"""How one snapshot's documents became another's, counted once when the later one is ingested."""

from __future__ import annotations

from sqlalchemy import Column, Index, Text
from sqlmodel import Field, SQLModel


class SnapshotChurn(SQLModel, table=True):
    """Documents from snapshot a to snapshot b, by their source label in each and their state:
    `added`, `removed`, `unchanged`, or changed and `grew` / `shrank` / `same_length` (the
    normalised text's characters). Labels are NULL for unlabelled documents and for the side a
    document is absent from.

    The ingest counts them for the new snapshot against the one before it (it compared the two
    already, for its summary) and keeps the rows: `snapshot diff` and `stats` on a pair read a
    few rows instead of joining 2 × 1,000,000 memberships (~2 s on PostgreSQL). A pair without
    rows is counted live. Memberships never change once a snapshot is complete, so the rows
    stay true; they go with either snapshot.
    """

    __tablename__ = "snapshot_churn"
    __table_args__ = (Index("ix_snapshot_churn_pair", "snapshot_a_id", "snapshot_b_id"),)

    id: int | None = Field(default=None, primary_key=True)
    snapshot_a_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE")
    snapshot_b_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE", index=True)
    source_a: str | None = Field(default=None, sa_column=Column(Text))
    source_b: str | None = Field(default=None, sa_column=Column(Text))
    state: str = Field(max_length=16)
    n: int
