"""Ingest: document versions, topics and qrels; idempotent, atomic; drift between snapshots."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tcdb.api import snapshot_diff
from tcdb.catalog.collections import add_collection
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.collections.sources.snapshot import LocalSource
from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.ingest import ingest_snapshot
from tcdb.operations import Database
from tcdb.schema import Content, Snapshot, SnapshotDocument


def write_trec_docs(path: Path, docs: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                   for d, t in docs.items())
    path.write_text(body, encoding="utf-8")
    return path


def write_snapshot(folder: Path, docs: dict[str, str], topics: dict[str, str],
                   qrels: list[tuple[str, str, int]]) -> LocalSource:
    folder.mkdir(parents=True, exist_ok=True)
    write_trec_docs(folder / "docs" / "part-0.trec", docs)
    (folder / "topics.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in topics.items()))
    (folder / "qrels.txt").write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in qrels))
    return LocalSource(folder / "docs", folder / "topics.tsv", folder / "qrels.txt")


DOCS_1 = {f"d{i}": f"document number {i} about topic {i % 3}" for i in range(10)}
TOPICS_1 = {"q1": "first query", "q2": "second query", "q3": "third query"}
QRELS_1 = [("q1", "d0", 1), ("q1", "d1", 0), ("q2", "d2", 2), ("q3", "d3", 1)]
# snapshot 2: d0 removed, d1 rewritten, d10/d11 added, the rest unchanged; q3 dropped, q4 new.
DOCS_2 = {k: v for k, v in DOCS_1.items() if k != "d0"} | {
    "d1": "a rewritten document", "d10": "new document ten", "d11": "new document eleven"}
TOPICS_2 = {"q1": "first query", "q2": "second query", "q4": "fourth query"}
QRELS_2 = [("q1", "d1", 1), ("q2", "d2", 2), ("q4", "d10", 1)]


def _count(table) -> int:  # noqa: ANN001
    with Database().engine().connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


@pytest.fixture(params=["process", "thread"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Documents read ahead in a forked process or in a thread (`tcdb.ingest.readahead`)."""
    monkeypatch.setenv("TCDB_READER", request.param)
    return request.param


def test_ingest_two_snapshots_and_diff(db: str, tmp_path: Path, reader: str) -> None:
    add_collection(Database(), "c")
    first = ingest_snapshot(Database(),
                            "c", "s1", write_snapshot(tmp_path / "s1", DOCS_1, TOPICS_1, QRELS_1))
    assert (first.status, first.n_documents, first.n_topics, first.n_judgments) == \
        ("ingested", 10, 3, 4)
    second = ingest_snapshot(Database(),
                             "c", "s2", write_snapshot(tmp_path / "s2", DOCS_2, TOPICS_2, QRELS_2))
    assert second.n_documents == 11
    assert second.n_new_contents == 3  # d1 rewritten, d10, d11: unchanged texts are shared
    assert _count(Content) == 13
    diff = snapshot_diff("c", ["s1", "s2"])
    assert {k: getattr(diff.documents, k) for k in ("added", "removed", "changed",
                                                    "unchanged")} == \
        {"added": 2, "removed": 1, "changed": 1, "unchanged": 8}
    assert (diff.topics.added, diff.topics.removed, diff.topics.kept) == (1, 1, 2)
    assert diff.qrels["s1"].judgments == 4 and diff.qrels["s2"].relevant == 3


