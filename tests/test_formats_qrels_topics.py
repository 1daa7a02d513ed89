"""Qrels (TREC, BEIR) and topics (TREC, XML, TSV, JSONL): readers, writers and every bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tcdb.collections.qrels.formats import read_qrels, write_qrels
from tcdb.collections.sources.records import QrelRecord, TopicRecord
from tcdb.collections.topics.formats import normalise_query, read_topics
from tcdb.errors import InputError


def _write(tmp_path: Path, text: str | bytes, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _expect_error(read: object, path: Path, line: int | None, *fragments: str) -> None:
    with pytest.raises(InputError) as info:
        result = read(path)  # type: ignore[operator]
        list(result)
    err = info.value
    assert err.file == str(path)
    assert err.line == line
    for fragment in fragments:
        assert fragment in err.reason, err.reason
    assert str(err) == (f"{path}:{line}: {err.reason}" if line else f"{path}: {err.reason}")


# --- qrels -----------------------------------------------------------------------------------


def test_trec_qrels_with_negative_grades_and_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "301 0 FT911-1 1\n\n301 0 LA-2 0\r\n302\t0\tspam-3\t-2\n")
    assert read_qrels(path) == [
        QrelRecord("301", "FT911-1", 1, str(path), 1, "0"),
        QrelRecord("301", "LA-2", 0, str(path), 3, "0"),
        QrelRecord("302", "spam-3", -2, str(path), 4, "0"),
    ]


def test_beir_qrels_detected_by_header(tmp_path: Path) -> None:
    # (an id with a space is refused: tests/reliability/test_identifier_whitespace.py)
    path = _write(tmp_path, "query-id\tcorpus-id\tscore\nq1\tdoc-1\t2\nq2\td2\t0\n", "test.tsv")
    assert read_qrels(path) == [
        QrelRecord("q1", "doc-1", 2, str(path), 2),
        QrelRecord("q2", "d2", 0, str(path), 3),
    ]


def test_qrels_write_read_round_trip_gzip(tmp_path: Path) -> None:
    records = [QrelRecord("1", "d1", 3), QrelRecord("1", "d2", -1), QrelRecord("2", "d1", 0)]
    path = tmp_path / "qrels.gz"
    assert write_qrels(path, records) == 3
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert gzip.decompress(path.read_bytes()).decode().splitlines()[0] == "1 0 d1 3"
    read = read_qrels(path)
    assert [(r.topic_id, r.doc_id, r.grade, r.line) for r in read] == [
        ("1", "d1", 3, 1),
        ("1", "d2", -1, 2),
        ("2", "d1", 0, 3),
    ]


def test_write_qrels_refuses_whitespace_ids(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="whitespace"):
        write_qrels(tmp_path / "q", [QrelRecord("1", "a b", 1)])


def test_qrels_non_integer_grade(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 1\n1 0 d2 0.5\n")
    _expect_error(read_qrels, path, 2, "grade '0.5' is not an integer")


def test_qrels_word_grade(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 relevant\n")
    _expect_error(read_qrels, path, 1, "grade 'relevant' is not an integer")


def test_qrels_too_few_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 1\n1 d2 1\n")
    _expect_error(read_qrels, path, 2, "expected 4 columns", "found 3")


def test_qrels_too_many_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 1 0.25\n")
    _expect_error(read_qrels, path, 1, "expected 4 columns", "found 5")


def test_beir_qrels_wrong_column_count(tmp_path: Path) -> None:
    path = _write(tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\n")
    _expect_error(read_qrels, path, 3, "expected 3 tab-separated columns", "found 2")


def test_beir_qrels_non_integer_score(tmp_path: Path) -> None:
    path = _write(tmp_path, "query-id\tcorpus-id\tscore\nq1\td1\t1.0\n")
    _expect_error(read_qrels, path, 2, "grade '1.0' is not an integer")


def test_qrels_conflicting_grades(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n")
    _expect_error(read_qrels, path, 3, "conflicting", "'d1'", "topic '1'", "grade 2", "1 on line 1")


def test_qrels_exact_duplicate(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 0 d1 1\n1 0 d1 1\n")
    _expect_error(read_qrels, path, 2, "duplicate judgment", "same grade 1", "line 1")


def test_qrels_empty_file(tmp_path: Path) -> None:
    _expect_error(read_qrels, _write(tmp_path, "\n\n"), None, "no judgments")


def test_beir_qrels_header_only(tmp_path: Path) -> None:
    _expect_error(read_qrels, _write(tmp_path, "query-id\tcorpus-id\tscore\n"), None, "no judg")


def test_qrels_undecodable_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path, b"1 0 d1 1\n1 0 d\xe92 1\n")
    _expect_error(read_qrels, path, 2, "not valid UTF-8")


# --- topics: classic TREC, compared with ir_datasets -----------------------------------------

TREC_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international
criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302 \r
<title> Topic: Poliomyelitis and Post-Polio
  continued title line
<desc> Description: Is the disease of Poliomyelitis (polio) under control?
<narr> Narrative: Relevant documents should contain data.
<other tag ignored>
</top>
<top>
<num>303
<title>Hubble Telescope Achievements</title>
<desc>
Identify positive accomplishments.
<narr>
</top>
"""


