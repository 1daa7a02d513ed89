"""A real read-only role on PostgreSQL: `tcdb db grant-readonly ROLE` gives SELECT only, and
the reports and read commands work under it; a write is refused in one line."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from tcdb.operations import Database
from tests.databases import create_database

COLLECTION, SNAPSHOT, LAST = "longeval-demo", "2022-06", "2022-09"
# Every command that only reads, as a lab would run them on a demo database.
READS = [
    ["info"], ["collection", "list"], ["snapshot", "list"], ["run", "list"], ["qrels", "list"],
    ["pool", "list"], ["topics", "set", "list"],
    ["snapshot", "diff", COLLECTION, SNAPSHOT, LAST],
    ["pool", "show", f"{COLLECTION}-{SNAPSHOT}-remainder"],
    ["scores", COLLECTION, SNAPSHOT, "--measure", "AP"],
    ["report", "persistence", COLLECTION, "--snapshots", SNAPSHOT, LAST, "--pivot", "bm25",
     "--measure", "nDCG@10"],
    ["report", "reusability", COLLECTION, SNAPSHOT, "--qrels", "original", "--vs", "expanded",
     "--measure", "AP"],
    ["report", "compare", COLLECTION, SNAPSHOT, "--run", "bm25", "--run", "qlm", "--measure",
     "AP"],
    ["report", "leave-out", COLLECTION, SNAPSHOT, "--qrels", "original", "--depth", "20"],
]


@pytest.fixture(scope="module")
def demo_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL database holding the (small) demo."""
    import os

    from tcdb.demo.run import run_demo

    folder = tmp_path_factory.mktemp("readonly")
    for url in create_database("postgres", folder):
        old = os.environ.get("TCDB_DATABASE_URL")
        os.environ["TCDB_DATABASE_URL"] = url
        try:
            run_demo(Database(), folder / "data", seed=4, n_documents=1500, n_topics=30, depth=100)
        finally:
            os.environ.pop("TCDB_DATABASE_URL") if old is None else \
                os.environ.__setitem__("TCDB_DATABASE_URL", old)
        yield url


@pytest.fixture
def role(demo_url: str) -> Iterator[str]:
    """A role name; the role is dropped afterwards (roles belong to the whole server)."""
    from sqlalchemy import create_engine, text

    name = f"tcdb_ro_{uuid.uuid4().hex[:8]}"
    yield name
    engine = create_engine(demo_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        if conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": name}).first():
            conn.execute(text(f'DROP OWNED BY "{name}"'))
            conn.execute(text(f'DROP ROLE "{name}"'))
    engine.dispose()


def test_reports_work_under_a_read_only_role(demo_url: str, role: str, cli: Any,
                                             tmp_path: Path) -> None:
    code, out, err = cli("db", "grant-readonly", role, "--database-url", demo_url)
    assert code == 0, err
    assert "GRANT SELECT ON ALL TABLES" in out
    assert cli("db", "grant-readonly", role, "--database-url", demo_url)[0] == 0  # again: fine
    reader = make_url(demo_url).set(username=role).render_as_string(hide_password=False)
    for command in READS:
        code, out, err = cli(*command, "--database-url", reader)
        assert code == 0, (command, err)
        assert out.strip(), command
    code, _, err = cli("run", "delete", COLLECTION, SNAPSHOT, "bm25", "--yes",
                       "--database-url", reader)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "permission denied" in lines[0] and role in lines[0], err


def test_sqlite_has_no_roles(cli: Any, db: str) -> None:
    if not db.startswith("sqlite"):
        pytest.skip("the SQLite case")
    code, _, err = cli("db", "grant-readonly", "reader")
    assert code == 1 and "SQLite" in err and "read-only" in err
