"""Names, through the real CLI on both databases: one rule for every name a user gives
(`tcdb.names`): non-empty, no space at either end, no control character, line separator or
bidi override, valid Unicode, at most 200 characters, kept in NFC.

Each kind of name (a collection, a snapshot label, a qrels set, a pool, a topic set, a run's
system and group, a run tag in a run file or a metadata table) is tried with each way of
breaking the rule: exit 1, one line naming the argument, flag or file:line and the reason, no
traceback, the database exactly as it was. NFC and NFD spellings are one name, whichever is
given first. Names that look like Rich markup or emoji codes are valid: stored and printed
exactly as given.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state

COLLECTION, SNAPSHOT = "c", "s1"
DOCS = {f"d{i}": f"document {i} about things" for i in range(1, 5)}
TOPICS = {"q1": "first query", "q2": "second query"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 0)]
RUN = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d3", 1.5)]


@dataclass(frozen=True)
class Bad:
    id: str
    name: str
    reason: str
    in_run_file: bool = True  # can be a run file's tag column (no whitespace in it)


# Every way a name breaks the rule, with the words the error must say.
BAD = [
    Bad("empty", "", "cannot be empty", in_run_file=False),
    Bad("spaces", "   ", "cannot be only spaces", in_run_file=False),
    Bad("padded", "  padded  ", "cannot start with a space", in_run_file=False),
    Bad("trailing-nbsp", "x\u00a0", "cannot end with a space: U+00A0", in_run_file=False),
    Bad("newline", "a\nb", "U+000A newline", in_run_file=False),
    Bad("tab", "a\tb", "U+0009 tab", in_run_file=False),
    Bad("nul", "a\x00b", "U+0000 NUL"),
    Bad("escape", "a\x1b[31mb", "U+001B escape"),
    Bad("c1-csi", "a\x9bb", "U+009B"),
    Bad("bidi-override", "ab\u202ecd", "U+202E right-to-left override"),
    Bad("bidi-isolate", "ab\u2066cd", "U+2066 left-to-right isolate"),
    Bad("line-separator", "a\u2028b", "U+2028 line separator", in_run_file=False),
    Bad("zero-width-space", "caf\u200be", "U+200B zero width space (character 4)"),
    Bad("soft-hyphen", "co\u00adop", "U+00AD soft hyphen"),
    Bad("trailing-joiner", "ab\u200d", "U+200D zero width joiner (character 3)"),
    Bad("too-long", "x" * 201, "at most 200 characters (this one has 201)"),
    Bad("lone-surrogate", "a\udcffb", "not valid Unicode", in_run_file=False),
]
# Names with joiners real scripts and emoji need: valid (Persian with ZWNJ, Devanagari with
# ZWJ, a family emoji, the flag of Scotland with tag characters).
JOINED = ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0915\u094d\u200d\u0937",
          "\U0001f468\u200d\U0001f469\u200d\U0001f467",
          "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"]
# Names that look like markup or emoji codes: valid, and shown as they are.
MARKUP = ["[/]", "[bold]x[/bold]", ":thumbs_up:", "[link=http://e]y[/link]"]
CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")


@dataclass(frozen=True)
class World:
    folder: Path
    docs: Path
    topics: Path
    qrels: Path
    run: Path


@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A collection with a snapshot, a run and its qrels, built once per backend."""
    from tcdb.cli.app import run
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    folder = tmp_path_factory.mktemp("names")
    world = World(folder, write_documents(folder / "docs.trec", DOCS),
                  write_topics(folder / "topics.tsv", TOPICS),
                  write_qrels_file(folder / "qrels.txt", QRELS),
                  write_run_file(folder / "runs", "r1", RUN))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TCDB_DATABASE_URL", database_url)
        for command in (["collection", "add", COLLECTION],
                        ["snapshot", "ingest", COLLECTION, SNAPSHOT, "--docs", world.docs,
                         "--topics", world.topics, "--qrels", world.qrels],
                        ["run", "import", COLLECTION, SNAPSHOT, world.run]):
            assert run([str(a) for a in command]) == 0, command
    yield world