def test_trec_topics_match_ir_datasets(tmp_path: Path) -> None:
    from ir_datasets.formats import TrecQueries
    from ir_datasets.util import StringFile

    expected = list(TrecQueries(StringFile(TREC_TOPICS)).queries_iter())
    path = _write(tmp_path, TREC_TOPICS, "topics.301-303")
    got = list(read_topics(path))
    assert [(t.topic_id, t.query, t.description, t.narrative) for t in got] == [
        (q.query_id, q.title, q.description, q.narrative) for q in expected
    ]
    assert got[1].query == "Poliomyelitis and Post-Polio\n  continued title line"
    assert got[2] == TopicRecord(
        "303", "Hubble Telescope Achievements", "Identify positive accomplishments.", ""
    )


def test_trec_topics_gzip(tmp_path: Path) -> None:
    path = _write(tmp_path, gzip.compress(TREC_TOPICS.encode()), "topics.gz")
    assert [t.topic_id for t in read_topics(path)] == ["301", "302", "303"]


def test_trec_topics_duplicate_id(tmp_path: Path) -> None:
    text = "<top>\n<num> Number: 7\n<title> a\n</top>\n<top>\n<num> Number: 7\n<title> b\n</top>\n"
    _expect_error(read_topics, _write(tmp_path, text), 6, "duplicate topic id '7'", "line 2")


def test_trec_topics_missing_title(tmp_path: Path) -> None:
    text = "<top>\n<num> Number: 7\n<desc> d\n</top>\n"
    _expect_error(read_topics, _write(tmp_path, text), 4, "topic '7' has no <title>")


def test_trec_topics_missing_num(tmp_path: Path) -> None:
    text = "<top>\n<title> t\n</top>\n"
    _expect_error(read_topics, _write(tmp_path, text), 3, "has no <num>")


def test_trec_topics_unclosed_last_topic(tmp_path: Path) -> None:
    text = "<top>\n<num> Number: 7\n<title> t\n"
    _expect_error(read_topics, _write(tmp_path, text), 4, "not closed with </top>")


# --- topics: XML, TSV, JSONL -----------------------------------------------------------------

XML_TOPICS = """<?xml version="1.0" encoding="UTF-8"?>
<topics task="COVIDSearch" batch="5">
  <topic number="1">
    <query>coronavirus origin</query>
    <question>what is the origin of COVID-19</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus's origin</narrative>
  </topic>
  <topic number="2" type="faceted">
    <query>coronavirus response to weather changes</query>
    <question>how does the coronavirus respond to changes in the weather</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus viability</narrative>
  </topic>
</topics>
"""


def test_xml_topics_match_ir_datasets_trec_covid(tmp_path: Path) -> None:
    from ir_datasets.datasets.cord19 import QTYPE_MAP
    from ir_datasets.formats import TrecXmlQueries
    from ir_datasets.util import StringFile

    expected = list(TrecXmlQueries(StringFile(XML_TOPICS), qtype_map=QTYPE_MAP).queries_iter())
    got = list(read_topics(_write(tmp_path, XML_TOPICS, "topics.xml")))
    assert [(t.topic_id, t.query, t.description, t.narrative) for t in got] == [
        (q.query_id, q.title, q.description, q.narrative) for q in expected
    ]
    assert got[0].fields == {}
    assert got[1].fields == {"type": "faceted"}


