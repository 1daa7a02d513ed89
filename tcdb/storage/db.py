"""The database layer: engines, sessions, schema revision checks, error kinds. The bulk
writer and reader are `tcdb.storage.bulk`."""

from __future__ import annotations

import atexit
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlmodel import Session

from tcdb.errors import BusyError, DatabaseError
from tcdb.settings import get_settings
from tcdb.storage.urls import mask_url, normalise_url

_ENGINES: dict[str, Engine] = {}
_OWNER_PID = os.getpid()  # the process whose connections `_ENGINES` holds (see close_engines)
SQLITE_BUSY_TIMEOUT_MS = 30_000  # how long a SQLite writer waits for another one to finish
SQLITE_BUSY, SQLITE_LOCKED = 5, 6  # result codes: another connection holds the lock


@contextmanager
def database_faults(url: str) -> Iterator[None]:
    """Within the block, a fault of the database at `url` (read-only, full, not a database, a
    connection ended) leaves as one `DatabaseError` (`tcdb.storage.faults`), whichever front
    end called."""
    from tcdb.storage.faults import database_fault

    try:
        yield
    except Exception as exc:
        fault = database_fault(exc, mask_url(normalise_url(url)))
        if fault is None or fault is exc:
            raise
        raise fault from exc


def configured_url() -> str:
    """The database of this process's settings (`TCDB_DATABASE_URL`, else the SQLite default):
    what `tcdb.operations.Database()` opens when no URL is given."""
    return normalise_url(get_settings().database_url)


def get_engine(url: str, *, read_only: bool = False) -> Engine:
    """One engine per URL per process. SQLite gets WAL, foreign keys and a busy timeout."""
    url = normalise_url(url)
    key = f"{url}|ro={read_only}"
    if key in _ENGINES:
        return _ENGINES[key]
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise DatabaseError(f"malformed database URL {url!r}: {exc}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = _sqlite_engine(url, read_only=read_only)
    elif backend == "postgresql":
        if parsed.get_driver_name() != "psycopg":
            raise DatabaseError(f"PostgreSQL is used through psycopg 3: write {mask_url(url)!r} "
                                "as postgresql+psycopg://…")
        engine = create_engine(url, echo=get_settings().echo_sql, pool_pre_ping=True,
                               connect_args={"connect_timeout": 10})
        _quiet_second_error_of_a_lost_copy()
        if read_only:
            @event.listens_for(engine, "connect")
            def _read_only(dbapi_conn: Any, _record: Any) -> None:
                dbapi_conn.read_only = True
    else:
        raise DatabaseError(f"unsupported database {backend!r} in {mask_url(url)!r}: "
                            "use sqlite:///FILE or postgresql+psycopg://…")
    from tcdb.storage import guard

    guard.watch(engine, mask_url(url))
    _ENGINES[key] = engine
    return engine


def _lost_copy_echo(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("error ignored terminating")


def _quiet_second_error_of_a_lost_copy() -> None:
    """When the server ends the connection during a COPY (a backend terminated, a restart),
    psycopg logs a second error on leaving the COPY ("error ignored terminating <psycopg.Copy
    [BAD] …>: the connection is lost") after the first one, which tcdb already says in its
    one `error:` line. That echo is left out; psycopg's other messages are not."""
    logger = logging.getLogger("psycopg")
    if _lost_copy_echo not in logger.filters:
        logger.addFilter(_lost_copy_echo)


def _sqlite_engine(url: str, *, read_only: bool) -> Engine:
    parsed = make_url(url)
    database = parsed.database or ""
    if database and database != ":memory:":
        folder = Path(database).expanduser().resolve().parent
        if not folder.is_dir():
            raise DatabaseError(f"cannot open {mask_url(url)!r}: folder {folder} does not exist")
    engine = create_engine(url, echo=get_settings().echo_sql,
                           connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine, "do_connect")
    def _unwritable(_dialect: Any, record: Any, cargs: Any, cparams: Any) -> None:
        # before the guard's listener, which makes the connection from these arguments
        opening = sqlite_read_only_uri(database) if database and database != ":memory:" \
            else None
        if opening is not None:
            cargs[:] = [opening]
            cparams["uri"] = True
            record.info["tcdb_read_only_file"] = True

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, record: Any) -> None:
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        if record.info.get("tcdb_read_only_file"):
            cursor.execute("PRAGMA query_only=ON")
        elif not read_only:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        else:
            cursor.execute("PRAGMA query_only=ON")
        cursor.execute("PRAGMA cache_size=-200000")
        cursor.execute("PRAGMA temp_store=MEMORY")
        cursor.close()

    return engine


def sqlite_read_only_uri(database: str) -> str | None:
    """How to open a SQLite file this process may read but not write (a database published
    for browsing, a read-only folder or mount), or None when it can write it.

    Opened read-only (`mode=ro`), reading works and every write is refused by SQLite itself
    (one line, `tcdb.storage.faults`). When no `-wal` is left (tcdb checkpoints at exit) and
    the file or its folder cannot be written, it is opened `immutable`: nothing else can be
    writing it, and SQLite creates no `-wal` or `-shm` beside it.
    """
    path = Path(database).expanduser().resolve()
    if not path.is_file() or not os.access(path, os.R_OK):
        return None
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    folder_writable = os.access(path.parent, os.W_OK | os.X_OK)
    side_files_writable = all(os.access(f, os.W_OK) for f in (wal, shm) if f.exists())
    if os.access(path, os.W_OK) and side_files_writable and \
            (folder_writable or (wal.exists() and shm.exists())):
        return None
    immutable = not wal.exists() and (not folder_writable or not os.access(path, os.W_OK))
    return f"{path.as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")


