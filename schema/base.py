"""The metadata every table shares: a naming convention, set before any table exists.

Without named constraints Alembic cannot alter or drop them on SQLite (batch mode) and
autogenerate silently misses constraint changes; the convention makes every name predictable.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, Enum
from sqlmodel import SQLModel

SQLModel.metadata.naming_convention = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = SQLModel.metadata


def stored_id(value: int | None) -> int:
    """A primary key read back from the database, where it is never NULL.

    SQLModel types `id` columns as optional (None until the INSERT), so selected ids arrive
    typed `int | None`; this says "stored" once, loudly, instead of `id or 0`.
    """
    if value is None:
        raise RuntimeError("a stored row has no id")
    return value


class Keyed:
    """A row whose integer primary key `id` is known once it is stored: `row.pk`.

    Code that reads stored rows uses `pk`, which says so loudly instead of querying for id 0.
    """

    @property
    def pk(self) -> int:
        value = getattr(self, "id", None)
        if value is None:
            raise RuntimeError(f"this {type(self).__name__} is not stored yet: it has no id")
        return int(value)


def utcnow() -> datetime:
    """Timezone-aware now; sqlmodel stores datetimes with their zone."""
    return datetime.now(UTC)


def aware_datetime() -> DateTime:
    return DateTime(timezone=True)


def enum_column(enum_cls: type, name: str) -> Enum:
    """A portable enum: VARCHAR plus a CHECK constraint on both SQLite and PostgreSQL.

    Native PostgreSQL enum types would need their own CREATE/DROP TYPE in every migration.
    """
    return Enum(
        enum_cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=16,
        values_callable=lambda members: [m.value for m in members],
        validate_strings=True,
    )
