"""What the input-class tests (limits, control characters, numbers, identifiers) share: a database
that already holds a collection, a snapshot, a run and a pool, the commands that read each kind
of file, and the one assertion every refusal must pass — through the real CLI, exit 1, one line
`error: FILE:LINE: reason` with no traceback, and every table exactly as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state

COLLECTION = "c"
FREE = "free"  # a collection without a relevance scale: any SMALLINT grade is on it
SNAPSHOT = "s1"
DOCS = {f"d{i}": f"document {i} about things" for i in range(1, 7)}
TOPICS = {"q1": "first query", "q2": "second query"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 0)]
RUN = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d3", 1.5), ("q2", "d4", 1.0)]


@dataclass(frozen=True)
class World:
    """The files the database was built from; `folder` holds each test's own files."""

    folder: Path
    docs: Path
    topics: Path
    qrels: Path


def build_world(database_url: str, folder: Path) -> World:
    """The starting database, built through the CLI (collections `c` with grades 0..2 and `free`
    without a scale, each with snapshot s1; run r1 and pool p1 on `c`)."""
    from tcdb.cli.app import run
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    docs = write_documents(folder / "docs.trec", DOCS)
    topics = write_topics(folder / "topics.tsv", TOPICS)
    qrels = write_qrels_file(folder / "qrels.txt", QRELS)
    run_file = write_run_file(folder / "runs", "r1", RUN)
    commands = [
        ["collection", "add", COLLECTION, "--grades", "0:2"],
        ["collection", "add", FREE],
        ["snapshot", "ingest", COLLECTION, SNAPSHOT, "--docs", docs, "--topics", topics,
         "--qrels", qrels],
        ["snapshot", "ingest", FREE, SNAPSHOT, "--docs", docs, "--topics", topics],
        ["run", "import", COLLECTION, SNAPSHOT, run_file, "--contributed"],
        ["pool", "build", COLLECTION, SNAPSHOT, "p1", "--depth", "5", "--all-runs"],
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
    return World(folder, docs, topics, qrels)


# Each kind of file and the command that reads it: (world, the file) -> argv.
Reader = Callable[[World, Path], list[str]]
READERS: dict[str, Reader] = {
    "run": lambda w, p: ["run", "import", COLLECTION, SNAPSHOT, str(p)],
    "run-unknown-docs": lambda w, p: ["run", "import", COLLECTION, SNAPSHOT, str(p),
                                      "--allow-unknown-docs"],
    "qrels": lambda w, p: ["qrels", "import", FREE, SNAPSHOT, "extra", str(p)],
    "qrels-unknown-docs": lambda w, p: ["qrels", "import", FREE, SNAPSHOT, "extra", str(p),
                                        "--allow-unknown-docs"],
    "topics": lambda w, p: ["snapshot", "ingest", COLLECTION, "new", "--docs", str(w.docs),
                            "--topics", str(p)],
    "docs": lambda w, p: ["snapshot", "ingest", COLLECTION, "new", "--docs", str(p),
                          "--topics", str(w.topics)],
    "judgments": lambda w, p: ["pool", "import-judgments", "p1", str(p), "--format", "csv"],
    "literature": lambda w, p: ["literature", "import", str(p), COLLECTION],
}


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def assert_refused(cli: Callable[..., tuple[int, str, str]], database_url: str, argv: list[str],
                   path: Path, line: int | None, *reason: str) -> str:
    """The command exits 1 with one line `error: PATH:LINE: …` holding every piece of `reason`,
    no traceback, and leaves every table exactly as it was. Returns the message."""
    before = database_state(database_url)
    code, _out, err = cli(*argv)
    assert code == 1, err
    assert "Traceback" not in err, err
    errors = [row for row in err.strip().splitlines() if row.startswith("error: ")]
    assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0], err
    message = errors[0].removeprefix("error: ")
    where = str(path) if line is None else f"{path}:{line}: "
    assert where in message, message
    for piece in reason:
        assert piece in message, message
    assert database_state(database_url) == before
    return message


def assert_accepted(cli: Callable[..., tuple[int, str, str]], argv: list[str]) -> None:
    code, out, err = cli(*argv)
    assert code == 0, err + out
