"""The LongEval web layout writer: ir-datasets-longeval reads back exactly what was written."""

from __future__ import annotations

from pathlib import Path

import ir_datasets
import ir_datasets_longeval
import pytest

from tcdb.collections.sources.ir_datasets_source import IrdsSource, load_dataset
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.demo.longeval_files import (
    LONGEVAL_WEB_SNAPSHOTS,
    LongEvalSnapshot,
    write_longeval_web,
)
from tcdb.errors import InputError, NotFoundError

JUNE = [
    DocumentRecord("1001", "Bonjour le monde", url="https://a.fr/1"),
    DocumentRecord("1002", "Prix & conditions <offre> spéciale\nligne deux\r\nfin", url="https://a.fr/2"),
    DocumentRecord("2003", "   ", url="https://a.fr/3"),  # blank text
]
JULY = [
    DocumentRecord("1001", "Bonjour le monde, version 2", url="https://a.fr/1"),
    DocumentRecord("5", "nouveau", url=None),
]
MARCH = [DocumentRecord("777", "test collection document")]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    write_longeval_web(
        home,
        {
            "2022-06": LongEvalSnapshot(
                JUNE,
                [TopicRecord("q1", "maison à vendre"), TopicRecord("q2", "voiture")],
                [QrelRecord("q1", "1001", 2), QrelRecord("q2", "1002", 0)],
            ),
            "2022-07": LongEvalSnapshot(JULY, [TopicRecord("q1", "maison à vendre")], None),
            "2023-03": LongEvalSnapshot(
                MARCH, [TopicRecord("q9", "test")], [QrelRecord("q9", "777", 1)]
            ),
        },
        docs_per_file=2,
    )
    return home


def _read_back(text: str) -> str:
    """What ir_datasets' BS4 TREC parser gives for a written text."""
    return "\n\n" + text + "\n\n" if text.strip() else "\n\n\n"


def test_extension_reads_back_what_was_written(home: Path) -> None:
    load_dataset("longeval-web/2022-06")  # registers the family from this home
    dataset = ir_datasets_longeval.load("longeval-web/2022-06")
    docs = sorted(dataset.docs_iter(), key=lambda d: d.doc_id)
    assert [(d.doc_id, d.url, d.text) for d in docs] == [
        (d.doc_id, d.url, _read_back(d.text)) for d in JUNE
    ]
    assert [(q.query_id, q.text) for q in dataset.queries_iter()] == [
        ("q1", "maison à vendre"),
        ("q2", "voiture"),
    ]
    assert [(q.query_id, q.doc_id, q.relevance) for q in dataset.qrels_iter()] == [
        ("q1", "1001", 2),
        ("q2", "1002", 0),
    ]
    july = ir_datasets.load("longeval-web/2022-07")
    july_docs = {(d.doc_id, d.url) for d in july.docs_iter()}
    assert july_docs == {("1001", "https://a.fr/1"), ("5", None)}
    assert not july.has_qrels()
    march = ir_datasets.load("longeval-web/2023-03")
    assert [(d.doc_id, d.url, d.text) for d in march.docs_iter()] == [
        ("777", "", _read_back("test collection document"))
    ]
    for label in LONGEVAL_WEB_SNAPSHOTS:  # placeholders register and are empty
        assert f"longeval-web/{label}" in ir_datasets.registry
    assert list(ir_datasets.load("longeval-web/2023-08").docs_iter()) == []


@pytest.mark.parametrize("label", ["2022-06", "2022-07", "2023-03", "2022-10"])
def test_fast_path_equals_the_ir_datasets_path(home: Path, label: str) -> None:
    source = IrdsSource(f"longeval-web/{label}")
    fast = sorted(source.documents(), key=lambda d: d.doc_id)
    slow = sorted(source.documents(fast=False), key=lambda d: d.doc_id)
    assert fast == slow
    expected = {"2022-06": JUNE, "2022-07": JULY, "2023-03": MARCH, "2022-10": []}[label]
    assert [d.doc_id for d in fast] == sorted(d.doc_id for d in expected)
    if label == "2022-06":
        assert fast[1] == DocumentRecord("1002", _read_back(JUNE[1].text), url="https://a.fr/2")
        assert [(t.topic_id, t.query) for t in source.topics()] == [
            ("q1", "maison à vendre"),
            ("q2", "voiture"),
        ]
        qrels = source.qrels()
        assert qrels is not None and [(q.topic_id, q.doc_id, q.grade) for q in qrels] == [
            ("q1", "1001", 2),
            ("q2", "1002", 0),
        ]