def test_ingest_is_idempotent_and_refuses_another_source(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    source = write_snapshot(tmp_path / "s1", DOCS_1, TOPICS_1, QRELS_1)
    ingest_snapshot(Database(), "c", "s1", source)
    counts = [_count(t) for t in (SnapshotDocument, Content)]
    again = ingest_snapshot(Database(), "c", "s1", source)
    assert again.status == "unchanged"
    assert [_count(t) for t in (SnapshotDocument, Content)] == counts
    other = write_snapshot(tmp_path / "other", DOCS_2, TOPICS_2, QRELS_2)
    with pytest.raises(ConflictError, match="--replace"):
        ingest_snapshot(Database(), "c", "s1", other)
    replaced = ingest_snapshot(Database(), "c", "s1", other, replace=True)
    assert replaced.status == "ingested" and replaced.n_documents == 11
    assert _count(SnapshotDocument) == 11


def test_text_identity_matches_renumbered_topics(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "web", "doc_id", "text")
    ingest_snapshot(Database(),
                    "web", "a", write_snapshot(tmp_path / "a", DOCS_1, {"1": "Cheap  Flights!"},
                                               [("1", "d0", 1)]))
    ingest_snapshot(Database(),
                    "web", "b", write_snapshot(tmp_path / "b", DOCS_1, {"77": "cheap flights"},
                                               [("77", "d0", 1)]))
    topics = snapshot_diff("web", ["a", "b"]).topics
    assert (topics.kept, topics.renumbered) == (1, 1)
    assert [pair.model_dump() for pair in topics.core] == [{"before": "1", "after": "77"}]


def test_no_text_keeps_hash_and_length(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    ingest_snapshot(Database(),
                    "c", "s1", write_snapshot(tmp_path / "s1", DOCS_1, TOPICS_1, QRELS_1),
                    with_text=False)
    with Database().engine().connect() as conn:
        rows = conn.execute(select(Content.text, Content.length)).all()
    assert rows and all(t is None and n > 0 for t, n in rows)


def test_jsonl_documents_with_source_labels(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "beir")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in [
        {"_id": "a", "title": "T", "text": "human text", "source": "human"},
        {"_id": "b", "text": "generated text", "source": "llm"}]) + "\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "1", "text": "a query"}) + "\n")
    report = ingest_snapshot(Database(), "beir", "v1", LocalSource(corpus, queries))
    assert report.n_documents == 2 and report.n_topics == 1 and report.n_judgments == 0
    with Database().engine().connect() as conn:
        labels = sorted(r[0] for r in conn.execute(select(SnapshotDocument.source_label)))
    assert labels == ["human", "llm"]


def _nothing_written() -> None:
    with Database().engine().connect() as conn:
        complete = conn.execute(select(func.count()).select_from(Snapshot).where(
            Snapshot.status == "complete")).scalar_one()
        members = conn.execute(text("SELECT count(*) FROM snapshot_document")).scalar_one()
        judgments = conn.execute(text("SELECT count(*) FROM judgment")).scalar_one()
    assert (complete, members, judgments) == (0, 0, 0)


@pytest.mark.parametrize("batch", [5_000, 2, 1])
def test_the_same_document_twice_writes_nothing(db: str, tmp_path: Path, batch: int,
                                                monkeypatch: pytest.MonkeyPatch,
                                                reader: str) -> None:
    """Within one write batch or across batches (the database's unique constraint finds it):
    one id with two different texts."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", batch)
    add_collection(Database(), "c")
    docs = tmp_path / "docs.trec"
    docs.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>{t}</TEXT>\n</DOC>\n"
                            for d, t in [("x", "one"), ("y", "two"), ("x", "three")]))
    with pytest.raises(InputError, match="'x' occurs twice"):
        ingest_snapshot(Database(), "c", "s", LocalSource(docs))
    _nothing_written()


def test_a_failed_write_stops_the_reader(db: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, reader: str) -> None:
    """The database refuses batch 3 while the reader still has thousands to go: it stops."""
    import multiprocessing
    import threading

    from tcdb.ingest import documents

    monkeypatch.setattr("tcdb.ingest.batches.BATCH", 1)
    written = documents._insert_members

    def refuse_the_third(*args: object, **kwargs: object) -> None:
        refuse_the_third.calls += 1  # type: ignore[attr-defined]
        if refuse_the_third.calls == 3:  # type: ignore[attr-defined]
            raise RuntimeError("the database refused batch 3")
        written(*args, **kwargs)  # type: ignore[arg-type]

    refuse_the_third.calls = 0  # type: ignore[attr-defined]
    monkeypatch.setattr(documents, "_insert_members", refuse_the_third)
    add_collection(Database(), "c")
    docs = tmp_path / "docs.trec"
    ids = ["x", "y", "z"] + [f"d{i}" for i in range(3000)]
    docs.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\ntext {i}\n</DOC>\n"
                            for i, d in enumerate(ids)))
    with pytest.raises(RuntimeError, match="refused batch 3"):
        ingest_snapshot(Database(), "c", "s", LocalSource(docs))
    assert multiprocessing.active_children() == []
    assert not [t for t in threading.enumerate() if t.name == "tcdb-ingest-reader"]
    _nothing_written()


@pytest.mark.parametrize("batch", [5_000, 2, 1])
def test_two_documents_with_one_url_write_nothing(db: str, tmp_path: Path, batch: int,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A collection kept by URL cannot hold two documents of one snapshot under one URL."""
    monkeypatch.setattr("tcdb.ingest.batches.BATCH", batch)
    add_collection(Database(), "web", "url")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": d, "url": u}) + "\n"
                              for d, u in [("a", "https://x/1"), ("b", "https://x/2"),
                                           ("c", "https://x/1")]))
    with pytest.raises(InputError, match="documents 'a' and 'c' share the key 'https://x/1'"):
        ingest_snapshot(Database(), "web", "s", LocalSource(corpus))
    _nothing_written()


