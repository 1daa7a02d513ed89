"""Migrations with data: a database filled through the public paths (the demo, small) goes
down to the first revision and back up on both databases, and every row both revisions can
hold survives — counted per table, and the values of the big tables summed."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect, text

from tcdb.operations import Database
from tcdb.storage import migrate
from tcdb.storage.db import get_engine
from tcdb.storage.guard import unguarded

FIRST_REVISION = "0001"
# (table, column) whose values must come back unchanged, summed
VALUES = [("score", "value"), ("judgment", "grade"), ("run_entry", "score"),
          ("run_entry", "eval_rank"), ("snapshot_document", "document_id")]


def _state(url: str) -> tuple[dict[str, int], dict[str, float]]:
    with unguarded(), get_engine(url).connect() as conn:
        tables = [t for t in inspect(conn).get_table_names() if t != "alembic_version"]
        counts = {t: conn.execute(text(f'SELECT COUNT(*) FROM "{t}"')).scalar_one()
                  for t in tables}
        sums = {f"{t}.{c}": float(conn.execute(text(f'SELECT SUM("{c}") FROM "{t}"'))
                                  .scalar_one() or 0) for t, c in VALUES}
    return counts, sums


def test_the_demo_survives_down_to_the_first_revision_and_back(db: str, tmp_path: Path) -> None:
    from tcdb.demo.run import run_demo

    run_demo(Database(), tmp_path / "data", seed=3, n_documents=1500, n_topics=30, depth=100)
    counts, sums = _state(db)
    assert counts["run_entry"] > 10_000 and counts["score"] > 0 and counts["pool_entry"] > 0
    migrate.downgrade(FIRST_REVISION, db)
    old_counts, old_sums = _state(db)
    assert migrate.current_revision(get_engine(db)) == FIRST_REVISION
    assert {t: n for t, n in counts.items() if t in old_counts} == old_counts
    assert old_sums == sums
    migrate.upgrade(db)
    assert _state(db) == (counts, sums)
    assert migrate.current_revision(get_engine(db)) == migrate.head_revision()
