"""No schema, no surprise: on a database without tcdb's schema, or at an older revision, every
command and every `tcdb.api` function says one line naming `tcdb db upgrade`, and a SQLite file
that does not exist is never created."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tcdb import api
from tcdb.errors import DatabaseError
from tcdb.storage import migrate
from tcdb.storage.db import dispose_engine
from tests.databases import BACKENDS, POSTGRES_URL

# Every command that reads or writes tcdb's tables, with arguments that would pass parsing.
COMMANDS = [
    ["info"],
    ["collection", "list"], ["collection", "add", "c"],
    ["snapshot", "list"], ["snapshot", "ingest", "c", "s", "--docs", "{f}", "--topics", "{f}"],
    ["snapshot", "diff", "c", "a", "b"],
    ["topics", "set", "list"], ["topics", "set", "create", "core", "c", "a", "--core", "b"],
    ["run", "list"], ["run", "import", "c", "s", "{f}"],
    ["run", "update", "c", "s", "r", "--group", "g"], ["run", "delete", "c", "s", "r", "--yes"],
    ["qrels", "list"], ["qrels", "import", "c", "s", "q", "{f}"],
    ["qrels", "export", "c", "s", "q", "--format", "trec", "--out", "{d}/out.txt"],
    ["evaluate", "c", "s", "-m", "AP"], ["scores", "c", "s", "-m", "AP"],
    ["scores", "import", "c", "s", "{t}", "--qrels", "q", "--run", "r"],
    ["pool", "build", "c", "s", "p", "--depth", "5", "--all-runs"], ["pool", "list"],
    ["pool", "show", "p"], ["pool", "export", "p", "--format", "trec", "--out", "{d}/p.txt"],
    ["pool", "import-judgments", "p", "{f}"], ["pool", "expand", "p", "--base", "q",
                                              "--name", "n"],
    ["report", "persistence", "c", "--snapshots", "a", "b", "--pivot", "x", "-m", "AP"],
    ["report", "reusability", "c", "s", "--qrels", "a", "--vs", "b", "-m", "AP"],
    ["report", "compare", "c", "s", "--run", "a", "--run", "b", "-m", "AP"],
    ["report", "leave-out", "c", "s", "--qrels", "q", "--depth", "5"],
]


@pytest.fixture(params=BACKENDS)
def bare_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database without tcdb's schema: a SQLite file that does not exist yet, or an empty
    PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'nothing-here.sqlite'}"
        return
    from tests.databases import require_postgres

    require_postgres()
    name = f"tcdb_bare_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    yield url
    dispose_engine(url)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _call(command: list[str], tmp_path: Path) -> list[str]:
    some_file = tmp_path / "input.txt"
    some_file.write_text("1 0 d1 1\n", encoding="utf-8")
    trec_eval = tmp_path / "scores.txt"
    trec_eval.write_text("map\t1\t0.5\n", encoding="utf-8")
    return [a.format(f=some_file, t=trec_eval, d=tmp_path) for a in command]


def _one_line_naming_upgrade(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "tcdb db upgrade" in lines[0], err


def _api_calls() -> list[tuple[str, dict[str, Any]]]:
    """Every function of tcdb.api (one per operation), with plausible values for the fields
    it requires: by name where the name says what it is, else by the field's type."""
    from tcdb.operations import all_operations

    values = {"collection": "c", "snapshot": "s", "snapshots": ["a", "b"], "pivot": "x",
              "measures": ["AP"], "measure": "AP", "qrels": "q", "name": "q", "runs": ["r"],
              "budgets": [100]}
    by_type = {int: 10, float: 0.5, bool: False}
    calls = []
    for name, op in all_operations().items():
        if name in FILE_FIRST:
            continue
        fields = {}
        for field, info in op.request.model_fields.items():
            if not info.is_required():
                continue
            kind = info.annotation
            if "Path" in str(kind):  # a file that exists: a missing one is refused first
                fields[field] = [SHIPPED_SPEC] if "list" in str(kind) else SHIPPED_SPEC
                continue
            fields[field] = values.get(field, by_type.get(kind, ["x"] if "list" in str(kind)
                                                          else "x"))
        calls.append((name, {**fields, **ALSO.get(name, {})}))
    return calls


# Importers check their whole file before they open the database (bad input writes nothing
# and names file, line and reason): their own tests cover them.
FILE_FIRST = {"scores_import", "literature_import", "topic_set_import", "qrels_import",
              "results_import"}
# A spec that exists: a missing one is refused before the database is opened.
SHIPPED_SPEC = str(Path(__file__).resolve().parents[2] / "collections" / "specs" /
                   "longeval-web.yaml")
# What an operation needs beyond its required fields to be a plausible call.
ALSO: dict[str, dict[str, Any]] = {"snapshot_ingest": {"docs": str(Path(SHIPPED_SPEC).parent)},
                                   "run_update": {"tags": ["r"], "description": "d"},
                                   "collection_sync": {"spec": SHIPPED_SPEC},
                                   "pool_build": {"all_runs": True, "depth": 10},
                                   "pool_export": {"format": "trec"},
                                   "topic_set_create": {"topic_ids": ["1"]},
                                   "diff_runs": {"run_a": "r1", "run_b": "r2"}}


def test_every_command_and_api_function_says_run_db_upgrade(
        bare_url: str, tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", bare_url)
    for command in COMMANDS:
        code, _, err = cli(*_call(command, tmp_path))
        assert code == 1, (command, err)
        _one_line_naming_upgrade(err)
    calls = _api_calls()
    assert len(calls) >= 8
    for name, kwargs in calls:
        with pytest.raises(DatabaseError, match="tcdb db upgrade"):
            getattr(api, name)(**kwargs)
    assert not (tmp_path / "nothing-here.sqlite").exists()  # nothing created by surprise


def test_an_older_revision_is_refused_by_every_command(bare_url: str, tmp_path: Path,
                                                       cli: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    migrate.upgrade(bare_url, "0006")
    monkeypatch.setenv("TCDB_DATABASE_URL", bare_url)
    for command in COMMANDS:
        code, _, err = cli(*_call(command, tmp_path))
        assert code == 1, (command, err)
        _one_line_naming_upgrade(err)
        assert "0006" in err and migrate.head_revision() in err
    code, out, _ = cli("db", "current")
    assert code == 0 and "current: 0006" in out
    assert cli("db", "upgrade")[0] == 0
    assert cli("run", "list")[0] == 0
