"""Issue 32, class 6: decompression bombs and endless lines.

Compressed input is decompressed as a stream and bounded (`tcdb.collections.files.opening`): past
`TCDB_MAX_EXPANDED_BYTES` in all, or past `TCDB_MAX_EXPANSION_RATIO` times its compressed size
(beyond its first 64 MiB), a file is refused in one line; a line longer than
`TCDB_MAX_LINE_BYTES` is refused with its file and line. Bombs are built by repeating one
compressed member (gzip, bz2 and xz all read concatenated streams), so building one costs one
small compression. Memory is measured in a child process (its own peak RSS), never time.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state
from tests.reliability.test_files import INPUTS, World, _run_cli, one_error_line

C, S = "c", "s1"
MiB = 1 << 20
COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda b: gzip.compress(b, 9, mtime=0),
    "bz2": lambda b: bz2.compress(b, 9),
    "xz": lzma.compress,
}
# What one line of each kind looks like, repeated to fill a bomb.
LINES = {
    "run": b"q1 Q0 d1 1 1.0 r1\n",
    "qrels": b"q1 0 d1 1\n",
    "topics": b"q1\tfirst query\n",
    # blank lines (skipped by the reader): the bound, not parsing millions of documents, is
    # what a documents bomb tests
    "docs": b" " * 1023 + b"\n",
}


@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    folder = tmp_path_factory.mktemp("bombs")
    w = World(folder, write_documents(folder / "docs.trec", {"d1": "one", "d2": "two"}),
              write_topics(folder / "topics.tsv", {"q1": "first query"}),
              write_qrels_file(folder / "qrels.txt", [("q1", "d1", 1)]),
              write_run_file(folder / "runs", "r0", [("q1", "d1", 1.0)]))
    saved = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    try:
        for argv in (["collection", "add", C, "--grades", "0:2"],
                     ["snapshot", "ingest", C, S, "--docs", w.docs, "--topics", w.topics,
                      "--qrels", w.qrels]):
            assert _run_cli(argv) == 0, argv
    finally:
        if saved is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = saved
    yield w


def bomb(path: Path, line: bytes, expanded: int, codec: str = "gzip",
         block: int = 16 * MiB) -> Path:
    """A file of `codec` members, each `block` bytes of `line` repeated, `expanded` in all:
    written member by member, compressed once."""
    member = COMPRESS[codec](line * (block // len(line)))
    with open(path, "wb") as out:
        for _ in range(max(1, expanded // block)):
            out.write(member)
    return path


def _refused(cli, database_url: str, argv: list[object], path: Path) -> str:
    before = database_state(database_url)
    code, _out, err = cli(*argv)
    assert code == 1, err
    message = one_error_line(err)
    assert message.startswith(f"{path}"), message
    assert database_state(database_url) == before  # zero rows, in any table
    return message


@pytest.mark.parametrize("codec", sorted(COMPRESS))
@pytest.mark.parametrize("kind", sorted(LINES))
def test_a_file_expanding_past_the_bound_is_refused(
        kind: str, codec: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound lowered to 8 MiB through its setting: a 64 MiB expansion stops at 8."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    monkeypatch.setenv("TCDB_MAX_EXPANDED_BYTES", str(8 * MiB))
    name = "docs.jsonl" if kind == "docs" else f"{kind}.txt"
    path = bomb(tmp_path / name, LINES[kind], 64 * MiB, codec, block=4 * MiB)
    message = _refused(cli, database_url, INPUTS[kind](world, path), path)
    assert f"{codec} data expanding past 8,388,608 bytes (TCDB_MAX_EXPANDED_BYTES)" in message
    assert "decompression bomb" in message


@pytest.mark.parametrize("kind", ["run", "docs"])
def test_a_bomb_is_refused_by_its_ratio_under_the_default_settings(
        kind: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """1 GiB from about 1 MB: refused once past 64 MiB at more than 100 times its size."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    for name in ("TCDB_MAX_EXPANDED_BYTES", "TCDB_MAX_EXPANSION_RATIO", "TCDB_MAX_LINE_BYTES"):
        monkeypatch.delenv(name, raising=False)
    path = bomb(tmp_path / ("docs.jsonl.gz" if kind == "docs" else "run.gz"), LINES[kind],
                1024 * MiB)
    assert path.stat().st_size < 4 * MiB
    message = _refused(cli, database_url, INPUTS[kind](world, path), path)
    assert "gzip data expanding more than 100 times" in message, message
    assert "TCDB_MAX_EXPANSION_RATIO" in message