def connection_of(bind: Connection | Session) -> Connection:
    """The Core connection of a session (its transaction), or the connection itself."""
    return bind.connection() if isinstance(bind, Session) else bind


def is_postgres(bind: Engine | Connection | Session) -> bool:
    engine = bind.get_bind() if isinstance(bind, Session) else bind
    return engine.dialect.name == "postgresql"


def check_connection(engine: Engine) -> None:
    """Fail with one clear line when the server cannot be reached."""
    from sqlalchemy.exc import DBAPIError

    from tcdb.storage.faults import database_fault

    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except DBAPIError as exc:
        fault = database_fault(exc, mask_url(str(engine.url)))
        if fault is not None:
            raise fault from None
        if not isinstance(exc, OperationalError):
            raise
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise DatabaseError(f"cannot reach the database at {mask_url(str(engine.url))}: "
                            f"{reason} (nothing was written)") from None


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session whose transaction commits on success and rolls back on any error.

    SQLite's "database is locked" (another process kept writing past the busy timeout) becomes
    one line saying so, not a driver traceback; so does a fault of the database itself
    (`tcdb.storage.faults`: read-only, full, a connection the server ended).
    """
    from tcdb.storage.faults import database_fault

    engine = get_engine(url)
    with Session(engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException as exc:
            # a connection the server ended cannot roll back: its transaction is gone already
            with suppress(Exception):
                session.rollback()
            if is_locked_error(exc):
                raise locked_error() from None
            fault = database_fault(exc, mask_url(str(engine.url)))
            if fault is None or fault is exc:
                raise
            raise fault from exc


def is_locked_error(exc: BaseException) -> bool:
    """SQLite's busy error, through SQLAlchemy or straight from the driver (the bulk writer)."""
    import sqlite3

    orig = exc.orig if isinstance(exc, OperationalError) else exc
    return isinstance(orig, sqlite3.OperationalError) and (
        (getattr(orig, "sqlite_errorcode", 0) & 0xFF) in (SQLITE_BUSY, SQLITE_LOCKED))


def locked_error() -> BusyError:
    """What a SQLite writer says when another one kept the database past the busy timeout."""
    seconds = SQLITE_BUSY_TIMEOUT_MS // 1000
    return BusyError(f"the database is still locked by another process that is writing to it "
                     f"after {seconds} s (an ingest or an import?); try again when it has "
                     "finished")


def is_integrity_error(exc: BaseException) -> bool:
    """A constraint violation, whether raised through SQLAlchemy or by the bulk writer's own
    driver calls (psycopg's COPY, sqlite3's executemany)."""
    import sqlite3

    from sqlalchemy.exc import IntegrityError

    if isinstance(exc, IntegrityError | sqlite3.IntegrityError):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(exc, psycopg.IntegrityError)


def dispose_engine(url: str) -> None:
    """Close an engine's connections (tests drop databases afterwards)."""
    url = normalise_url(url)
    for key in [k for k in _ENGINES if k.split("|ro=")[0] == url]:
        _ENGINES.pop(key).dispose()


def forget_inherited_engines() -> None:
    """In a forked child: drop the parent's engines without closing their connections (they
    are the parent's), so this process opens its own (SQLAlchemy's rule for `fork`)."""
    global _OWNER_PID
    for engine in _ENGINES.values():
        engine.dispose(close=False)
    _ENGINES.clear()
    _OWNER_PID = os.getpid()


@atexit.register
def close_engines() -> None:
    """Close every engine's connections when the process ends (a command, a script using
    `tcdb.api`, a flow run).

    Why: on SQLite the last connection to close checkpoints the write-ahead log into the
    database file and removes `-wal`; left open at exit, the writes of the last command stay
    in `tcdb.sqlite-wal`, and a `tcdb.sqlite` copied, mailed or backed up alone silently
    lacks them. A forked child that did not forget its parent's engines leaves them alone:
    their connections are the parent's."""
    if os.getpid() != _OWNER_PID:
        return
    while _ENGINES:
        _, engine = _ENGINES.popitem()
        with suppress(Exception):
            engine.dispose()


def truncate_all(url: str | None = None) -> None:
    """Empty every tcdb table, keeping the schema (tests, `tcdb demo --fresh`)."""
    import tcdb.schema  # noqa: F401
    from tcdb.schema.base import metadata

    engine = get_engine(url or configured_url())
    names = [t.name for t in metadata.sorted_tables]
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            quoted = ", ".join(f'"{n}"' for n in names)
            conn.execute(text(f"TRUNCATE {quoted} RESTART IDENTITY CASCADE"))
        else:
            for name in reversed(names):
                conn.execute(text(f'DELETE FROM "{name}"'))
