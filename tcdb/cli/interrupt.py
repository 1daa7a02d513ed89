"""Ctrl-C: one line saying what stays in the database.

Every write is a transaction (`tcdb.storage.db.session_scope`; an ingest is one), rolled back when
interrupted; commands of several steps (`demo`, flows) keep the steps they committed before.
Which is which is counted here, by SQLAlchemy engine events registered only when a command
runs (sqlalchemy is too slow to import for `--help`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Connection


class _Writes:
    """Transactions that wrote to tcdb's database and committed during this command, so that
    Ctrl-C can say truthfully what stays. Counted by SQLAlchemy engine events, registered only
    when a command runs (sqlalchemy is too slow to import for `--help`)."""

    registered = False
    committed = 0

    @classmethod
    def track(cls) -> None:
        cls.committed = 0
        if cls.registered:
            return
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.listen(Engine, "commit", cls._on_commit)
        event.listen(Engine, "after_cursor_execute", cls._on_execute)
        cls.registered = True

    @staticmethod
    def _ours(conn: Connection) -> bool:
        """tcdb's drivers; Prefect keeps its own state through aiosqlite or asyncpg."""
        return conn.dialect.driver in ("pysqlite", "psycopg")

    @classmethod
    def _on_commit(cls, conn: Connection) -> None:
        if cls._ours(conn) and cls._transaction_wrote(conn):
            cls.committed += 1

    @classmethod
    def _on_execute(cls, conn: Connection, cursor: Any, statement: str, *args: Any) -> None:
        """SQLite runs DDL outside a transaction (its driver begins one only before DML), so such
        a statement is written at once, with no commit to count."""
        if conn.dialect.name != "sqlite" or not cls._ours(conn):
            return
        verb = statement.lstrip()[:7].upper()
        if verb.startswith(("SELECT", "PRAGMA", "EXPLAIN", "WITH", "VALUES")):
            return
        if not getattr(conn.connection.driver_connection, "in_transaction", True):
            cls.committed += 1

    @staticmethod
    def _transaction_wrote(conn: Connection) -> bool:
        """Whether the transaction about to commit changed anything (when unsure: yes).

        PostgreSQL assigns a transaction id at the first write (COPY included, which bypasses
        SQLAlchemy); SQLite's driver opens a transaction only before a write.
        """
        try:
            raw: Any = conn.connection.driver_connection
            if conn.dialect.name == "sqlite":
                return bool(raw.in_transaction)
            if raw.info.server_version < 100000:  # a failing query would abort the commit
                return True
            row = raw.execute("SELECT txid_current_if_assigned() IS NOT NULL").fetchone()
            return bool(row[0])
        except Exception:  # noqa: BLE001 - counting must never break a commit
            return True


def track_writes() -> None:
    _Writes.track()


def message() -> str:
    """What Ctrl-C leaves behind."""
    if _Writes.committed:
        n = _Writes.committed
        return (f"interrupted: the transaction in progress was rolled back; {n:,} committed "
                f"before it {'stays' if n == 1 else 'stay'} in the database")
    if _Writes.registered or "sqlalchemy" not in sys.modules:
        return "interrupted: nothing was written to the database"
    return "interrupted: the transaction in progress was rolled back; nothing of it was written"


def runs_a_command(argv: list[str]) -> bool:
    """False for help and version requests, which must stay fast."""
    options = argv[:argv.index("--")] if "--" in argv else argv
    return bool(options) and not {"-h", "--help", "--version"} & set(options)


def by_ctrl_c(exc: BaseException) -> bool:
    """Whether an exit was caused by a KeyboardInterrupt (Typer chains it as the cause)."""
    cause: BaseException | None = exc
    for _ in range(8):
        if cause is None:
            return False
        if isinstance(cause, KeyboardInterrupt):
            return True
        cause = cause.__cause__ or cause.__context__
    return False
