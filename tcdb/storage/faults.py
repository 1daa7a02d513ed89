"""Faults of the database itself, as one line each: the one place where a driver's error
(sqlite3, psycopg, or SQLAlchemy wrapping either) becomes a `DatabaseError` saying what
happened and that nothing was written.

Errors are told apart by what the drivers give for it, not by their English: SQLite's result
code (`sqlite_errorcode`, its low byte the primary code), PostgreSQL's SQLSTATE (`sqlstate`),
and for a SQLite file that cannot be opened, the file system itself (a folder, a read-only
mount). Why "nothing was written" holds: every write runs in one transaction (`session_scope`,
`engine.begin()`, the bulk writer inside the caller's), which SQLite rolls back when a write
fails and PostgreSQL aborts when the backend ends; the fault tests check that on both.

Used by `session_scope`, `database_faults` (every operation: CLI, API, Prefect tasks, the
dashboard), the guard's connect hook and the CLI's last resort. Busy SQLite (another writer)
stays `BusyError` (`db.is_locked_error`); constraint violations stay the caller's to handle.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from tcdb.errors import (
    DatabaseError,
    DatabaseFullError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
)

NOTHING_WRITTEN = "(nothing was written)"

# SQLite primary result codes (https://sqlite.org/rescode.html)
SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT = 3, 8, 10, 11
SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 13, 14, 26

# PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html)
PG_READ_ONLY_TRANSACTION = "25006"
PG_INSUFFICIENT_PRIVILEGE = "42501"
PG_DISK_FULL_CLASS = "53"  # 53100 disk_full, 53200 out_of_memory, 53300 too_many_connections
PG_CONNECTION_CLASS = "08"  # connection_exception and its kinds
PG_SHUTDOWN = {"57P01": "an administrator terminated its connection",  # admin_shutdown
               "57P02": "the server crashed",  # crash_shutdown
               "57P03": "the server is not accepting connections yet",  # cannot_connect_now
               "57P05": "the connection was idle too long"}  # idle_session_timeout
PG_AUTH_CLASS = "28"  # invalid_authorization_specification, invalid_password
PG_NO_DATABASE = "3D000"  # invalid_catalog_name


def database_fault(exc: BaseException, where: str | None = None) -> DatabaseError | None:
    """The `DatabaseError` that `exc` means, or None when it is not a fault of the database
    (a bug, bad input, a constraint, a busy SQLite: the caller's to handle).

    `where`: the database's URL (password hidden) or SQLite file; default: the configured one.
    """
    if isinstance(exc, DatabaseError):
        return exc
    orig = _driver_error(exc)
    if isinstance(orig, sqlite3.Error):
        return _sqlite_fault(orig, where)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return None
    if isinstance(orig, psycopg.Error):
        return _postgres_fault(orig, where)
    return None


def _driver_error(exc: BaseException) -> BaseException:
    """The driver's own exception: SQLAlchemy's `orig`, or `exc` itself (the bulk writer calls
    the driver directly)."""
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError) and exc.orig is not None:
        return exc.orig
    return exc


def _current_where() -> str:
    from tcdb.settings import get_settings
    from tcdb.storage.urls import mask_url, normalise_url

    return mask_url(normalise_url(get_settings().database_url))


def _sqlite_path(where: str | None) -> str:
    """The SQLite file named by `where` (a URL or a path)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    where = where or _current_where()
    if "://" not in where:
        return where
    try:
        return make_url(where).database or where
    except ArgumentError:
        return where


def _sqlite_fault(orig: sqlite3.Error, where: str | None) -> DatabaseError | None:
    code = getattr(orig, "sqlite_errorcode", None)
    if code is None:
        return None
    primary, name = code & 0xFF, getattr(orig, "sqlite_errorname", str(code))
    path = _sqlite_path(where)
    if primary == SQLITE_NOTADB:
        return DatabaseError(f"database {path} is not a SQLite database {NOTHING_WRITTEN}")
    if primary == SQLITE_CORRUPT:
        return DatabaseError(f"the SQLite database {path} is damaged ({name}); check it with "
                             f"`sqlite3 {path} 'PRAGMA integrity_check'` {NOTHING_WRITTEN}")
    if primary == SQLITE_FULL:
        return DatabaseFullError(f"the disk holding the database {path} is full "
                                 f"{NOTHING_WRITTEN}")
    if primary in (SQLITE_READONLY, SQLITE_PERM):
        return DatabaseReadOnlyError(f"database {path} is read-only {NOTHING_WRITTEN}")
    if primary == SQLITE_CANTOPEN:
        return _cannot_open(path, name)
    if primary == SQLITE_IOERR:
        return DatabaseError(f"the disk holding the database {path} failed to read or write "
                             f"({name}) {NOTHING_WRITTEN}")
    return None


def _cannot_open(path: str, name: str) -> DatabaseError:
    """SQLITE_CANTOPEN says only that: the file system says why."""
    file = Path(path).expanduser()
    if file.is_dir():
        return DatabaseError(f"database {path} is a directory, not a SQLite file "
                             f"{NOTHING_WRITTEN}")
    folder = file.parent
    if not folder.is_dir():
        return DatabaseError(f"cannot open database {path}: folder {folder} does not exist "
                             f"{NOTHING_WRITTEN}")
    if _read_only_file_system(folder) or not os.access(folder, os.W_OK):
        # a WAL database needs its -wal and -shm files beside it, even to be read
        return DatabaseReadOnlyError(f"database {path} is in a read-only folder or file "
                                     "system, where SQLite cannot create its journal "
                                     f"{NOTHING_WRITTEN}")
    if file.exists() and not os.access(file, os.R_OK):
        return DatabaseError(f"database {path} cannot be read (permission denied) "
                             f"{NOTHING_WRITTEN}")
    return DatabaseError(f"cannot open database {path} ({name}) {NOTHING_WRITTEN}")


def _read_only_file_system(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _postgres_fault(orig: BaseException, where: str | None) -> DatabaseError | None:
    import psycopg

    where = where or _current_where()
    state = getattr(orig, "sqlstate", None) or ""
    reason = _first_line(orig)
    if state == PG_READ_ONLY_TRANSACTION:
        return DatabaseReadOnlyError(f"database {where} is read-only ({reason}) "
                                     f"{NOTHING_WRITTEN}")
    if state == PG_INSUFFICIENT_PRIVILEGE:
        from sqlalchemy.engine import make_url

        role = make_url(where).username if "://" in where else None
        return DatabaseReadOnlyError(f"{reason}: role {role or 'this role'} may only read this "
                                     f"database (a read-only role) {NOTHING_WRITTEN}")
    if state == "53100":
        return DatabaseFullError(f"the disk of the PostgreSQL server of {where} is full "
                                 f"({reason}) {NOTHING_WRITTEN}")
    if state.startswith(PG_DISK_FULL_CLASS):
        return DatabaseUnavailableError(f"the PostgreSQL server of {where} ran out of "
                                        f"resources ({reason}) {NOTHING_WRITTEN}: try again "
                                        "later")
    if state in PG_SHUTDOWN:
        return DatabaseUnavailableError(f"the PostgreSQL server of {where} ended the "
                                        f"connection: {PG_SHUTDOWN[state]} {NOTHING_WRITTEN}; "
                                        "run it again")
    if state.startswith(PG_AUTH_CLASS) or state == PG_NO_DATABASE:
        return DatabaseError(f"cannot open the database at {where}: {reason}")
    if state.startswith(PG_CONNECTION_CLASS) or (
            not state and isinstance(orig, psycopg.OperationalError)):
        # psycopg raises OperationalError without a SQLSTATE when the connection is lost (the
        # server gone mid-transaction, its FATAL message unread); one that cannot be opened
        # at all is reported by the guard's connect hook ("cannot reach")
        return DatabaseUnavailableError(f"lost the connection to {where} ({reason}) "
                                        f"{NOTHING_WRITTEN}; run it again")
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__
