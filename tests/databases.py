"""The databases tests run on: SQLite always, PostgreSQL whenever a server answers (required
under CI=true). Fixtures in `conftest.py` use these; tests that need a database of their own
import them from here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_URL = os.environ.get(
    "TCDB_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
IN_CI = os.environ.get("CI", "").lower() == "true"
# PostgreSQL's cases carry the `postgres` mark: `make test-fast` leaves them to `make test`.
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def _postgres_unavailable() -> str | None:
    try:
        engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure means "no server"
        return f"no PostgreSQL at {POSTGRES_URL}: {str(exc).splitlines()[0]}"
    return None


_PG_REASON: str | None | bool = False


def require_postgres() -> None:
    """Skip (or, under CI=true, fail) when no PostgreSQL server answers."""
    global _PG_REASON
    if _PG_REASON is False:
        _PG_REASON = _postgres_unavailable()
    if _PG_REASON:
        if IN_CI:
            pytest.fail(f"PostgreSQL is required under CI=true: {_PG_REASON}")
        pytest.skip(str(_PG_REASON))


def create_database(backend: str, folder: Path) -> Iterator[str]:
    """A fresh, migrated database; yields its URL and removes it afterwards."""
    from tcdb.storage import db, migrate

    if backend == "sqlite":
        url = f"sqlite:///{folder / f'tcdb-{uuid.uuid4().hex[:8]}.sqlite'}"
        migrate.upgrade(url)
        yield url
        db.dispose_engine(url)
        return
    with empty_postgres_database("tcdb_test") as url:
        try:
            migrate.upgrade(url)
            yield url
        finally:
            db.dispose_engine(url)


@contextmanager
def empty_postgres_database(prefix: str, driver: str = "postgresql+psycopg") -> Iterator[str]:
    """A fresh, empty PostgreSQL database (no schema) on the test server, dropped afterwards;
    yields its URL with `driver` (Prefect's server takes `postgresql+asyncpg`)."""
    require_postgres()
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_URL).set(drivername=driver, database=name) \
            .render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def read_only_role(url: str) -> Iterator[str]:
    """A PostgreSQL role with SELECT only on `url`'s database, made by `tcdb db grant-readonly`;
    yields the URL that connects as that role. The role is dropped afterwards (roles belong to
    the whole server, not to the throw-away database)."""
    from tcdb.storage import db
    from tcdb.storage.roles import grant_readonly

    role = f"tcdb_ro_{uuid.uuid4().hex[:8]}"
    grant_readonly(role, url=url)
    reader = make_url(url).set(username=role).render_as_string(hide_password=False)
    try:
        yield reader
    finally:
        db.dispose_engine(reader)
        owner = create_engine(url, isolation_level="AUTOCOMMIT")
        with owner.connect() as conn:
            conn.execute(text(f'DROP OWNED BY "{role}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
        owner.dispose()
