"""Several `tcdb db upgrade` at once on a fresh database (a compose stack whose services all
migrate at start, a few CI jobs): each succeeds with its one line, and the schema ends at head.
Before, all but one ended in a traceback (UniqueViolation on PostgreSQL, "database is locked" on
SQLite). Real processes, started together."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.databases import BACKENDS, empty_postgres_database

PROCESSES = 6


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema at all."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.sqlite'}"
        return
    with empty_postgres_database("tcdb_fresh") as url:
        yield url


def test_concurrent_upgrades_all_succeed(fresh_url: str) -> None:
    from tcdb.storage.guard import head_revision

    processes = [subprocess.Popen([sys.executable, "-m", "tcdb", "--database-url", fresh_url,
                                   "db", "upgrade"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(PROCESSES)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]
    for code, out, err in results:
        assert code == 0 and not err.strip(), err
        lines = out.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(f"is at revision {head_revision()}"), out
    engine = create_engine(fresh_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars() \
                .all() == [head_revision()]
    finally:
        engine.dispose()
