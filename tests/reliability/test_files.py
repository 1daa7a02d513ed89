"""Issue 32, class 5: files that are not regular files, or not what they claim to be.

One opener for input (`tcdb.collections.files.opening.open_input` / `read_input`) and one writer for
output (`files.check_output` / `write_output`). Every input file of every importer is tried as a
missing path, a directory, a pipe and a file without read permission; every export's `--out` as
a directory, `/dev/full` and a path in a missing folder; bz2 and xz imports must store what the
plain file stores, other compressed formats are named; an error quoting a 10 MB identifier is
cut. Each refusal: exit 1, one line naming the file (or option) and the reason, the database
exactly as it was — on SQLite and PostgreSQL.
"""

from __future__ import annotations

import bz2
import lzma
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state

C, S = "c", "s1"
DOCS = {f"d{i}": f"document {i} about things" for i in range(1, 7)}
TOPICS = {"q1": "first query", "q2": "second query"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 0), ("q1", "d3", 2)]
RUN = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d3", 1.5), ("q2", "d4", 1.0)]


@dataclass(frozen=True)
class World:
    folder: Path
    docs: Path
    topics: Path
    qrels: Path
    run: Path


def _run_cli(argv: list[object]) -> int:
    from tcdb.cli.app import run

    return run([str(a) for a in argv])


@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A collection, a snapshot with its qrels, a run, a pool: built once per backend."""
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    folder = tmp_path_factory.mktemp("files")
    w = World(folder, write_documents(folder / "docs.trec", DOCS),
              write_topics(folder / "topics.tsv", TOPICS),
              write_qrels_file(folder / "qrels.txt", QRELS),
              write_run_file(folder / "runs", "r1", RUN))
    saved = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    try:
        for argv in (["collection", "add", C, "--grades", "0:2"],
                     ["snapshot", "ingest", C, S, "--docs", w.docs, "--topics", w.topics,
                      "--qrels", w.qrels],
                     ["run", "import", C, S, w.run, "--contributed"],
                     ["pool", "build", C, S, "p1", "--depth", "5", "--all-runs"]):
            assert _run_cli(argv) == 0, argv
    finally:
        if saved is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = saved
    yield w


def one_error_line(err: str) -> str:
    """The error, which must be the only line on stderr but for progress bars."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), err
    assert sum(line.startswith("error: ") for line in lines) == 1, err
    assert "Traceback" not in err, err
    return lines[-1].removeprefix("error: ")


# --- input files ----------------------------------------------------------------------------

# Each importer with the file in the place under test: (world, file) → argv.
INPUTS: dict[str, Callable[[World, Path], list[object]]] = {
    "run": lambda w, f: ["run", "import", C, S, f],
    "run-metadata": lambda w, f: ["run", "import", C, S, w.run, "--metadata", f],
    "qrels": lambda w, f: ["qrels", "import", C, S, "extra", f],
    "docs": lambda w, f: ["snapshot", "ingest", C, "s2", "--docs", f],
    "topics": lambda w, f: ["snapshot", "ingest", C, "s2", "--docs", w.docs, "--topics", f],
    "snapshot-qrels": lambda w, f: ["snapshot", "ingest", C, "s2", "--docs", w.docs,
                                    "--topics", w.topics, "--qrels", f],
    "scores": lambda w, f: ["scores", "import", C, S, f, "--run", "r1"],
    "literature": lambda w, f: ["literature", "import", f, C],
    "assessor": lambda w, f: ["pool", "import-judgments", "p1", f],
    "topic-list": lambda w, f: ["topics", "set", "create", "t1", C, S, "--from-file", f],
    "contamination": lambda w, f: ["topics", "set", "import", C, S, f],
}
# Files some importers tell apart by their name.
SUFFIX = {"literature": ".csv", "contamination": ".csv", "run-metadata": ".csv"}


def _missing(folder: Path, name: str) -> Path:
    return folder / name