def test_a_genuine_compressed_file_under_the_bounds_imports(
        world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds refuse bombs, not compressed files: 20,000 varied lines at the defaults."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    lines = "".join(f"q1 Q0 d{1 + i % 2} {i + 1} {-i / 7:.6f} big\n" for i in range(20_000))
    path = tmp_path / "big.run.xz"
    path.write_bytes(lzma.compress(lines.encode()))
    code, _out, err = cli("run", "import", C, S, path, "--allow-unknown-docs")
    assert code in (0, 1), err
    if code == 1:  # the parsers may refuse the repeated (topic, doc) pairs: not the bounds
        assert "expanding" not in err and "line longer" not in err, err


@pytest.mark.parametrize("codec", ["plain", "gzip"])
@pytest.mark.parametrize("fmt", ["jsonl", "trec"])
def test_a_line_longer_than_the_bound_is_refused_with_its_line(
        fmt: str, codec: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents are read line by line (JSONL) or block by block (TREC): a 40 MiB line with
    no newline is refused at 1 MiB (the bound lowered through its setting), naming its line."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    monkeypatch.setenv("TCDB_MAX_LINE_BYTES", str(MiB))
    head = (b'{"_id": "d1", "text": "x"}\n' if fmt == "jsonl"
            else b"<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n")
    body = head + b"y" * (40 * MiB)
    path = tmp_path / f"docs.{fmt}"
    path.write_bytes(body if codec == "plain" else gzip.compress(body, 1, mtime=0))
    line = 2 if fmt == "jsonl" else 7
    message = _refused(cli, database_url, ["snapshot", "ingest", C, "s9", "--docs", path],
                       path)
    assert message.startswith(f"{path}:{line}: line longer than 1,048,576 bytes"), message


CHILD = """
import json, resource, sys
from tcdb.cli.app import run
code = run(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes
open(sys.argv[1], "w").write(json.dumps({"code": code, "peak": peak}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in kB on Linux")
@pytest.mark.parametrize("kind", ["run", "docs"])
def test_a_bomb_keeps_memory_bounded(kind: str, world: World, database_url: str,
                                     tmp_path: Path) -> None:
    """A 2 GiB expansion in a child process at the default settings: its peak memory stays
    far below what decompressing it whole would take."""
    path = bomb(tmp_path / ("docs.jsonl" if kind == "docs" else "run"), LINES[kind],
                2048 * MiB)
    report = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TCDB_MAX_")}
    env["TCDB_DATABASE_URL"] = database_url
    argv = [str(a) for a in INPUTS[kind](world, path)]
    done = subprocess.run([sys.executable, "-c", CHILD, str(report), *argv], env=env,
                          capture_output=True, text=True, check=False)
    figures = json.loads(report.read_text())
    assert figures["code"] == 1, done.stderr
    assert "decompression bomb" in done.stderr, done.stderr
    assert figures["peak"] < 1024 * MiB, figures  # decompressed whole: over 2 GiB


@pytest.mark.parametrize(("variable", "value", "reason"), [
    ("TCDB_MAX_LINE_BYTES", "abc", "must be a whole number > 0"),
    ("TCDB_MAX_EXPANDED_BYTES", "0", "must be a whole number > 0"),
    ("TCDB_MAX_EXPANSION_RATIO", "-5", "must be a whole number > 0"),
])
def test_a_bad_bound_is_one_line_naming_its_variable(
        variable: str, value: str, reason: str, world: World, database_url: str, cli,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    monkeypatch.setenv(variable, value)
    before = database_state(database_url)
    code, _out, err = cli(*INPUTS["run"](world, world.run))
    assert code == 1, err
    message = one_error_line(err)
    assert message.startswith(f"{variable}={value!r}: ") and reason in message, message
    assert database_state(database_url) == before
