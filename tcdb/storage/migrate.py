"""Schema migrations through Alembic, callable from the CLI, tests and flows."""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

from tcdb.errors import DatabaseError
from tcdb.storage.db import (
    check_connection,
    configured_url,
    get_engine,
    mask_url,
    sqlite_read_only_uri,
)
from tcdb.storage.guard import known_revisions, newer_schema, unguarded
from tcdb.storage.locks import lock_key

UPGRADES = "schema_upgrade"  # tcdb.schema.SchemaUpgrade
SCHEMA_LOCK = "schema\x00upgrade"  # the advisory lock every migration holds on PostgreSQL


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(str(resources.files("tcdb.migrations")))))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    return config


def _run(engine: Engine, action: str, revision: str) -> None:
    """Run an Alembic command in one transaction: all of a migration, or none of it.

    SQLite needs two things done by hand. Python's sqlite3 runs DDL outside any transaction
    unless told otherwise, so a failed migration would leave a half-changed schema: the
    transaction is begun explicitly. And batch migrations recreate tables, which the foreign
    keys of rows that refer to them would refuse: they are off during the migration (SQLite
    allows switching them only outside a transaction) and checked before the commit.
    """
    check_connection(engine)
    config = alembic_config(engine)
    where = mask_url(str(engine.url))
    with engine.connect() as conn:
        raw = conn.connection.driver_connection
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            assert raw is not None
            raw.isolation_level = None  # transactions begin where this code says
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                # One upgrade at a time: the next waits for the first to commit, then finds
                # the schema at head (several `tcdb db upgrade` at once on a fresh database
                # ended in UniqueViolation or "database is locked")
                if sqlite:
                    # one upgrade at a time takes the write lock from the start; a database
                    # this process can only read begins deferred, and only a migration that
                    # would write is refused (read-only, in one line)
                    readable_only = sqlite_read_only_uri(engine.url.database or "") is not None
                    conn.exec_driver_sql("BEGIN" if readable_only else "BEGIN IMMEDIATE")
                else:
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                 {"key": lock_key(SCHEMA_LOCK)})
                before = _refuse_newer(conn, where)
                config.attributes["connection"] = conn
                getattr(command, action)(config, revision)
                _record_upgrade(conn, before)
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise DatabaseError(f"the migration would break {len(broken)} foreign "
                                            f"key(s), e.g. in table {broken[0][0]}: rolled back")
        finally:
            if sqlite and raw is not None:
                raw.execute("PRAGMA foreign_keys=ON")
                raw.isolation_level = ""


def _refuse_newer(conn: Connection, where: str) -> str | None:
    """The database's revision; a revision this tcdb has no migration for (a newer tcdb
    upgraded it) is refused with one line naming that tcdb, not Alembic's "Can't locate
    revision"."""
    current = MigrationContext.configure(conn).get_current_revision()
    if current is not None and current not in known_revisions():
        raise newer_schema(where, current, _recorded(conn).get(current))
    return current


def _recorded(conn: Connection) -> dict[str, str]:
    """Revision → the tcdb version that brought the schema there (`schema_upgrade`)."""
    if not inspect(conn).has_table(UPGRADES):
        return {}
    rows = conn.execute(text(f"SELECT revision, tcdb_version FROM {UPGRADES}")).all()
    return {str(revision): str(version) for revision, version in rows}


def _record_upgrade(conn: Connection, before: str | None) -> None:
    """Note this tcdb's version against the revision the schema is now at, when it moved there
    (or nobody noted one): what an older tcdb reads to name the version that wrote it."""
    from tcdb import __version__

    after = MigrationContext.configure(conn).get_current_revision()
    if after is None or not inspect(conn).has_table(UPGRADES):
        return
    if after == before and after in _recorded(conn):
        return
    conn.execute(text(f"DELETE FROM {UPGRADES} WHERE revision = :revision"),
                 {"revision": after})
    conn.execute(text(f"INSERT INTO {UPGRADES} (revision, tcdb_version, upgraded_at) "
                      "VALUES (:revision, :version, :at)"),
                 {"revision": after, "version": __version__, "at": datetime.now(UTC)})


def upgrade(url: str | None = None, revision: str = "head") -> None:
    with unguarded(creating=True):
        _run(get_engine(url or configured_url()), "upgrade", revision)


def downgrade(revision: str, url: str | None = None) -> None:
    engine = get_engine(url or configured_url())
    with unguarded():
        _run(engine, "downgrade", revision)
    engine.dispose()  # its pooled connections were checked at the head revision


def head_revision() -> str:
    script = ScriptDirectory(str(resources.files("tcdb.migrations")))
    head = script.get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with unguarded():
        check_connection(engine)
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
