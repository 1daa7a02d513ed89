"""Models and migrations agree, and the revisions go up and down on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import tcdb.schema  # noqa: F401
from tcdb import migrate
from tcdb.db import get_engine
from tcdb.schema.base import metadata

from .conftest import BACKENDS, create_database


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
