"""Readers in parallel over a snapshot's files store exactly what one reader stores.

A LongEval snapshot written as many small files is ingested twice, into two fresh databases of
the same backend: once with one reader process (`TCDB_READERS=1`), once with three over its
files. Every row of every table must be the same, ids included, with batches smaller than a
file and larger than one, so batches straddle files and files straddle batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlmodel import SQLModel

import tcdb.schema  # noqa: F401 - registers every table in SQLModel's metadata
from tcdb.api import snapshot_diff
from tcdb.catalog.collections import add_collection
from tcdb.collections.sources.ir_datasets_source import IrdsSource
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, Rejected, TopicRecord
from tcdb.demo.longeval_files import (
    LongEvalSnapshot,
    write_longeval_web,
)
from tcdb.errors import InputError
from tcdb.ingest import batches, ingest_snapshot
from tcdb.ingest.readahead import fork_is_safe, parallel_readers, read_parts_ahead
from tcdb.operations import Database
from tests.databases import create_database

pytestmark = pytest.mark.skipif(not fork_is_safe(), reason="readers are forked on Linux only")


def _june() -> list[DocumentRecord]:
    docs = [DocumentRecord(str(1000 + i), f"page {i} of the site, words {i % 3}",
                           url=f"https://a.fr/{i}") for i in range(17)]
    docs[3] = DocumentRecord("1003", "same words   spaced\tdifferently", url="https://a.fr/3")
    docs[4] = DocumentRecord("1004", "same words spaced differently", url="https://a.fr/4")
    docs[6] = DocumentRecord("1006", "été à Paris, café crème", url=None)  # keyed by its id
    docs[9] = DocumentRecord("1009", docs[1].text, url="https://a.fr/9")  # a shared text
    docs[12] = DocumentRecord("1012", "   ", url="https://a.fr/12")  # blank
    return docs


def _july(june: list[DocumentRecord]) -> list[DocumentRecord]:
    kept = [DocumentRecord(str(int(d.doc_id) + 1000), d.text if i % 4 else d.text + " v2",
                           url=d.url) for i, d in enumerate(june) if i % 5]
    return kept + [DocumentRecord(str(3000 + i), f"new page {i}", url=f"https://b.fr/{i}")
                   for i in range(4)]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    june = _june()
    topics = [TopicRecord("q1", "site page"), TopicRecord("q2", "café")]
    layout = write_longeval_web(home, {
        "2022-06": LongEvalSnapshot(june, topics, [QrelRecord("q1", "1001", 1)]),
        "2022-07": LongEvalSnapshot(_july(june), topics, [QrelRecord("q1", "2001", 2)]),
    }, docs_per_file=3)
    # The first document once more, in the last file: a repeat from an earlier file and batch.
    files = sorted(layout.trec_dir("2022-06").glob("part-*.trec"))
    first = files[0].read_text(encoding="utf-8").split("</DOC>\n")[0] + "</DOC>\n"
    with files[-1].open("a", encoding="utf-8", newline="") as out:
        out.write(first)
    return home


def _ingest(url: str, readers: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    monkeypatch.setenv("TCDB_READER", "process")
    monkeypatch.setenv("TCDB_READERS", str(readers))
    add_collection(Database(), "longeval-web", "url", "text", id_fallback=True)
    reports = {label: ingest_snapshot(Database(),
                                      "longeval-web", label, IrdsSource(f"longeval-web/{label}"))
               for label in ("2022-06", "2022-07")}
    diff = snapshot_diff("longeval-web", ["2022-06", "2022-07"]).documents.model_dump()
    figures = {label: (r.n_documents, r.n_new_documents, r.n_new_contents, r.n_repeated)
               for label, r in reports.items()}
    return {"reports": figures, "diff": diff, "rows": _rows(url)}


_VARYING = {"seconds", "created_at", "ingested_at", "updated_at", "started_at", "finished_at",
            "applied_at"}  # when or how long, not what


def _rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows in primary-key order, but the columns saying when or how long."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            out = {}
            for table in SQLModel.metadata.sorted_tables:
                if table.name == "schema_upgrade":  # the test database's own history
                    continue
                columns = [c for c in table.columns if c.name not in _VARYING
                           and "time" not in str(c.type).lower()]
                order = list(table.primary_key.columns) or columns
                out[table.name] = [tuple(bytes(v) if isinstance(v, memoryview) else v
                                         for v in row)
                                   for row in conn.execute(select(*columns).order_by(*order))]
            return out
    finally:
        engine.dispose()


def test_parallel_readers_store_every_row_as_one_reader(
        db: str, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "BATCH", 4)  # inherited by the forked readers
    parts = IrdsSource("longeval-web/2022-06").document_parts()
    assert parts is not None and len(parts) == 6  # 17 documents, 3 a file
    monkeypatch.setenv("TCDB_READER", "process")
    monkeypatch.setenv("TCDB_READERS", "3")
    assert parallel_readers(len(parts)) == 3

    serial = _ingest(db, 1, monkeypatch)
    backend = "sqlite" if db.startswith("sqlite") else "postgres"
    other: Iterator[str] = create_database(backend, tmp_path / "parallel")
    (tmp_path / "parallel").mkdir()
    url = next(other)
    try:
        parallel = _ingest(url, 3, monkeypatch)
    finally:
        other.close()
    # 17 ids, one repeated; 1009 shares 1001's text and 1004 normalises as 1003
    assert serial["reports"]["2022-06"] == (17, 17, 15, 1)
    # every 5th dropped, 4 new; 1006 has no URL, so its id keys it: 2006 is another document
    assert (serial["diff"]["removed"], serial["diff"]["added"]) == (5, 5)
    assert sum(len(rows) for rows in serial["rows"].values()) > 60
    assert parallel == serial


def test_the_text_kept_for_a_version_is_its_first_documents(
        db: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1003 and 1004 normalise alike: the version keeps 1003's text, read in any way."""
    monkeypatch.setattr(batches, "BATCH", 4)
    rows = _ingest(db, 3, monkeypatch)["rows"]
    texts = [row for row in rows["content"] if "same words" in str(row) and "v2" not in str(row)]
    assert len(texts) == 1 and texts[0][-1] == "\n\nsame words   spaced\tdifferently\n\n"