def test_document_without_docno_names_file_and_line(db: str, tmp_path: Path,
                                                    reader: str) -> None:
    add_collection(Database(), "c")
    docs = tmp_path / "docs.trec"
    docs.write_text("<DOC>\n<DOCNO>a</DOCNO>\nok\n</DOC>\n<DOC>\n<TEXT>no id</TEXT>\n</DOC>\n")
    with pytest.raises(InputError) as err:
        ingest_snapshot(Database(), "c", "s", LocalSource(docs))
    assert "docs.trec:5" in str(err.value) and "DOCNO" in str(err.value)
    _nothing_written()


def test_undecodable_bytes_name_the_line(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    docs = tmp_path / "docs.trec"
    docs.write_bytes(b"<DOC>\n<DOCNO>a</DOCNO>\nok\n</DOC>\n<DOC>\n<DOCNO>b</DOCNO>\n\xff\xfe\n"
                     b"</DOC>\n")
    with pytest.raises(InputError) as err:
        ingest_snapshot(Database(), "c", "s", LocalSource(docs))
    assert "docs.trec:" in str(err.value)
    _nothing_written()


@pytest.mark.parametrize(("qrels_line", "reason"), [
    ("q1 0 d0 high", "grade"),
    ("q1 0 d0", "4 columns"),
    ("q9 0 d0 1", "topic 'q9' is not in snapshot"),
    ("q1 0 nope 1", "document 'nope' is not in snapshot"),
])
def test_bad_qrels_lines_write_nothing(db: str, tmp_path: Path, qrels_line: str,
                                       reason: str) -> None:
    add_collection(Database(), "c")
    source = write_snapshot(tmp_path / "s", DOCS_1, TOPICS_1, [("q2", "d2", 1)])
    with (tmp_path / "s" / "qrels.txt").open("a") as f:
        f.write(qrels_line + "\n")
    with pytest.raises(InputError) as err:
        ingest_snapshot(Database(), "c", "s", source)
    assert "qrels.txt:2" in str(err.value) and reason in str(err.value)
    _nothing_written()


def test_grade_outside_the_collection_scale(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "c", grade_min=0, grade_max=2)
    source = write_snapshot(tmp_path / "s", DOCS_1, TOPICS_1, [("q1", "d0", 3)])
    with pytest.raises(InputError, match=r"qrels.txt:1: grade 3 is outside"):
        ingest_snapshot(Database(), "c", "s", source)
    _nothing_written()


def test_a_failed_ingest_leaves_no_row_and_the_next_one_completes(db: str,
                                                                 tmp_path: Path) -> None:
    add_collection(Database(), "c")
    bad = write_snapshot(tmp_path / "bad", DOCS_1, TOPICS_1, [("q1", "missing", 1)])
    with pytest.raises(InputError):
        ingest_snapshot(Database(), "c", "s", bad)
    with Database().engine().connect() as conn:  # reported, not recorded: no `failed` row
        assert conn.execute(select(Snapshot.status)).all() == []
    good = write_snapshot(tmp_path / "good", DOCS_1, TOPICS_1, QRELS_1)
    assert ingest_snapshot(Database(), "c", "s", good).status == "ingested"
    with Database().engine().connect() as conn:
        assert conn.execute(select(Snapshot.status)).all() == [("complete",)]


def test_url_identity_without_url_is_an_error(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "web", "url")
    with pytest.raises(InputError, match="has no URL"):
        ingest_snapshot(Database(),
                        "web", "s", write_snapshot(tmp_path / "s", DOCS_1, TOPICS_1, QRELS_1))
    _nothing_written()


def test_missing_source_and_unknown_irds_id(db: str, tmp_path: Path, cli) -> None:
    add_collection(Database(), "c")
    with pytest.raises(NotFoundError, match="does not exist"):
        LocalSource(tmp_path / "nowhere")
    code, _, err = cli("snapshot", "ingest", "c", "s", "--irds", "no-such/dataset")
    assert code == 1 and "unknown ir_datasets id" in err
    _nothing_written()


def test_gzipped_documents(db: str, tmp_path: Path) -> None:
    add_collection(Database(), "c")
    raw = write_trec_docs(tmp_path / "plain.trec", DOCS_1).read_bytes()
    (tmp_path / "gz").mkdir()
    (tmp_path / "gz" / "docs.trec.gz").write_bytes(gzip.compress(raw))
    assert ingest_snapshot(Database(), "c", "s", LocalSource(tmp_path / "gz")).n_documents == 10


# LongEval through ir_datasets: the on-disk layout the extension reads, under IR_DATASETS_HOME.

def _longeval_docs(n: int, rewrite: set[int], drop: set[int], add: range,
                   id_offset: int) -> list[DocumentRecord]:
    docs = [DocumentRecord(str(id_offset + i), f"page {i} text" + (" v2" if i in rewrite else ""),
                           url=f"https://example.org/{i}")
            for i in range(n) if i not in drop]
    docs += [DocumentRecord(str(id_offset + i), f"new page {i}", url=f"https://example.org/{i}")
             for i in add]
    return docs


def test_longeval_web_snapshots_through_ir_datasets(db: str, tmp_path: Path, cli,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    # 2022-07 re-numbers documents (URLs keep identity) and queries (text keeps identity).
    june = _longeval_docs(40, set(), set(), range(0), 1000)
    july = _longeval_docs(40, {1, 2, 3}, {4, 5}, range(40, 46), 5000)
    write_longeval_web(home, {
        "2022-06": LongEvalSnapshot(june, [TopicRecord("q1", "cheap flights"),
                                           TopicRecord("q2", "paris weather")],
                                    [QrelRecord("q1", "1000", 2), QrelRecord("q2", "1001", 0)]),
        "2022-07": LongEvalSnapshot(july, [TopicRecord("q7", "cheap flights"),
                                           TopicRecord("q8", "lyon hotels")],
                                    [QrelRecord("q7", "5001", 1)]),
    })
    spec = Path(__file__).parents[1] / "collections" / "specs" / "longeval-web.yaml"
    assert cli("collection", "sync", str(spec))[0] == 0
    for label in ("2022-06", "2022-07"):
        code, out, err = cli("snapshot", "ingest", "longeval-web", label, "--irds",
                             f"longeval-web/{label}", "--json")
        assert code == 0, err
        assert json.loads(out)["n_documents"] == {"2022-06": 40, "2022-07": 44}[label]
    code, out, err = cli("snapshot", "diff", "longeval-web", "2022-06", "2022-07", "--json")
    assert code == 0, err
    diff = json.loads(out)
    assert {k: diff["documents"][k] for k in ("added", "removed", "changed", "unchanged")} == \
        {"added": 6, "removed": 2, "changed": 3, "unchanged": 35}
    assert (diff["topics"]["added"], diff["topics"]["removed"], diff["topics"]["kept"]) == (1, 1, 1)
    code, out, _ = cli("snapshot", "ingest", "longeval-web", "2022-06", "--irds",
                       "longeval-web/2022-06")
    assert code == 0 and "nothing to do" in out
    code, out, _ = cli("snapshot", "list", "longeval-web", "--json")
    assert [s["label"] for s in json.loads(out)] == ["2022-06", "2022-07"]


def test_fast_version_hash_equals_the_reference_normalisation() -> None:
    """`version_of`'s byte path for ASCII gives exactly content_hash(normalise_text(text)), with
    every character str.split() treats as whitespace (\\x1c-\\x1f included) in every position,
    and the text's tokens as `str.split()` counts them (stored as `content.n_tokens`)."""
    import random

    from tcdb.ingest import content_hash, normalise_text, version_of

    rng = random.Random(11)
    spaces = [chr(c) for c in range(128) if chr(c).isspace()]
    assert "\x1c" in spaces and "\x1f" in spaces
    alphabet = spaces * 3 + list("ab Z09<>&") + ["\u00e9", "e\u0301", "\u2003", "\u00a0"]
    texts = ["", " ", "\n\n", "a", " a ", "a  b", "\x1fa\x1cb\x0b"]
    texts += ["".join(rng.choice(alphabet[:-4] if i % 2 else alphabet)
                      for _ in range(rng.randrange(30))) for i in range(3000)]
    for text_ in texts:
        normalised = normalise_text(text_)
        assert version_of(text_) == (content_hash(normalised), len(normalised),
                                     len(text_.split())), repr(text_)