def test_xml_topics_duplicate_id_names_the_second_topic(tmp_path: Path) -> None:
    text = XML_TOPICS.replace('number="2"', 'number="1"')
    _expect_error(read_topics, _write(tmp_path, text), 8, "duplicate topic id '1'", "line 3")


def test_xml_topics_malformed(tmp_path: Path) -> None:
    text = '<topics>\n<topic number="1">\n<query>a</query>\n</topics>\n'
    _expect_error(read_topics, _write(tmp_path, text), 4, "not well-formed XML")


def test_xml_topic_without_query(tmp_path: Path) -> None:
    text = '<topics>\n<topic number="9">\n<question>q</question>\n</topic>\n</topics>\n'
    _expect_error(read_topics, _write(tmp_path, text), 2, "topic '9' has an empty query")


def test_tsv_topics_longeval(tmp_path: Path) -> None:
    path = _write(tmp_path, "q062210012\tcar shelter\n\nq06221\tvoiture  électrique \n")
    assert list(read_topics(path)) == [
        TopicRecord("q062210012", "car shelter"),
        TopicRecord("q06221", "voiture  électrique"),
    ]


def test_tsv_topics_header_is_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, "id\tquery\n1\tfoo\n")
    assert list(read_topics(path)) == [TopicRecord("1", "foo")]


def test_tsv_topics_wrong_column_count(tmp_path: Path) -> None:
    path = _write(tmp_path, "1\tfoo\n2\tbar\tbaz\n")
    _expect_error(read_topics, path, 2, "expected 2 tab-separated columns", "found 3")


def test_tsv_topics_duplicate_id(tmp_path: Path) -> None:
    path = _write(tmp_path, "1\tfoo\n2\tbar\n1\tbaz\n")
    _expect_error(read_topics, path, 3, "duplicate topic id '1'", "first on line 1")


def test_tsv_topics_empty_query(tmp_path: Path) -> None:
    path = _write(tmp_path, "1\tfoo\n2\t  \n")
    _expect_error(read_topics, path, 2, "topic '2' has an empty query")


def test_beir_queries_jsonl(tmp_path: Path) -> None:
    lines = [
        {"_id": "q1", "text": "what is covid", "metadata": {"query": "covid", "n": 3}},
        {"_id": 2, "text": " second ", "title": "extra"},
    ]
    path = _write(tmp_path, "\n".join(json.dumps(x) for x in lines) + "\n", "queries.jsonl")
    assert list(read_topics(path)) == [
        TopicRecord("q1", "what is covid", fields={"query": "covid", "n": "3"}),
        TopicRecord("2", "second", fields={"title": "extra"}),
    ]


def test_jsonl_invalid_json(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"_id": "1", "text": "a"}\n{"_id": "2", "text": \n')
    _expect_error(read_topics, path, 2, "not valid JSON")


def test_jsonl_missing_text(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"_id": "1", "text": "a"}\n\n{"_id": "2"}\n')
    _expect_error(read_topics, path, 3, "missing key 'text'")


def test_jsonl_duplicate_id(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"_id": "1", "text": "a"}\n{"_id": "1", "text": "b"}\n')
    _expect_error(read_topics, path, 2, "duplicate topic id '1'", "first on line 1")


def test_topics_empty_file(tmp_path: Path) -> None:
    _expect_error(read_topics, _write(tmp_path, " \n\n"), None, "no topics")


def test_topics_undecodable_bytes(tmp_path: Path) -> None:
    path = _write(tmp_path, b"1\tfoo\n2\tb\xffr\n")
    _expect_error(read_topics, path, 2, "not valid UTF-8", "byte 4")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("  What is  COVID-19? ", "what is covid-19"),
        ("\u00bfQué es\tel   COVID?", "qué es el covid"),
        ("ＣＯＶＩＤ　ｖａｃｃｉｎｅ", "covid vaccine"),
        ("Straße", "strasse"),
        ('"quoted query" .', "quoted query"),
        ("c++ tutorial", "c++ tutorial"),
        ("...", ""),
        ("e\u0301cole", "\u00e9cole"),
    ],
)
def test_normalise_query(text: str, key: str) -> None:
    assert normalise_query(text) == key