def run_file(folder: Path, tag: str) -> Path:
    """A run file whose tag column is `tag`, written as bytes (a tag no writer would take)."""
    path = folder / "tagged.run"
    lines = [f"{t} Q0 {d} {rank} {score} {tag}\n"
             for rank, (t, d, score) in enumerate(RUN, start=1)]
    path.write_bytes("".join(lines).encode("utf-8", "surrogateescape"))
    return path


# Each kind of name: the command that gives it, and what the error names (an argument's
# metavar, a flag, or the file and line).
Command = Callable[[World, Path, str], tuple[list[str], str]]
KINDS: dict[str, Command] = {
    "collection": lambda w, tmp, n: (["collection", "add", n], "NAME"),
    "snapshot-label": lambda w, tmp, n: (
        ["snapshot", "ingest", COLLECTION, n, "--docs", str(w.docs), "--topics",
         str(w.topics)], "LABEL"),
    "qrels-set": lambda w, tmp, n: (
        ["qrels", "import", COLLECTION, SNAPSHOT, n, str(w.qrels)], "NAME"),
    "pool": lambda w, tmp, n: (
        ["pool", "build", COLLECTION, SNAPSHOT, n, "--depth", "2", "--all-runs"], "NAME"),
    "topic-set": lambda w, tmp, n: (
        ["topics", "set", "create", n, COLLECTION, SNAPSHOT, "--topic", "q1"], "NAME"),
    "run-system": lambda w, tmp, n: (
        ["run", "import", COLLECTION, SNAPSHOT, str(run_file(tmp, "r2")), "--system", n],
        "--system"),
    "run-group": lambda w, tmp, n: (
        ["run", "import", COLLECTION, SNAPSHOT, str(run_file(tmp, "r2")), "--group", n],
        "--group"),
    "collection-lookup": lambda w, tmp, n: (["snapshot", "list", n], "COLLECTION"),
}


# What a metadata table's own shape refuses or removes before a cell is a name.
TABLE_SHAPES = ("empty", "spaces", "padded", "trailing-nbsp", "newline", "line-separator",
                "lone-surrogate")


def _metadata(tmp: Path, name: str) -> Path:
    path = tmp / "meta.csv"
    path.write_bytes(f"tag,system\nr2,{name}\n".encode("utf-8", "surrogateescape"))
    return path


def refused(cli, database_url: str, argv: list[str], where: str, reason: str,
            what: str = "") -> None:
    before = database_state(database_url)
    code, out, err = cli(*argv)
    assert code == 1, (out, err)
    assert "Traceback" not in err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err  # one line: the name's newline is never printed raw
    assert lines[0].startswith(f"error: {where}: {what}"), err
    assert reason in lines[0], err
    assert database_state(database_url) == before


