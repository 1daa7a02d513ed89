"""Which tcdb brought the schema to each revision, so an older tcdb can name the newer one."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Field, SQLModel

from tcdb.schema.base import aware_datetime, utcnow


class SchemaUpgrade(SQLModel, table=True):
    """One row per schema revision a `tcdb db upgrade` (or downgrade) reached: the tcdb version
    that ran it, and when. A tcdb that finds the database at a revision it does not know reads
    the row of that revision to say "written by tcdb X; upgrade tcdb" instead of Alembic's
    "Can't locate revision". Later tcdb versions keep writing it (`tcdb.storage.migrate`).
    """

    __tablename__ = "schema_upgrade"

    revision: str = Field(primary_key=True, max_length=32)
    tcdb_version: str = Field(max_length=64)
    upgraded_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())
