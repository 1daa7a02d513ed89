"""Schema migrations through Alembic, callable from the CLI, tests and flows."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from tcdb.db import check_connection, get_engine
from tcdb.errors import DatabaseError


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(str(resources.files("tcdb.migrations")))))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return config


def _run(engine: Engine, action: str, revision: str) -> None:
    check_connection(engine)
    config = alembic_config(engine)
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        getattr(command, action)(config, revision)


def upgrade(url: str | None = None, revision: str = "head") -> None:
    _run(get_engine(url), "upgrade", revision)


def downgrade(revision: str, url: str | None = None) -> None:
    _run(get_engine(url), "downgrade", revision)


def head_revision() -> str:
    script = ScriptDirectory(str(resources.files("tcdb.migrations")))
    head = script.get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    check_connection(engine)
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def require_current(engine: Engine) -> None:
    """Refuse to work on a database that is not at the schema this tcdb expects."""
    current = current_revision(engine)
    head = head_revision()
    if current is None:
        raise DatabaseError("the database has no tcdb schema yet: run `tcdb db upgrade`")
    if current != head:
        raise DatabaseError(f"the database is at schema revision {current}, this tcdb expects "
                            f"{head}: run `tcdb db upgrade`")