def _directory(folder: Path, name: str) -> Path:
    path = folder / name
    path.mkdir()
    (path / "inside.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    return path


def _unreadable(folder: Path, name: str) -> Path:
    if os.geteuid() == 0:
        pytest.skip("root reads a file without read permission")
    path = folder / name
    path.write_text("q1 0 d1 1\n", encoding="utf-8")
    path.chmod(0)
    return path


VARIANTS = {
    "missing": (_missing, ("not found", "no such file", "does not exist")),
    "directory": (_directory, ("is a directory",)),
    "unreadable": (_unreadable, ("permission denied",)),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_an_input_that_is_not_a_readable_file_is_one_line(
        kind: str, variant: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    make, reasons = VARIANTS[variant]
    path = make(tmp_path, f"input-{kind}{SUFFIX.get(kind, '.txt')}")
    before = database_state(database_url)
    code, _out, err = cli(*INPUTS[kind](world, path))
    assert code == 1, err
    message = one_error_line(err)
    assert str(path) in message, message
    if (kind, variant) == ("docs", "directory"):
        reasons = ("no documents",)  # a folder of document files is a source: this one has none
    assert any(reason in message for reason in reasons), message
    assert database_state(database_url) == before


def _fifo(folder: Path, name: str, content: bytes) -> tuple[Path, threading.Thread]:
    """A named pipe, written by a thread once a reader opens it (never, if none does)."""
    path = folder / name
    os.mkfifo(path)

    def feed() -> None:
        try:
            fd = os.open(path, os.O_WRONLY)  # blocks until tcdb opens the pipe
        except OSError:
            return
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
        except BrokenPipeError:  # the reader refused the pipe without reading it
            pass
        finally:
            os.close(fd)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return path, thread


def _release(path: Path, thread: threading.Thread) -> None:
    """Unblock a writer nobody read from."""
    if thread.is_alive():
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(5)


def test_a_pipe_as_docs_is_read(world: World, database_url: str, cli, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents are read once: a pipe (`--docs <(zcat …)`) is as good as a file."""
    from sqlalchemy import text

    from tcdb.storage.db import get_engine

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    pipe, thread = _fifo(tmp_path, "docs.trec", world.docs.read_bytes())
    try:
        code, _out, err = cli("snapshot", "ingest", C, "piped", "--docs", pipe)
    finally:
        _release(pipe, thread)
    assert code == 0, err
    with get_engine(database_url).connect() as conn:
        ids = conn.execute(text(
            "SELECT sd.external_id FROM snapshot_document sd JOIN snapshot s "
            "ON s.id = sd.snapshot_id WHERE s.label = 'piped'")).scalars().all()
    assert sorted(ids) == sorted(DOCS)


@pytest.mark.parametrize("kind", ["run", "qrels", "scores"])
def test_a_pipe_where_a_file_is_read_twice_is_one_line(
        kind: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs, qrels and scores are checksummed, then parsed: a pipe would be empty the second
    time, so it is refused, saying so."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    pipe, thread = _fifo(tmp_path, f"{kind}.txt", world.qrels.read_bytes())
    before = database_state(database_url)
    try:
        code, _out, err = cli(*INPUTS[kind](world, pipe))
    finally:
        _release(pipe, thread)
    assert code == 1, err
    message = one_error_line(err)
    assert str(pipe) in message and "pipe" in message, message
    assert database_state(database_url) == before


# --- compressed input -----------------------------------------------------------------------

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "bz2": bz2.compress,
    "xz": lzma.compress,
}


@pytest.mark.parametrize("codec", sorted(COMPRESSORS))
def test_bz2_and_xz_import_as_the_plain_files_do(
        codec: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Docs, topics, qrels (at ingest and imported) and a run, each compressed and named
    without a suffix that says so: stored exactly as the plain files are."""
    from sqlalchemy import text

    from tcdb.storage.db import get_engine

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    pack = COMPRESSORS[codec]

    def packed(source: Path, name: str) -> Path:
        path = tmp_path / name
        path.write_bytes(pack(source.read_bytes()))
        return path

    label = f"packed-{codec}"
    assert cli("snapshot", "ingest", C, label, "--docs", packed(world.docs, "docs"),
               "--topics", packed(world.topics, "topics.tsv"),
               "--qrels", packed(world.qrels, "qrels"))[0] == 0
    assert cli("qrels", "import", C, label, "again", packed(world.qrels, "qrels-again"))[0] == 0
    code, _out, err = cli("run", "import", C, label, packed(world.run, "run"))
    assert code == 0, err

    def stored(snapshot: str) -> dict[str, list[tuple[object, ...]]]:
        params = {"c": C, "s": snapshot}
        snap = ("(SELECT s.id FROM snapshot s JOIN collection c ON c.id = s.collection_id "
                "WHERE c.name = :c AND s.label = :s)")
        queries = {
            "documents": "SELECT sd.external_id, ct.text FROM snapshot_document sd JOIN content ct"
                         f" ON ct.id = sd.content_id WHERE sd.snapshot_id = {snap}",
            "topics": "SELECT external_id, query FROM snapshot_topic "
                      f"WHERE snapshot_id = {snap}",
            "qrels": "SELECT q.name, st.external_id, sd.external_id, j.grade FROM judgment j "
                     "JOIN qrels_set q ON q.id = j.qrels_set_id JOIN snapshot_topic st "
                     "ON st.snapshot_id = q.snapshot_id AND st.topic_id = j.topic_id "
                     "JOIN snapshot_document sd ON sd.snapshot_id = q.snapshot_id "
                     f"AND sd.document_id = j.document_id WHERE q.snapshot_id = {snap}",
            "run": "SELECT r.tag, st.external_id, sd.external_id, e.rank, e.score "
                   "FROM run_entry e JOIN run r ON r.id = e.run_id JOIN snapshot_topic st "
                   "ON st.snapshot_id = r.snapshot_id AND st.topic_id = e.topic_id "
                   "JOIN snapshot_document sd ON sd.snapshot_id = r.snapshot_id "
                   f"AND sd.document_id = e.document_id WHERE r.snapshot_id = {snap}",
        }
        with get_engine(database_url).connect() as conn:
            return {name: sorted(tuple(row) for row in conn.execute(text(sql), params))
                    for name, sql in queries.items()}

    plain, compressed = stored(S), stored(label)
    original = [row for row in compressed["qrels"] if row[0] != "again"]
    again = [row for row in compressed["qrels"] if row[0] == "again"]
    assert compressed["documents"] == plain["documents"] and plain["documents"]
    assert compressed["topics"] == plain["topics"] and plain["topics"]
    assert [r[1:] for r in original] == [r[1:] for r in plain["qrels"]] and original
    assert [r[1:] for r in again] == [r[1:] for r in plain["qrels"]]
    assert compressed["run"] == plain["run"] and plain["run"]


UNREAD = {
    "zstd": b"\x28\xb5\x2f\xfd\x24\x05\x29\x00\x00hello",
    "zip": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x00" * 20,
    "7z": b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\x00" * 20,
}


@pytest.mark.parametrize("kind", ["run", "qrels", "docs", "topics"])
@pytest.mark.parametrize("codec", sorted(UNREAD))
def test_a_compression_tcdb_does_not_read_is_named(
        codec: str, kind: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(UNREAD[codec])
    before = database_state(database_url)
    code, _out, err = cli(*INPUTS[kind](world, path))
    assert code == 1, err
    message = one_error_line(err)
    assert message == (f"{path}: compressed as {codec}, which tcdb does not read; "
                       "decompress it first"), message
    assert database_state(database_url) == before


# --- long data in messages ------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["run", "qrels", "topics"])
def test_a_10_mb_identifier_is_cut_in_the_message(
        kind: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    huge = "x" * 10_000_000
    content = {"run": f"{huge} Q0 d1 1 1.0 r9\n", "qrels": f"q1 0 {huge} 1\n",
               "topics": f"{huge}\tquery\n"}[kind]
    path = tmp_path / f"{kind}.txt"
    path.write_text(content, encoding="utf-8")
    before = database_state(database_url)
    code, _out, err = cli(*INPUTS[kind](world, path))
    assert code == 1
    message = one_error_line(err)
    assert len(message) < 1000, len(message)
    assert str(path) in message
    assert "x" * 80 + "…" in message or "characters" in message, message
    assert database_state(database_url) == before


def test_cut_keeps_short_messages_and_bounds_long_ones() -> None:
    from tcdb.errors import InputError, NotFoundError, cut

    assert cut("run 'abc' not found") == "run 'abc' not found"
    word = "y" * 5000
    assert cut(f"id {word} is bad") == f"id {'y' * 80}… (5,000 characters) is bad"
    spaced = "a b " * 1_000_000
    assert len(cut(spaced)) < 2100 and cut(spaced).endswith("a b ")
    error = InputError("f.txt", 3, f"topic {'z' * 10_000_000!r} unknown")
    assert str(error).startswith("f.txt:3: topic 'zzz") and str(error).endswith(" unknown")
    assert len(str(error)) < 200
    assert len(str(NotFoundError("no run " + "w" * 10**6))) < 200


# --- output paths ---------------------------------------------------------------------------

# Every command that writes a file, with its option: (file) → argv.
EXPORTS: dict[str, tuple[str, Callable[[Path], list[object]]]] = {
    "run-export": ("--out", lambda f: ["run", "export", C, S, "r1", "--out", f]),
    "run-export-gz": ("--out", lambda f: ["run", "export", C, S, "r1", "--out", f]),
    "qrels-export": ("--out", lambda f: ["qrels", "export", C, S, "original", "--out", f]),
    "qrels-export-beir": ("--out", lambda f: ["qrels", "export", C, S, "original", "--format",
                                              "beir", "--out", f]),
    "pool-export-trec": ("--out", lambda f: ["pool", "export", "p1", "--format", "trec",
                                             "--out", f]),
    "pool-export-csv": ("--out", lambda f: ["pool", "export", "p1", "--format", "csv",
                                            "--out", f]),
    "pool-export-jsonl": ("--out", lambda f: ["pool", "export", "p1", "--format", "jsonl",
                                              "--out", f]),
    "persistence-per-topic": ("--per-topic", lambda f: ["report", "persistence", C,
                                                        "--snapshots", S, "--pivot", "r1",
                                                        "--per-topic", f]),
}
OUT_VARIANTS = {
    "directory": "is a directory",
    "missing-folder": "does not exist",
    "dev-full": "no space left on device (nothing written)",
}


@pytest.mark.parametrize("variant", sorted(OUT_VARIANTS))
@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_an_output_that_cannot_be_written_is_one_line(
        export: str, variant: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    option, argv = EXPORTS[export]
    if variant == "dev-full" and option == "--per-topic":
        pytest.skip("the per-topic deltas need two evaluated snapshots (refused before that)")
    if variant == "dev-full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    suffix = ".gz" if export.endswith("-gz") else ""
    target = {"directory": tmp_path / f"out{suffix}", "missing-folder":
              tmp_path / "no" / "such" / f"out{suffix}", "dev-full": Path("/dev/full")}[variant]
    if variant == "directory":
        target.mkdir()
    before = database_state(database_url)
    listing = sorted(tmp_path.rglob("*"))
    code, _out, err = cli(*argv(target))
    assert code == 1, err
    message = one_error_line(err)
    assert message.startswith(f"{option}: {target}: "), message
    assert OUT_VARIANTS[variant] in message, message
    assert database_state(database_url) == before  # a pool stays open: nothing was exported
    assert sorted(tmp_path.rglob("*")) == listing  # no temporary file left behind


@pytest.mark.parametrize("export", ["run-export", "qrels-export", "pool-export-jsonl"])
def test_an_export_replaces_its_file_whole(export: str, world: World, database_url: str,
                                           cli, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is written beside its target and renamed: an existing file is replaced, keeps
    its permissions, and no temporary file stays."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    target = tmp_path / "out.txt"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    code, _out, err = cli(*EXPORTS[export][1](target))
    assert code == 0, err
    assert target.read_text(encoding="utf-8") not in ("", "old\n")
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