def _part(i: int, fail: bool = False) -> Iterator[tuple[int, int]]:
    for j in range(5):
        if fail and j == 2:
            raise InputError(f"part{i}.trec", j, "document without <DOCNO>")
        yield i, j


def test_parts_come_back_in_order_whatever_reader_read_them() -> None:
    parts = [lambda i=i: _part(i) for i in range(7)]
    got = list(read_parts_ahead(parts, lambda items: items, readers=3))
    assert got == [(i, j) for i in range(7) for j in range(5)]


def test_a_later_parts_error_comes_after_every_earlier_item() -> None:
    parts = [lambda i=i: _part(i, fail=i == 4) for i in range(7)]
    seen = []
    with pytest.raises(InputError) as info:
        for item in read_parts_ahead(parts, lambda items: items, readers=2):
            seen.append(item)
    assert (info.value.file, info.value.line) == ("part4.trec", 2)
    assert seen == [(i, j) for i in range(4) for j in range(5)] + [(4, 0), (4, 1)]


def test_rebatching_fragments_gives_one_readers_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "BATCH", 4)
    members = [(str(i), str(i), bytes([i % 3]), None, None) for i in range(11)]
    versions = [(i, i, f"text {i}") for i in range(11)]
    one = [batches._batch(members[a:a + 4], versions[a:a + 4]) for a in range(0, 11, 4)]
    pieces = [(members[a:b], versions[a:b],
               batches.Notes(b - a, 2 * (b - a), [Rejected("f", a, "bad")]))
              for a, b in ((0, 2), (2, 3), (3, 9), (9, 11))]
    many = list(batches.rebatched(pieces))
    assert [(b.members, b.contents) for b in many] == [(b.members, b.contents) for b in one]
    # every fragment's notes reach one batch: the totals are the fragments', rejects in order
    assert (sum(b.notes.n_edited for b in many), sum(b.notes.n_removed for b in many)) \
        == (11, 22)
    assert [r.line for b in many for r in b.notes.rejected] == [0, 2, 3, 9]
    assert one[0].contents[bytes([1])] == (1, 1, "text 1")  # the first of its hash


def test_readers_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb.errors import TcdbError

    for value in ("two", "-3", "0"):  # refused whatever the reader and the source: never ignored
        monkeypatch.setenv("TCDB_READERS", value)
        for mode, parts in (("process", 4), ("thread", 4), ("process", 1)):
            with pytest.raises(TcdbError) as caught:
                parallel_readers(parts, mode=mode)  # type: ignore[arg-type]
            assert str(caught.value) == f"TCDB_READERS={value!r}: must be a whole number ≥ 1"
    monkeypatch.setenv("TCDB_READERS", "1")
    assert parallel_readers(4, mode="thread") == 1
    monkeypatch.setenv("TCDB_READERS", "8")
    assert parallel_readers(4, mode="process") == 4

