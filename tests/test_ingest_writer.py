"""The writer thread of an ingest (PostgreSQL: batch N written while batch N + 1 is read): the
same documents and figures as writing one batch after the other, errors in the order one
after the other gives them, and nothing written after any of them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.catalog.collections import add_collection
from tcdb.collections.sources import LocalSource
from tcdb.errors import InputError
from tcdb.ingest import documents, ingest_snapshot
from tcdb.storage.db import get_engine


def _trec(path: Path, docs: list[tuple[str | None, str]]) -> Path:
    path.write_text("".join(
        "<DOC>\n" + (f"<DOCNO>{d}</DOCNO>\n" if d is not None else "") + f"<TEXT>{t}</TEXT>\n"
        "</DOC>\n" for d, t in docs))
    return path


def _rows() -> tuple[int, int, int, int]:
    with get_engine().connect() as conn:
        return tuple(conn.execute(text(  # type: ignore[return-value]
            "SELECT (SELECT count(*) FROM snapshot WHERE status = 'complete'), "
            "(SELECT count(*) FROM snapshot_document), (SELECT count(*) FROM document), "
            "(SELECT count(*) FROM content)")).one())


def _writers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("tcdb-ingest-writer")]


def test_written_in_a_thread_as_one_after_the_other(db: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small batches, a repeat across batches and a text two documents share: the same
    memberships, versions and counts as the serial path, and no writer thread left."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", 3)
    docs = [(f"d{i}", f"text {i % 7}") for i in range(40)] + [("d3", "text 3")]
    add_collection("c")
    threaded = ingest_snapshot("c", "s", LocalSource(_trec(tmp_path / "a.trec", docs)))
    first = _rows()
    in_thread = documents._written_batches
    monkeypatch.setattr(documents, "_written_batches",  # one after the other
                        lambda batches, write, _: in_thread(batches, write, False))
    serial = ingest_snapshot("c", "t", LocalSource(_trec(tmp_path / "b.trec", docs)))
    assert (threaded.n_documents, threaded.n_repeated, threaded.n_new_contents) == (40, 1, 7)
    assert (serial.n_documents, serial.n_repeated, serial.n_new_contents) == (40, 1, 0)
    assert first == (1, 40, 40, 7) and _rows() == (2, 80, 40, 7)
    assert _writers() == []


def test_a_refused_batch_comes_before_a_later_bad_document(
        db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch 2 is refused by the database while batch 3, already read ahead, is bad input:
    the refusal is the error, as when batch 3 is read only after batch 2 is written; nothing
    is written and the writer thread is gone."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", 1)
    written = documents._insert_members

    def refuse_the_second(*args: object, **kwargs: object) -> None:
        refuse_the_second.calls += 1  # type: ignore[attr-defined]
        if refuse_the_second.calls == 2:  # type: ignore[attr-defined]
            raise RuntimeError("the database refused batch 2")
        written(*args, **kwargs)  # type: ignore[arg-type]

    refuse_the_second.calls = 0  # type: ignore[attr-defined]
    monkeypatch.setattr(documents, "_insert_members", refuse_the_second)
    add_collection("c")
    source = LocalSource(_trec(tmp_path / "docs.trec", [("x", "one"), ("y", "two"),
                                                         (None, "no id")]))
    with pytest.raises(RuntimeError, match="refused batch 2"):
        ingest_snapshot("c", "s", source)
    assert _rows() == (0, 0, 0, 0)
    assert _writers() == []


def test_a_bad_document_after_written_batches_writes_nothing(db: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """The reader's error while the writer has a batch in hand: that batch is finished
    before the rollback, and the error is the reader's, naming the file and line."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", 1)
    add_collection("c")
    source = LocalSource(_trec(tmp_path / "docs.trec", [("x", "one"), ("y", "two"),
                                                         (None, "no id")]))
    with pytest.raises(InputError, match=r"docs\.trec:\d+.*DOCNO"):
        ingest_snapshot("c", "s", source)
    assert _rows() == (0, 0, 0, 0)
    assert _writers() == []