def test_fingerprint_follows_the_snapshot_files(home: Path) -> None:
    first = IrdsSource("longeval-web/2022-06").fingerprint()
    assert first == IrdsSource("longeval-web/2022-06").fingerprint()
    assert first != IrdsSource("longeval-web/2022-07").fingerprint()
    queries = home / "longeval-web/release_2025_p1/release_2025_p1/French"
    queries = queries / "LongEval Train Collection/queries/2022-06_queries.txt"
    queries.write_text("q1\tautre requête\n", encoding="utf-8")
    assert IrdsSource("longeval-web/2022-06").fingerprint() != first


def test_a_new_home_is_registered_again(home: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(list(IrdsSource("longeval-web/2022-06").documents())) == 3
    other = tmp_path / "other-home"
    write_longeval_web(other, {"2022-06": LongEvalSnapshot([DocumentRecord("9", "seul")])})
    monkeypatch.setenv("IR_DATASETS_HOME", str(other))
    assert [d.doc_id for d in IrdsSource("longeval-web/2022-06").documents(fast=False)] == ["9"]


def test_missing_snapshot_folder_is_a_clear_error(home: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken"
    layout = write_longeval_web(broken, {})
    (layout.trec_dir("2023-05") / "metadata.json").unlink()
    layout.trec_dir("2023-05").rmdir()
    monkeypatch.setenv("IR_DATASETS_HOME", str(broken))
    with pytest.raises(NotFoundError, match="cannot register longeval-web"):
        IrdsSource("longeval-web/2022-06")


def test_many_documents_stream_into_several_files(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path))
    docs = (
        DocumentRecord(str(i + 1), f"document {i} " * 20, url=f"https://x/{i}") for i in range(5000)
    )
    layout = write_longeval_web(tmp_path, {"2022-08": LongEvalSnapshot(docs)}, docs_per_file=1200)
    assert sorted(p.name for p in layout.trec_dir("2022-08").glob("*.trec")) == [
        f"part-0000{i}.trec" for i in range(5)
    ]
    read = list(IrdsSource("longeval-web/2022-08").documents())
    assert len(read) == 5000
    assert read[4999] == DocumentRecord("5000", _read_back("document 4999 " * 20), url="https://x/4999")


def test_a_document_missing_from_the_url_mapping_is_named(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """URLs are looked up per chunk in collection_db.db; a document it lacks is an error."""
    import sqlite3

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path))
    monkeypatch.setattr("tcdb.collections.sources.ir_datasets_source.URL_CHUNK", 2)
    docs = [DocumentRecord(str(i), f"document {i}", url=f"https://x/{i}") for i in range(1, 6)]
    write_longeval_web(tmp_path, {"2022-08": LongEvalSnapshot(docs)})
    read = list(IrdsSource("longeval-web/2022-08").documents())
    assert [(d.doc_id, d.url) for d in read] == [(str(i), f"https://x/{i}") for i in range(1, 6)]
    (db,) = tmp_path.rglob("collection_db.db")
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM mapping WHERE id = '4'")
    connection.close()
    with pytest.raises(InputError, match="document '4' of longeval-web/2022-08 has no URL"):
        list(IrdsSource("longeval-web/2022-08").documents())


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        ({"2022-06": LongEvalSnapshot([DocumentRecord("abc", "t")])}, "would not read back"),
        ({"2023-04": LongEvalSnapshot([DocumentRecord("1", "t", url="u")])}, "no URL mapping"),
        ({"2022-06": LongEvalSnapshot([DocumentRecord("1", "t"), DocumentRecord("1", "u")])},
         "duplicate"),
        ({"2022-06": LongEvalSnapshot([DocumentRecord("1", "t", url="u")]),
          "2022-07": LongEvalSnapshot([DocumentRecord("1", "t", url="v")])}, "one URL per"),
        ({"2021-01": LongEvalSnapshot()}, "not a longeval-web snapshot"),
    ],
)
def test_writer_refuses_what_would_not_read_back(
    tmp_path: Path, snapshot: dict[str, LongEvalSnapshot], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        write_longeval_web(tmp_path, snapshot)


def test_unknown_longeval_snapshot(home: Path) -> None:
    with pytest.raises(NotFoundError, match="unknown ir_datasets id 'longeval-web/2099-01'"):
        IrdsSource("longeval-web/2099-01")
