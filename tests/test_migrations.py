"""Models and migrations agree, and the revisions go up and down on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import tcdb.schema  # noqa: F401
from tcdb.operations import Database
from tcdb.schema.base import metadata
from tcdb.storage import migrate
from tcdb.storage.db import get_engine
from tcdb.storage.guard import unguarded
from tests.databases import BACKENDS, create_database


@pytest.fixture(params=BACKENDS)
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path):
    yield from create_database(request.param, tmp_path)


def test_models_and_migrations_agree(fresh_url: str) -> None:
    engine = get_engine(fresh_url)
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, metadata)
    assert diff == [], f"models and migrations differ: {diff}"


def test_every_table_is_created(fresh_url: str) -> None:
    tables = set(inspect(get_engine(fresh_url)).get_table_names())
    assert set(metadata.tables) <= tables
    assert "alembic_version" in tables


def test_upgrade_downgrade_upgrade(fresh_url: str) -> None:
    engine = get_engine(fresh_url)
    assert migrate.current_revision(engine) == migrate.head_revision()
    migrate.downgrade("base", fresh_url)
    assert migrate.current_revision(engine) is None
    with unguarded():  # looking at a database without the schema, on purpose
        assert not set(metadata.tables) & set(inspect(engine).get_table_names())
    migrate.upgrade(fresh_url)
    assert migrate.current_revision(engine) == migrate.head_revision()
    assert set(metadata.tables) <= set(inspect(engine).get_table_names())


def test_naming_convention_names_every_constraint(fresh_url: str) -> None:
    inspector = inspect(get_engine(fresh_url))
    for table in metadata.tables:
        for fk in inspector.get_foreign_keys(table):
            if get_engine(fresh_url).dialect.name == "postgresql":
                assert fk["name"] and fk["name"].startswith(f"fk_{table}_")
        for uq in inspector.get_unique_constraints(table):
            assert uq["name"] and uq["name"].startswith(f"uq_{table}_")


def test_a_database_with_data_migrates_down_and_up(database_url: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows survive 0006 down and up on both databases. On SQLite, batch migrations recreate
    tables that other rows refer to (system, by run): that needs foreign keys off, and the
    whole migration in one transaction, or a failure leaves half a schema."""
    from sqlalchemy import text

    from tcdb.storage.db import truncate_all
    from tests.builders import build_snapshot, write_run_file

    truncate_all(database_url)
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    build_snapshot(tmp_path, "c", "s", {"d1": "one", "d2": "two"}, {"1": "q"},
                   [("1", "d1", 1)])
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import evaluate

    run_import("c", "s", [write_run_file(tmp_path, "r", [("1", "d1", 2.0),
                                                        ("1", "d2", 1.0)])],
               group="g")
    evaluate(Database(), "c", "s", "original", ["AP"])
    tables = ["collection", "snapshot", "document", "snapshot_document", "judgment",
              "system", "run", "run_entry", "score", "evaluation"]

    def counts() -> dict[str, int]:
        with unguarded(), get_engine(database_url).connect() as conn:
            return {t: conn.execute(text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one()
                    for t in tables}

    before = counts()
    migrate.downgrade("0005", database_url)
    assert counts() == before
    migrate.upgrade(database_url)
    assert counts() == before


def test_the_guards_head_revision_is_alembics() -> None:
    # The guard reads the head from the migration files, without importing alembic.
    from tcdb.storage.guard import head_revision

    assert head_revision() == migrate.head_revision()
