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

from tcdb.errors import DatabaseError

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
def head_revision() -> str:
    """The newest migration's revision, read from the migration files themselves: importing
    alembic for it would cost every command ~0.2 s of start-up (tests check it is alembic's)."""
    import re
    from importlib import resources

    links: dict[str, str | None] = {}
    for file in (resources.files("tcdb.migrations") / "versions").iterdir():
        if file.name.endswith(".py") and file.name != "__init__.py":
            found = dict(re.findall(r"^(revision|down_revision)\b[^=]*=\s*['\"]?(\w+)",
                                    file.read_text(encoding="utf-8"), re.MULTILINE))
            if "revision" in found:
                links[found["revision"]] = found.get("down_revision")
    heads = set(links) - set(links.values())
    if len(heads) != 1:
        raise DatabaseError(f"the migrations have {len(heads)} heads: {sorted(heads)}")
    return heads.pop()


def watch(engine: Any, where: str) -> None:
    """Check the schema on each new connection of `engine`; `where` names it in messages."""
    from sqlalchemy import event

    database = engine.url.database if engine.dialect.name == "sqlite" else None

    @event.listens_for(engine, "do_connect")
    def _connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
        if database and database != ":memory:" and not _CREATING.get() \
                and not Path(database).exists():
            raise DatabaseError(f"no tcdb database at {database}: create it with `tcdb db "
                                "upgrade` (or `tcdb demo`), or name another with "
                                "--database-url")
        try:
            return dialect.loaded_dbapi.connect(*cargs, **cparams)
        except dialect.loaded_dbapi.OperationalError as exc:
            if engine.dialect.name != "postgresql":
                raise
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
            raise DatabaseError(f"cannot reach the database at {where}: {reason}") from None

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
    if current != head:
        raise DatabaseError(f"{where} is at schema revision {current}, this tcdb expects "
                            f"{head}: run `tcdb db upgrade`")


def explain(exc: BaseException) -> str | None:
    """One line for a database refusal the user can act on, else None (a bug: a traceback).

    A write under a read-only role (`tcdb db grant-readonly`) is refused by the server; the
    line says which role and why instead of a driver traceback.
    """
    orig = getattr(exc, "orig", None)
    if orig is None or type(orig).__name__ != "InsufficientPrivilege":
        return None
    from sqlalchemy.engine import make_url

    from tcdb.settings import get_settings

    reason = str(orig).strip().splitlines()[0]
    role = make_url(get_settings().database_url).username or "this role"
    return f"{reason}: role {role} may only read this database (a read-only role)"
