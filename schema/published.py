"""Results tables an organiser publishes: one aggregate figure per system, snapshot and measure.

LongEval publishes, per team × run × snapshot, the ir_measures aggregates of each run (no
run files, no per-topic scores). A row here is one of those figures, kept with the file it
came from so a report can name its source.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import VERSION_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, utcnow


class PublishedResult(Keyed, SQLModel, table=True):
    """One published aggregate: (snapshot, system, measure, version) → value, with its source
    file.

    The system is the collection's `system` (group and name), so two groups' `run1` stay two
    systems and a published figure lines up with the same system's own runs. `version` is the
    submission's version as the table gives it (LongEval: the resubmission's timestamp; "" when
    the table has none): a resubmitted run keeps every version, and readers take the latest.
    """

    __tablename__ = "published_result"
    __table_args__ = (UniqueConstraint("snapshot_id", "system_id", "measure", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE", index=True)
    snapshot_id: int = Field(foreign_key="snapshot.id", ondelete="CASCADE")
    system_id: int = Field(foreign_key="system.id", ondelete="CASCADE", index=True)
    measure: str = Field(max_length=100)  # as ir_measures names it (nDCG@10, AP, P@10)
    # the submission's version ("": none)
    version: str = Field(default="", max_length=VERSION_LENGTH,
                         sa_column_kwargs={"server_default": ""})
    value: float
    source: str = Field(sa_column=Column(Text, nullable=False))  # the file's name
    checksum: str = Field(max_length=64)  # sha256 of the file
    imported_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())
