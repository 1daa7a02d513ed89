"""Local and ir_datasets snapshot sources: format detection, JSONL/BEIR documents, fingerprints."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from tcdb.collections.documents.jsonl import read_jsonl_documents
from tcdb.collections.sources.ir_datasets_source import IrdsSource
from tcdb.collections.sources.records import DocumentRecord
from tcdb.collections.sources.snapshot import LocalSource, SnapshotSource, open_source
from tcdb.errors import InputError, NotFoundError

BEIR_CORPUS = (
    '{"_id": "d1", "title": "Paris", "text": "Capital of France.", "metadata": {}}\n'
    "\n"
    '{"doc_id": "d2", "text": "No title here.", "url": "https://example.org/d2", "source": "llm"}\n'
    '{"id": 3, "title": "", "contents": "Pyserini style"}\n'
)


def test_jsonl_beir_corpus(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(BEIR_CORPUS, encoding="utf-8")
    assert list(read_jsonl_documents(path)) == [
        DocumentRecord("d1", "Paris\nCapital of France."),
        DocumentRecord("d2", "No title here.", url="https://example.org/d2", source="llm"),
        DocumentRecord("3", "Pyserini style"),
    ]
    zipped = tmp_path / "corpus.jsonl.gz"
    zipped.write_bytes(gzip.compress(BEIR_CORPUS.encode()))
    assert list(read_jsonl_documents(zipped)) == list(read_jsonl_documents(path))


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"_id": "x", "text": ', "malformed JSON"),
        ('{"title": "t", "text": "no id"}', "without an id"),
        ('{"_id": "x", "title": "only a title"}', "without a text"),
        ('["not", "an", "object"]', "expected a JSON object"),
        ('{"_id": "x", "text": "t", "url": 5}', "url is not a string"),
    ],
)
def test_jsonl_errors_name_the_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"_id": "ok", "text": "fine"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        list(read_jsonl_documents(path))
    assert info.value.file == str(path)
    assert info.value.line == 3
    assert reason in info.value.reason


def _trec(path: Path, *ids: str) -> None:
    path.write_text(
        "".join(f"<DOC>\n<DOCNO>{i}</DOCNO>\n<TEXT>\ntext of {i}\n</TEXT>\n</DOC>\n" for i in ids),
        encoding="utf-8",
    )


def test_local_source_detects_trec_and_jsonl(tmp_path: Path) -> None:
    trec_dir = tmp_path / "trec"
    trec_dir.mkdir()
    _trec(trec_dir / "b.txt", "B1")
    _trec(trec_dir / "a.txt", "A1", "A2")
    source = LocalSource(trec_dir)
    assert isinstance(source, SnapshotSource)
    assert source.docs_format == "trec"
    assert source.description == str(trec_dir.resolve())
    assert [d.doc_id for d in source.documents()] == ["A1", "A2", "B1"]
    assert source.qrels() is None
    assert list(source.topics()) == []
    assert source.documents_count_hint() == 3  # counted, for the progress bar

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(BEIR_CORPUS, encoding="utf-8")
    jsonl = LocalSource(corpus)
    assert jsonl.docs_format == "jsonl"
    assert [d.doc_id for d in jsonl.documents()] == ["d1", "d2", "3"]


def test_local_source_refuses_mixed_and_missing(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    _trec(mixed / "a.trec", "A")
    (mixed / "b.jsonl").write_text('{"_id": "b", "text": "b"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="mixes JSONL"):
        LocalSource(mixed)
    with pytest.raises(NotFoundError, match="does-not-exist"):
        LocalSource(tmp_path / "does-not-exist")
    with pytest.raises(NotFoundError, match="qrels path"):
        LocalSource(mixed / "a.trec", qrels=tmp_path / "no-qrels.txt")


def test_local_fingerprint_is_stable_moves_with_the_data_and_sees_edits(tmp_path: Path) -> None:
    docs = tmp_path / "one" / "docs"
    docs.mkdir(parents=True)
    _trec(docs / "a.trec", "A")
    _trec(docs / "b.trec", "B")
    first = LocalSource(docs).fingerprint()
    assert first == LocalSource(docs).fingerprint()
    moved = tmp_path / "two" / "docs"
    shutil.copytree(docs, moved)  # copy2 keeps size and mtime
    assert LocalSource(moved).fingerprint() == first
    stat = (moved / "b.trec").stat()
    os.utime(moved / "b.trec", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert LocalSource(moved).fingerprint() != first
    _trec(docs / "c.trec", "C")
    assert LocalSource(docs).fingerprint() != first


def test_local_source_reads_qrels_and_topics_with_their_readers(tmp_path: Path) -> None:
    pytest.importorskip("tcdb.collections.qrels.formats")
    docs = tmp_path / "docs.trec"
    _trec(docs, "D1", "D2")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 D1 2\nq1 0 D2 0\n", encoding="utf-8")
    source = LocalSource(docs, qrels=qrels)
    judged = source.qrels()
    assert judged is not None
    assert [(q.topic_id, q.doc_id, q.grade) for q in judged] == [("q1", "D1", 2), ("q1", "D2", 0)]
    assert source.fingerprint() != LocalSource(docs).fingerprint()

    pytest.importorskip("tcdb.collections.topics.formats")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tmaison de campagne\nq2\tvoiture\n", encoding="utf-8")
    with_topics = LocalSource(docs, topics=topics, qrels=qrels)
    assert [(t.topic_id, t.query) for t in with_topics.topics()] == [
        ("q1", "maison de campagne"),
        ("q2", "voiture"),
    ]


def test_open_source(tmp_path: Path) -> None:
    docs = tmp_path / "docs.trec"
    _trec(docs, "D1")
    assert isinstance(open_source(None, docs), LocalSource)
    with pytest.raises(InputError, match="not both"):
        open_source("longeval-web/2022-06", docs)
    with pytest.raises(InputError, match="needs an ir_datasets id"):
        open_source(None, None)


def test_unknown_irds_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    with pytest.raises(NotFoundError, match="unknown ir_datasets id 'no-such/dataset'"):
        IrdsSource("no-such/dataset")
    with pytest.raises(NotFoundError, match="unknown ir_datasets id"):
        open_source("no-such/dataset")