@pytest.mark.parametrize("bad", BAD, ids=[b.id for b in BAD])
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_name_breaking_the_rule_is_refused_naming_where_and_why(
        kind: str, bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    argv, where = KINDS[kind](world, tmp_path, bad.name)
    refused(cli, database_url, argv, where, bad.reason)


@pytest.mark.parametrize("bad", [b for b in BAD if b.in_run_file], ids=lambda b: b.id)
def test_a_run_tag_breaking_the_rule_is_refused_naming_file_and_line(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    path = run_file(tmp_path, bad.name)
    refused(cli, database_url, ["run", "import", COLLECTION, SNAPSHOT, str(path)],
            f"{path}:1", bad.reason, what="run tag: ")


@pytest.mark.parametrize("bad", [b for b in BAD if b.id not in TABLE_SHAPES], ids=lambda b: b.id)
def test_a_system_in_a_metadata_table_breaking_the_rule_is_refused_naming_its_line(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells of a table are trimmed (CSV padding), line breaks end its rows and it is UTF-8
    text: the other ways of breaking the rule reach the name itself."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    meta = _metadata(tmp_path, bad.name)
    refused(cli, database_url, ["run", "import", COLLECTION, SNAPSHOT,
                                str(run_file(tmp_path, "r2")), "--metadata", str(meta)],
            f"{meta}:2", bad.reason, what="system: ")


@pytest.mark.parametrize("bad", [b for b in BAD if b.id in ("nul", "escape", "bidi-override",
                                                             "too-long")],
                         ids=lambda b: b.id)
def test_a_team_in_ir_metadata_breaking_the_rule_is_refused_naming_the_file(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ir_metadata's team becomes the run's group: a name, by the same rule."""
    import json

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    meta = tmp_path / "r2.yaml"
    meta.write_text(f"tag: r2\nactor:\n  team: {json.dumps(bad.name)}\n", encoding="utf-8")
    argv = ["run", "import", COLLECTION, SNAPSHOT, str(run_file(tmp_path, "r2")),
            "--ir-metadata", str(meta)]
    if bad.id in ("nul", "escape"):  # refused already by the YAML loader, with its line
        refused(cli, database_url, argv, f"{meta}:3", "a control character",
                what="actor → team: ")
    else:
        refused(cli, database_url, argv, str(meta), bad.reason, what="ir_metadata team: ")


@pytest.mark.parametrize("bad", [b for b in BAD if b.id not in (*TABLE_SHAPES, "tab")],
                         ids=lambda b: b.id)  # a tab separates a TSV's columns
def test_a_model_in_a_contamination_table_breaking_the_rule_is_refused_naming_its_line(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A model names its topic set (PREFIX-MODEL) and is kept as the set's model."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    table = tmp_path / "quiz.tsv"
    table.write_bytes(f"model\ttopic\tscore\nok\tq1\t0.1\n{bad.name}\tq2\t0.9\n"
                      .encode("utf-8", "surrogateescape"))
    refused(cli, database_url, ["topics", "set", "import", COLLECTION, SNAPSHOT, str(table),
                                "--threshold", "0.5"], f"{table}:3", bad.reason, what="model: ")
    table.write_text(f"model\ttopic\tscore\n{'m' * 195}\tq1\t0.1\n", encoding="utf-8")
    refused(cli, database_url, ["topics", "set", "import", COLLECTION, SNAPSHOT, str(table),
                                "--threshold", "0.5"], "--prefix",
            "breaks the rule: a name is at most 200 characters")  # PREFIX-MODEL, too long


@pytest.mark.parametrize("bad", [b for b in BAD if b.id not in TABLE_SHAPES], ids=lambda b: b.id)
def test_a_model_in_a_literature_table_breaking_the_rule_is_refused_naming_its_line(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import csv
    import io

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["publication", "year", "model", "category", "role", "metric", "value"])
    writer.writerow(["A 2020", 2020, "BM25", "probabilistic", "baseline", "AP", "0.2"])
    writer.writerow(["A 2020", 2020, bad.name, "neural", "best", "AP", "0.3"])
    papers = tmp_path / "papers.csv"
    papers.write_bytes(buffer.getvalue().encode("utf-8", "surrogateescape"))
    refused(cli, database_url, ["literature", "import", str(papers), COLLECTION],
            f"{papers}:3", bad.reason, what="model: ")


@pytest.mark.parametrize("bad", [b for b in BAD if b.in_run_file],
                         ids=lambda b: b.id)
def test_a_runid_in_trec_eval_output_breaking_the_rule_is_refused_naming_its_line(
        bad: Bad, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """trec_eval -q output names its run on its `runid all TAG` line: a run tag."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    scores = tmp_path / "r9.eval"
    scores.write_text(f"map\tq1\t0.5000\nmap\tq2\t0.2500\nrunid\tall\t{bad.name}\n",
                      encoding="utf-8")
    refused(cli, database_url, ["scores", "import", COLLECTION, SNAPSHOT, str(scores),
                                "--qrels", "original"], f"{scores}:3", bad.reason,
            what="run tag: ")


def test_a_spec_names_its_collection_and_labels_by_the_rule(
        world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    spec = tmp_path / "spec.yaml"
    spec.write_text('name: "web\\u202e"\nsnapshots: []\n', encoding="utf-8")
    refused(cli, database_url, ["collection", "sync", str(spec)], f"{spec}:1",
            "name: a name cannot contain U+202E")
    spec.write_text(f'name: ok\nsnapshots:\n  - {{label: "{"x" * 201}", docs: d}}\n',
                    encoding="utf-8")
    refused(cli, database_url, ["collection", "sync", str(spec)], f"{spec}:3",
            "snapshots [1] → label: a name is at most 200 characters")


def test_names_are_refused_by_the_api_naming_the_parameter(world: World, database_url: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from tcdb import api
    from tcdb.errors import FieldError

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    before = database_state(database_url)
    with pytest.raises(FieldError) as caught:
        api.collection_add(collection="a\u202eb")
    assert caught.value.field == "collection" and "U+202E" in caught.value.reason
    with pytest.raises(FieldError) as caught:
        api.scores(collection=COLLECTION, snapshot=SNAPSHOT, runs=["r1", " r1"],
                   measures=["AP"])
    assert caught.value.field == "runs" and "start with a space" in caught.value.reason
    for qrels in ({"s1": "a\u2066b", "s2": "original"}, ["original", "a\u2066b"]):
        with pytest.raises(FieldError) as caught:  # a map or a list: the field, named alone
            api.persistence(collection=COLLECTION, snapshots=["s1", "s2"], pivot="r1",
                            qrels=qrels)
        assert caught.value.field == "qrels" and "U+2066" in caught.value.reason
    assert database_state(database_url) == before


# ------------------------------------------------------------------ NFC and NFD: one name


@pytest.mark.parametrize("first, second", [(CAFE_NFD, CAFE_NFC), (CAFE_NFC, CAFE_NFD)],
                         ids=["nfd-then-nfc", "nfc-then-nfd"])
def test_nfc_and_nfd_spellings_are_one_name(first: str, second: str, world: World,
                                            database_url: str, cli, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb import api

    assert first != second
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)

    def ok(*argv: str) -> str:
        code, out, err = cli(*argv)
        assert code == 0, err
        return out

    def names(frame_column: str, frame) -> list[str]:  # noqa: ANN001
        return [n for n in frame[frame_column] if unicodedata.normalize("NFC", n) == CAFE_NFC]

    try:
        # a collection: the second spelling is the same collection (an add is idempotent)
        ok("collection", "add", first)
        ok("collection", "add", second)
        assert names("name", api.collections().to_frame()) == [CAFE_NFC]
        # found under the other spelling: a snapshot ingested into it, listed by it
        ok("snapshot", "ingest", second, SNAPSHOT, "--docs", str(world.docs),
           "--topics", str(world.topics), "--qrels", str(world.qrels))
        assert len(api.snapshots(collection=first).to_frame()) == 1
        # a qrels set, a pool and a topic set in the first spelling, read in the second
        ok("qrels", "import", first, SNAPSHOT, first, str(world.qrels))
        assert api.qrels(collection=second, snapshot=SNAPSHOT, qrels=second).to_frame() \
            .shape[0] == len(QRELS)
        code, _out, err = cli("qrels", "import", second, SNAPSHOT, second,
                              str(write_qrels_file(tmp_path / "other.txt", QRELS[:1])))
        assert code == 1 and "already" in err, err  # one set: a different file conflicts
        ok("topics", "set", "create", first, first, SNAPSHOT, "--topic", "q1")
        sets = api.topic_sets(collection=second).to_frame()
        assert list(sets["name"]) == [CAFE_NFC]
        # a run whose file spells its tag one way is found by the other
        ok("run", "import", first, SNAPSHOT, str(run_file(tmp_path, first)),
           "--system", first, "--group", first)
        runs = api.runs(collection=second).to_frame()
        assert list(runs["run"]) == [CAFE_NFC]
        out = tmp_path / "exported.run"
        ok("run", "export", second, SNAPSHOT, second, "--out", str(out))
        assert out.read_text(encoding="utf-8").split()[5] == CAFE_NFC
        ok("pool", "build", first, SNAPSHOT, first, "--depth", "2", "--all-runs")
        assert api.pool_show(name=second, collection=second).name == CAFE_NFC
    finally:
        from tcdb.storage.db import truncate_all

        truncate_all(database_url)
        world_again(world, database_url)


def world_again(world: World, database_url: str) -> None:
    """The module's world as it was, after a test that changed it."""
    from tcdb.cli.app import run

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TCDB_DATABASE_URL", database_url)
        for command in (["collection", "add", COLLECTION],
                        ["snapshot", "ingest", COLLECTION, SNAPSHOT, "--docs", world.docs,
                         "--topics", world.topics, "--qrels", world.qrels],
                        ["run", "import", COLLECTION, SNAPSHOT, world.run]):
            assert run([str(a) for a in command]) == 0, command


# ------------------------------------------------ names that look like markup: stored as given


@pytest.mark.parametrize("name", MARKUP)
def test_names_that_look_like_markup_are_stored_and_printed_as_given(
        name: str, world: World, database_url: str, cli, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb import api

    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)

    def ok(*argv: str) -> str:
        code, out, err = cli(*argv)
        assert code == 0, err
        assert "Traceback" not in err
        return out

    try:
        assert name in ok("collection", "add", name)
        ok("collection", "add", name)  # a retry: the same, not a crash
        assert name in ok("collection", "list")
        assert name in ok("snapshot", "ingest", name, name, "--docs", str(world.docs),
                          "--topics", str(world.topics), "--qrels", str(world.qrels))
        assert name in ok("qrels", "import", name, name, name, str(world.qrels))
        assert name in ok("topics", "set", "create", name, name, name, "--topic", "q1")
        assert name in ok("run", "import", name, name, str(run_file(tmp_path, name)),
                          "--system", name, "--group", name)
        assert name in ok("pool", "build", name, name, name, "--depth", "2", "--all-runs")
        assert name in ok("run", "list", name)
        assert name in ok("qrels", "list", name)
        assert name in ok("pool", "list", name)
        assert list(api.collections().to_frame()["name"]).count(name) == 1
        runs = api.runs(collection=name).to_frame()
        assert list(runs["run"]) == [name] and list(runs["system"]) == [name]
        assert api.pool_show(name=name, collection=name).name == name
    finally:
        from tcdb.storage.db import truncate_all

        truncate_all(database_url)
        world_again(world, database_url)


# ------------------------------------------------------------ the rule itself, on any text


@pytest.mark.parametrize("name", JOINED)
def test_joiners_that_scripts_and_emoji_need_are_kept(name: str) -> None:
    from tcdb.names import check_name

    assert check_name(name) == unicodedata.normalize("NFC", name)


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(codec=None), max_size=220))
def test_any_text_is_a_name_in_nfc_or_refused_saying_why(text: str) -> None:
    """Whatever text is given, the rule either refuses it (a reason, never another exception)
    or returns a name that keeps every promise, the same for the text's NFD spelling."""
    from tcdb.names import BadName, check_name

    try:
        name = check_name(text)
    except BadName as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert name == unicodedata.normalize("NFC", text)
    assert name and name == name.strip() and not name[0].isspace() and not name[-1].isspace()
    assert len(name) <= 200
    assert not any(unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") for c in name)
    assert not any("\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069" for c in name)
    assert all(c in "\u200c\u200d" or 0xE0020 <= ord(c) <= 0xE007F
               for c in name if unicodedata.category(c) == "Cf")
    assert check_name(unicodedata.normalize("NFD", text)) == name


@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_a_name_prints_on_an_ascii_only_output_after_its_commit(
        json_output: bool, world: World, database_url: str) -> None:
    """A pipe or terminal that cannot encode `ï` (or the ✓) shows it as an escape; --json
    uses JSON's own; the command that stored the name never ends in a traceback."""
    import json
    import os
    import subprocess
    import sys

    name = "naïve ✓"
    env = {**os.environ, "TCDB_DATABASE_URL": database_url, "PYTHONIOENCODING": "ascii"}
    try:
        done = subprocess.run([sys.executable, "-m", "tcdb", "collection", "add", name,
                               *(["--json"] if json_output else [])],
                              capture_output=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr
        out = done.stdout.decode("ascii")
        if json_output:
            assert json.loads(out)["collection"]["name"] == name
        else:
            assert "na\\xefve \\u2713" in out
    finally:
        from tcdb.storage.db import truncate_all

        truncate_all(database_url)
        world_again(world, database_url)
