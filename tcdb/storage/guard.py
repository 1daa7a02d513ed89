"""No schema, no surprise: every connection tcdb opens first checks that the server answers,
that a SQLite file exists, and that the database is at the schema revision this tcdb expects.

Each failure is one `DatabaseError` line, from every entry point (CLI, API, flows, dashboard).
Without the checks, a command on an empty or older database fails deep inside with a driver
error ("no such table: collection"), and on SQLite the first connection creates an empty
`tcdb.sqlite` in whatever folder a notebook runs in. With it, the first connection of every
engine (`tcdb.storage.db.get_engine`) raises one `DatabaseError` naming the database and
`tcdb db upgrade`, and a SQLite file that does not exist is never created. The migrations
themselves, and the `db` commands that inspect an old schema, run `unguarded()`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from tcdb.errors import DatabaseError, DatabaseNewerError

_UNGUARDED: contextvars.ContextVar[bool] = contextvars.ContextVar("tcdb_unguarded",
                                                                 default=False)
_CREATING: contextvars.ContextVar[bool] = contextvars.ContextVar("tcdb_creating", default=False)


@contextmanager
def unguarded(*, creating: bool = False) -> Iterator[None]:
    """Connections used inside may find no schema, or an older one (migrations, `db current`);
    with `creating` (`tcdb db upgrade`), a SQLite file that does not exist is created."""
    token, creates = _UNGUARDED.set(True), _CREATING.set(creating)
    try:
        yield
    finally:
        _UNGUARDED.reset(token)
        _CREATING.reset(creates)


@cache
def _revision_links() -> dict[str, str | None]:
    """Each migration's revision → the one it revises, read from the migration files
    themselves: importing alembic for it would cost every command ~0.2 s of start-up (tests
    check the head is alembic's)."""
    import re
    from importlib import resources

    links: dict[str, str | None] = {}
    for file in (resources.files("tcdb.migrations") / "versions").iterdir():
        if file.name.endswith(".py") and file.name != "__init__.py":
            found = dict(re.findall(r"^(revision|down_revision)\b[^=]*=\s*['\"]?(\w+)",
                                    file.read_text(encoding="utf-8"), re.MULTILINE))
            if "revision" in found:
                links[found["revision"]] = found.get("down_revision")
    return links


def known_revisions() -> frozenset[str]:
    """Every schema revision this tcdb has a migration for."""
    return frozenset(_revision_links())


@cache
def head_revision() -> str:
    """The newest migration's revision (see `_revision_links`)."""
    links = _revision_links()
    heads = set(links) - set(links.values())
    if len(heads) != 1:
        raise DatabaseError(f"the migrations have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def missing_database(database: str, url: Any) -> str:
    """Where a missing SQLite database was looked for: the file, the folder a relative path
    was taken from (a worker runs flows in a temporary one), and the URL that named it."""
    path = Path(database)
    where = (f"{path.resolve()}" if path.is_absolute()
             else f"{path.resolve()} ({database} relative to the working folder {Path.cwd()})")
    return (f"no tcdb database at {where}, named by {url.render_as_string(hide_password=True)}:"
            " create it with `tcdb db upgrade` (or `tcdb demo`), or set TCDB_DATABASE_URL")


def watch(engine: Any, where: str) -> None:
    """Check the schema on each new connection of `engine`; `where` names it in messages."""
    from sqlalchemy import event

    database = engine.url.database if engine.dialect.name == "sqlite" else None

    @event.listens_for(engine, "do_connect")
    def _connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        if database and database != ":memory:" and not _CREATING.get() \
                and not Path(database).exists():
            raise DatabaseError(missing_database(database, engine.url))
        try:
            return dialect.loaded_dbapi.connect(*cargs, **cparams)
        except dialect.loaded_dbapi.OperationalError as exc:
            if engine.dialect.name != "postgresql":
                raise
            from tcdb.errors import DatabaseUnavailableError
            from tcdb.storage.faults import database_fault

            fault = database_fault(exc, where)
            if fault is not None and not isinstance(fault, DatabaseUnavailableError):
                raise fault from None  # a wrong password, no such database: not transient
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            raise DatabaseUnavailableError(f"cannot reach the database at {where}: "
                                           f"{reason} (nothing was written)") from None

    @event.listens_for(engine, "checkout")
    def _at_head(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        # Once per pooled connection: a connection a migration opened is checked at its first
        # guarded use, so a downgrade in this process is seen too.
        if _UNGUARDED.get() or record.info.get("tcdb_schema_ok"):
            return
        check(dbapi_conn, where)
        record.info["tcdb_schema_ok"] = True


def check(dbapi_conn: Any, where: str) -> None:
    """Raise DatabaseError unless the connection's database is at the head revision."""
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute("SELECT version_num FROM alembic_version")
        rows = cursor.fetchall()
    except Exception:  # noqa: BLE001 - no alembic_version table: no tcdb schema
        rows = None
    finally:
        cursor.close()
        dbapi_conn.rollback()  # PostgreSQL: a failed query aborts the transaction
    if not rows:
        raise DatabaseError(f"no tcdb schema in {where}: run `tcdb db upgrade`")
    current, head = rows[0][0], head_revision()
    if current not in known_revisions():
        raise newer_schema(where, current, written_by(dbapi_conn, current))
    if current != head:
        raise DatabaseError(f"{where} is at schema revision {current}, this tcdb expects "
                            f"{head}: run `tcdb db upgrade`")


def written_by(dbapi_conn: Any, revision: str) -> str | None:
    """The tcdb version that brought the database to `revision`, when one recorded it (the
    `schema_upgrade` table, from revision 0016 on)."""
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute("SELECT revision, tcdb_version FROM schema_upgrade")
        versions = dict(cursor.fetchall())
    except Exception:  # noqa: BLE001 - no such table: written before tcdb kept it
        versions = {}
    finally:
        cursor.close()
        dbapi_conn.rollback()
    return versions.get(revision)


def newer_schema(where: str, revision: str, version: str | None) -> DatabaseNewerError:
    """The database is at a revision this tcdb has no migration for: a newer tcdb wrote it."""
    from tcdb import __version__

    by = f"tcdb {version}" if version else "a newer tcdb"
    return DatabaseNewerError(f"database {where} is newer than this tcdb: {by} brought it to "
                              f"schema revision {revision}, this tcdb ({__version__}) knows "
                              f"revisions up to {head_revision()}; upgrade tcdb to use it "
                              "(nothing was written)")


def explain(exc: BaseException) -> str | None:
    """One line for a fault of the database (`tcdb.storage.faults`: read-only, full, a
    connection ended, a read-only role…), else None (a bug: a traceback)."""
    from tcdb.storage.faults import database_fault

    fault = database_fault(exc)
    return None if fault is None else str(fault)
