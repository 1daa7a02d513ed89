"""Habits of the command line: global options anywhere, Ctrl-C's one line, the ingest progress
bar's total and the ingest summary in plain words."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tcdb.catalog.collections import add_collection
from tcdb.cli.app import hoist_global_options
from tcdb.collections.files import compression
from tcdb.collections.sources.records import DocumentRecord, TopicRecord
from tcdb.collections.sources.snapshot import LocalSource
from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
from tcdb.errors import InputError
from tcdb.operations import Database
from tcdb.schema import Collection, Content, Document, Snapshot, SnapshotDocument

REPO = Path(__file__).resolve().parents[1]


def trec(docs: dict[str, str]) -> str:
    return "".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                   for d, t in docs.items())


def jsonl(docs: dict[str, str]) -> str:
    return "".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in docs.items())


def count(table: type) -> int:
    with Database().engine().connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


# --- 1. global options anywhere --------------------------------------------------------------

def test_global_options_move_before_the_command_but_not_past_a_double_dash() -> None:
    assert hoist_global_options(["run", "list", "--database-url", "sqlite:///a"]) == \
        ["--database-url", "sqlite:///a", "run", "list"]
    assert hoist_global_options(["demo", "--database-url=sqlite:///b", "--fresh"]) == \
        ["--database-url=sqlite:///b", "demo", "--fresh"]
    assert hoist_global_options(["--database-url", "x", "info"]) == ["--database-url", "x", "info"]
    untouched = ["run", "import", "c", "s", "--", "--database-url", "file.run"]
    assert hoist_global_options(untouched) == untouched
    with pytest.raises(ValueError, match="--database-url needs a value"):
        hoist_global_options(["run", "list", "--database-url"])
    with pytest.raises(ValueError, match="needs a value"):
        hoist_global_options(["run", "list", "--database-url", "--", "x"])


def test_database_url_after_the_command(cli, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCDB_DATABASE_URL", f"sqlite:///{tmp_path / 'not-this-one.sqlite'}")
    url = f"sqlite:///{tmp_path / 'chosen.sqlite'}"
    code, _, err = cli("db", "upgrade", "--database-url", url)
    assert code == 0, err
    code, out, err = cli("info", "--json", f"--database-url={url}")
    assert code == 0, err
    assert json.loads(out)["database_url"].endswith("chosen.sqlite")
    code, out, err = cli("run", "list", "--database-url", url, "--json")
    assert code == 0, err
    assert json.loads(out) == []
    code, out, err = cli("demo", "--database-url", url, "--help")  # was: No such option
    assert code == 0, err
    assert "demo" in out
    assert not (tmp_path / "not-this-one.sqlite").exists()
    code, _, err = cli("run", "list", "--database-url")
    assert code == 2 and "--database-url needs a value" in err


def test_database_url_after_the_command_through_the_installed_entry_point(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'entry.sqlite'}"
    env = {k: v for k, v in os.environ.items() if k != "TCDB_DATABASE_URL"}
    for args in (["db", "upgrade", "--database-url", url], ["run", "list", "--json",
                                                            f"--database-url={url}"]):
        result = subprocess.run([sys.executable, "-m", "tcdb", *args], capture_output=True,
                                text=True, cwd=tmp_path, env=env, timeout=120)
        assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    assert not (tmp_path / "tcdb.sqlite").exists()  # the default database was never opened


# --- 2. Ctrl-C ------------------------------------------------------------------------------

def _snapshot_files(tmp_path: Path) -> Path:
    docs = tmp_path / "docs.trec"
    docs.write_text(trec({f"d{i}": f"text {i}" for i in range(12)}))
    return docs


def test_ctrl_c_during_an_ingest_writes_nothing_and_says_so(
        db: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documents are written (uncommitted) when Ctrl-C comes: all of it is rolled back,
    and the read-only transaction the ingest committed before does not count as a write."""
    add_collection(Database(), "c")
    written: list[int] = []

    def interrupt(session, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        written.append(session.connection().execute(
            select(func.count()).select_from(SnapshotDocument)).scalar_one())
        raise KeyboardInterrupt

    monkeypatch.setattr("tcdb.ingest.snapshot.write_topics", interrupt)
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", _snapshot_files(tmp_path))
    assert code == 130
    assert err.strip().splitlines()[-1] == "interrupted: nothing was written to the database"
    assert written == [12]  # the interrupt came with the documents in the transaction
    assert (count(Snapshot), count(SnapshotDocument), count(Document), count(Content)) == \
        (0, 0, 0, 0)


def test_ctrl_c_after_a_commit_says_what_stays(
        db: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that committed a step before the interrupted one must not claim that nothing
    was written: here a step commits before the ingest's transaction starts."""
    add_collection(Database(), "c")
    fingerprint = LocalSource.fingerprint

    def commit_first(self: LocalSource) -> str:
        with Database().session() as other:
            other.add(Collection(name="committed-on-the-way"))
        return fingerprint(self)

    def interrupt(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalSource, "fingerprint", commit_first)
    monkeypatch.setattr("tcdb.ingest.snapshot.write_topics", interrupt)
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", _snapshot_files(tmp_path))
    assert code == 130
    assert err.strip().splitlines()[-1] == (
        "interrupted: the transaction in progress was rolled back; 1 committed before it "
        "stays in the database")
    assert (count(Collection), count(Snapshot), count(SnapshotDocument)) == (2, 0, 0)


# --- 3. the ingest progress bar's total -----------------------------------------------------

DOCS = {f"doc-{i}": f"body of document {i}" for i in range(7)}
MORE = {f"more-{i}": f"another body {i}" for i in range(5)}


def test_local_trec_documents_are_counted_without_parsing(tmp_path: Path) -> None:
    folder = tmp_path / "trec"
    folder.mkdir()
    (folder / "a.trec").write_text(trec(DOCS))
    (folder / "b.trec.gz").write_bytes(gzip.compress(trec(MORE).encode()))
    (folder / "c.gz").write_text(trec({"plain": "named .gz, not gzip"}))  # as LongEval 2023-02
    source = LocalSource(folder)
    assert source.docs_format == "trec"
    assert source.documents_count_hint() == 13 == sum(1 for _ in source.documents())


def test_local_jsonl_documents_are_counted_as_lines(tmp_path: Path) -> None:
    folder = tmp_path / "jsonl"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(jsonl(DOCS).rstrip("\n"))  # last line unterminated
    (folder / "more.jsonl.gz").write_bytes(gzip.compress(jsonl(MORE).encode()))
    source = LocalSource(folder)
    assert source.docs_format == "jsonl"
    assert source.documents_count_hint() == 12 == sum(1 for _ in source.documents())
    assert LocalSource(folder / "corpus.jsonl").documents_count_hint() == 7


def test_markers_split_across_read_blocks_are_counted_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "docs.trec"
    path.write_text(trec(DOCS))
    lines = tmp_path / "docs.jsonl"
    lines.write_text(jsonl(DOCS).rstrip("\n"))
    for block in (1, 3, 7, 64):
        monkeypatch.setattr(compression, "_COUNT_BLOCK", block)
        assert LocalSource(path).documents_count_hint() == 7, block
        assert LocalSource(lines).documents_count_hint() == 7, block


def test_large_gzip_files_are_not_counted(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "docs.trec.gz"
    path.write_bytes(gzip.compress(trec(DOCS).encode()))
    assert LocalSource(path).documents_count_hint() == 7
    monkeypatch.setattr(compression, "GZIP_COUNT_LIMIT", path.stat().st_size - 1)
    assert LocalSource(path).documents_count_hint() is None


def test_an_unreadable_file_gives_no_total_and_leaves_the_error_to_the_reader(
        tmp_path: Path) -> None:
    path = tmp_path / "docs.trec.gz"
    path.write_bytes(gzip.compress(trec(DOCS).encode())[:40])  # truncated
    source = LocalSource(path)
    assert source.documents_count_hint() is None
    with pytest.raises(InputError, match="cannot read"):
        list(source.documents())


def test_local_longeval_files_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ir_datasets knows no count for LongEval snapshots: their TREC files are counted."""
    from tcdb.collections.sources.ir_datasets_source import IrdsSource

    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    docs = [DocumentRecord(str(1000 + i), f"page {i}", url=f"https://example.org/{i}")
            for i in range(30)]
    write_longeval_web(home, {"2022-06": LongEvalSnapshot(docs, [TopicRecord("q1", "flights")],
                                                          [])}, docs_per_file=7)
    source = IrdsSource("longeval-web/2022-06")
    assert source.documents_count_hint() == 30 == sum(1 for _ in source.documents())


def test_the_ingest_bar_shows_the_total(db: str, cli, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # a bar is drawn on terminals only
    add_collection(Database(), "c")
    path = tmp_path / "docs.jsonl"
    path.write_text(jsonl(DOCS))
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", path)
    assert code == 0, err
    assert "7/7" in err  # was 7/?


def test_no_bar_when_stderr_is_not_a_terminal(db: str, cli, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    path = tmp_path / "docs.jsonl"
    path.write_text(jsonl(DOCS))
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", path)
    assert code == 0 and err == ""


# --- 4. the ingest summary in plain words ---------------------------------------------------

def _ingest(cli, tmp_path: Path, label: str, docs: dict[str, str], date: str) -> str:  # noqa: ANN001
    folder = tmp_path / label
    folder.mkdir()
    (folder / "docs.trec").write_text(trec(docs))
    code, out, err = cli("snapshot", "ingest", "c", label, "--docs", folder / "docs.trec",
                         "--date", date)
    assert code == 0, err
    return out


def test_the_summary_says_first_seen_changed_and_unchanged(db: str, cli, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    first = {f"d{i}": f"document {i}" for i in range(10)}
    out = _ingest(cli, tmp_path, "s1", first, "2022-06-01")
    assert "10 documents: 10 first seen, no earlier snapshot to compare with" in out
    assert "new versions" not in out
    # s2: d0 gone, d1 rewritten, d10 and d11 new, 8 unchanged
    second = {k: v for k, v in first.items() if k != "d0"} | {
        "d1": "rewritten", "d10": "document 10", "d11": "document 11"}
    out = _ingest(cli, tmp_path, "s2", second, "2022-07-01")
    assert "11 documents: 2 first seen, 1 changed since s1, 8 unchanged" in out
    # s3: d0 is back (seen in s1, not in s2)
    third = second | {"d0": "document 0"}
    out = _ingest(cli, tmp_path, "s3", third, "2022-08-01")
    assert "12 documents: 0 first seen, 0 changed since s2, 11 unchanged, 1 seen before but " \
        "not in s2" in out


def test_the_json_summary_keeps_its_keys_and_adds_the_drift(db: str, cli,
                                                             tmp_path: Path) -> None:
    add_collection(Database(), "c")
    _ingest(cli, tmp_path, "s1", {"a": "one", "b": "two"}, "2022-06-01")
    folder = tmp_path / "s2"
    folder.mkdir()
    (folder / "docs.trec").write_text(trec({"a": "one", "b": "two, edited", "c": "three"}))
    code, out, err = cli("snapshot", "ingest", "c", "s2", "--docs", folder / "docs.trec",
                         "--date", "2022-07-01", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert {k: report[k] for k in (
        "n_documents", "n_new_documents", "n_changed_documents", "n_unchanged_documents",
        "n_returning_documents", "previous_snapshot", "n_new_contents")} == {
        "n_documents": 3, "n_new_documents": 1, "n_changed_documents": 1,
        "n_unchanged_documents": 1, "n_returning_documents": 0, "previous_snapshot": "s1",
        "n_new_contents": 2}


def test_a_repeat_that_replaces_an_earlier_batch_counts_once(db: str, tmp_path: Path) -> None:
    """`--on-duplicate last` across batches replaces the earlier row: the summary counts the
    snapshot's documents, not the rows written on the way."""
    from tcdb.ingest import ingest_snapshot
    from tcdb.ingest.batches import BATCH

    add_collection(Database(), "c")
    path = tmp_path / "docs.jsonl"
    path.write_text(jsonl({f"d{i}": f"text {i}" for i in range(BATCH)})
                    + json.dumps({"_id": "d0", "text": "the last text"}) + "\n")
    report = ingest_snapshot(Database(), "c", "s1", LocalSource(path), on_duplicate="last")
    assert (report.n_documents, report.n_conflicting) == (BATCH, 1) == \
        (count(SnapshotDocument), 1)
    assert report.documents_summary() == \
        f"{BATCH:,} documents: {BATCH:,} first seen, no earlier snapshot to compare with"
