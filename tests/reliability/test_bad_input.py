"""Bad input, through the real CLI: exit 1, one line naming file, line and reason (printed as
written: no Rich markup, no emoji), and the database exactly as it was — every table's rows.

The corpus is in `bad_inputs.py`; every case runs on SQLite and PostgreSQL against a database
that already holds a collection, a snapshot, a run and a pool exported for assessors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.bad_inputs import (
    CASES,
    COLLECTION,
    DOCS,
    QRELS,
    RUN,
    SNAPSHOT,
    TOPICS,
    Case,
    World,
)
from tests.reliability.rows import database_state

# The folder of every case's files: markup and an emoji code that must print as written.
AWKWARD = "in [bold]red :thumbs_up: [i]"
PROGRESS = re.compile(r"^(ingest |importing runs)")


def test_the_corpus_has_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The database every case starts from, built once per backend through the CLI."""
    from tcdb.cli.app import run
    from tcdb.collections.sources.records import DocumentRecord
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    folder = tmp_path_factory.mktemp("world")
    docs = write_documents(folder / "docs.trec", DOCS)
    topics = write_topics(folder / "topics.tsv", TOPICS)
    qrels = write_qrels_file(folder / "qrels.txt", QRELS)
    run_file = write_run_file(folder / "runs", "r1", RUN)
    pool = {fmt: folder / f"pool.{fmt}" for fmt in ("trec", "csv", "jsonl")}
    home = folder / "irds"
    write_longeval_web(home, {"2022-06": LongEvalSnapshot([DocumentRecord("1", "un")])})
    commands = [
        ["collection", "add", COLLECTION, "--grades", "0:2"],
        ["collection", "add", "web", "--doc-identity", "url"],
        ["snapshot", "ingest", COLLECTION, SNAPSHOT, "--docs", docs, "--topics", topics,
         "--qrels", qrels],
        ["run", "import", COLLECTION, SNAPSHOT, run_file, "--contributed"],
        ["pool", "build", COLLECTION, SNAPSHOT, "p1", "--depth", "5", "--all-runs"],
        *[["pool", "export", "p1", "--format", fmt, "--out", path] for fmt, path in pool.items()],
    ]
    saved = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    try:
        for command in commands:
            assert run([str(a) for a in command]) == 0, command
    finally:
        if saved is None:
            del os.environ["TCDB_DATABASE_URL"]
        else:
            os.environ["TCDB_DATABASE_URL"] = saved
    yield World(folder, docs, topics, qrels, pool["trec"], pool["csv"], pool["jsonl"], home)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_refused_in_one_line_and_writes_nothing(
    case: Case, world: World, database_url: str, cli, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    folder = tmp_path / AWKWARD
    folder.mkdir()
    invocation = case.make(world, folder)
    for name, value in (invocation.env or {}).items():
        monkeypatch.setenv(name, value)
    before = database_state(database_url)
    code, _out, err = cli(*invocation.argv)
    assert code == 1, err
    lines = err.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    assert all(PROGRESS.match(line) for line in lines[:-1]), err  # a bar, then the error
    message = errors[0].removeprefix("error: ")
    assert invocation.names in message, message
    if case.line is not None:
        assert f"{invocation.names}:{case.line}: " in message, message
    assert case.reason in message, message
    assert database_state(database_url) == before
    if case.id == "irds-longeval-unknown-snapshot":  # refused before registering: no download
        assert not (Path(invocation.env["IR_DATASETS_HOME"]) / "longeval-web").exists()


def test_an_error_prints_markup_and_emoji_codes_as_written(cli, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", f"sqlite:///{tmp_path / 'unused.sqlite'}")
    folder = tmp_path / "[bold]x :thumbs_up: [link=http:e]y"
    folder.mkdir()
    code, _out, err = cli("collection", "sync", str(folder / "nope.yaml"))
    assert code == 1
    assert err == f"error: collection spec not found: {folder / 'nope.yaml'}\n"
