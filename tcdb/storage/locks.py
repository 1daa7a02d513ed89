"""Writer locks: which process may write what, settled before anything is written.

Without them, two processes that ingest the same snapshot (or import the same run) both find
"not there yet", both write, and the second waits for the first only to die on a unique
constraint with a driver traceback. Here the second learns it at once, or waits and says so.

* PostgreSQL: transaction-scoped advisory locks (`pg_try_advisory_xact_lock`) keyed by a hash of
  a name; released at commit or rollback, and by the server when the process dies.
* SQLite allows one writer at a time. A write transaction takes the write lock first
  (`BEGIN IMMEDIATE`), so what it checks and what it writes see the same state; while another
  process holds it, this one says it waits, up to the busy timeout, then fails in one line. A
  named lock that must not wait (one snapshot's ingest) is a `flock` (`filelock`) on a file in a
  hidden folder beside the database file, released when the process exits, however it exits.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text
from sqlmodel import Session

from tcdb.errors import BusyError
from tcdb.storage.db import (
    SQLITE_BUSY_TIMEOUT_MS,
    get_engine,
    is_locked_error,
    locked_error,
    session_scope,
)

__all__ = ["file_lock", "ingest_lock_name", "lock_key", "lock_folder", "locked_session"]


def ingest_lock_name(collection: str, label: str) -> str:
    """The lock one snapshot's ingest holds."""
    return f"ingest\x00{collection}\x00{label}"


def lock_key(name: str) -> int:
    """A lock name as the signed 64-bit key PostgreSQL's advisory locks take."""
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


WRITES = "tcdb.writes"  # session.info key: this session is a write transaction (`locked_session`)


@contextmanager
def locked_session(url: str, lock: str | None = None, *, busy: str | None = None,
                  waiting: str | None = None, immediate: bool = True) -> Iterator[Session]:
    """A write transaction (`session_scope`) on the database at `url` that first takes the
    locks its writes need (callers use `Database.write_session`).

    `lock` names what this transaction writes (e.g. `ingest_lock_name`). With `busy`, a lock
    another process holds is a `BusyError(busy)` at once; without, this process prints
    `waiting` (one line on stderr) and waits. On SQLite the database's write lock is taken
    first, and a process that must wait for it says so (whoever the other writer is) — unless
    not `immediate`, for a transaction that reads long before it writes (evaluation): SQLite
    then takes the write lock at the first write, and refuses it if another writer committed
    since this transaction began reading.
    """
    engine = get_engine(url)
    sqlite = engine.dialect.name == "sqlite"
    with ExitStack() as stack:
        if sqlite and lock is not None and busy is not None:
            stack.enter_context(file_lock(engine, lock, busy))
        session = stack.enter_context(session_scope(url))
        session.info[WRITES] = True
        if sqlite:
            if immediate:
                _begin_immediate(session)
        elif lock is not None:
            _advisory_lock(session, lock, busy, waiting)
        yield session


def _say(message: str) -> None:
    """One line on stderr: a process that waits says why."""
    sys.stderr.write(message.replace("\n", " ") + "\n")
    sys.stderr.flush()


def _advisory_lock(session: Session, name: str, busy: str | None, waiting: str | None) -> None:
    conn = session.connection()
    key = {"key": lock_key(name)}
    if conn.execute(text("SELECT pg_try_advisory_xact_lock(:key)"), key).scalar_one():
        return
    if busy is not None:
        raise BusyError(busy)
    _say(waiting or "waiting for another process that writes the same data to finish …")
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), key)


def _begin_immediate(session: Session) -> None:
    """Start the transaction holding SQLite's write lock; say so when another writer has it."""
    raw: Any = session.connection().connection.driver_connection
    if raw.in_transaction:  # already writing: it holds the lock
        return
    seconds = SQLITE_BUSY_TIMEOUT_MS // 1000
    try:
        raw.execute("PRAGMA busy_timeout=0")
        try:
            raw.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if not is_locked_error(exc):
                raise
        _say(f"waiting: another process is writing to the database (up to {seconds} s) …")
        raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        try:
            raw.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_locked_error(exc):
                raise locked_error() from None
            raise
    finally:
        raw.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


def lock_folder(database: str | Path) -> Path:
    """Where a SQLite database's named locks live: a hidden folder beside its file."""
    path = Path(database).expanduser().resolve()
    return path.parent / f".{path.name}.locks"


@contextmanager
def file_lock(engine: Engine | str | Path, name: str, busy: str) -> Iterator[None]:
    """Hold the named lock of a SQLite database (its engine, or its file), or raise
    `BusyError(busy)` at once. Without a file (in memory), or where files cannot be locked
    or created, there is nothing to hold: the write lock still keeps writers apart.

    A `filelock.FileLock` (`flock` on POSIX) taken without waiting; never its soft fallback
    (a marker file where `flock` is missing), which would outlive a killed process where the
    kernel drops a `flock` with it.
    """
    database = engine.url.database if isinstance(engine, Engine) else str(engine)
    if not database or database == ":memory:":
        yield
        return
    from filelock import FileLock, Timeout

    digest = hashlib.sha1(name.encode("utf-8"), usedforsecurity=False).hexdigest()[:20]
    held: FileLock | None = None
    try:
        folder = lock_folder(database)
        folder.mkdir(exist_ok=True)
        lock = FileLock(folder / f"{digest}.lock", timeout=0, mode=0o644,
                        fallback_to_soft=False)
        lock.acquire()
        held = lock
    except Timeout:  # a TimeoutError, hence an OSError: before the next clause
        raise BusyError(busy) from None
    except OSError:
        held = None
    try:
        yield
    finally:
        if held is not None:
            held.release()
