"""Alembic environment: the same revisions run on SQLite (batch mode) and PostgreSQL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

import tcdb.schema  # noqa: F401  (registers every table on the metadata)
from tcdb.schema.base import metadata
from tcdb.storage.db import configured_url, get_engine

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or None
    with get_engine(url or configured_url()).connect() as conn:
        _run(conn)


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
