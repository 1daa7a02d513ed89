"""Blind pool exports (TREC, JSONL, CSV) and the judgments assessors send back."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from tcdb.collections.assessor_forms.formats import (
    PoolItem,
    read_judgments,
    write_pool_csv,
    write_pool_jsonl,
    write_pool_trec,
)
from tcdb.collections.sources.records import QrelRecord
from tcdb.errors import InputError

# Deliberately in "rank order" (z before a): the export must not keep it.
POOL = [
    PoolItem("2", "polio", None, "d9", 'Polio, a "disease".\nSecond line, with commas.'),
    PoolItem("1", "crime", "Organised crime", "z-doc", "Mafia text"),
    PoolItem("1", "crime", "Organised crime", "a-doc", "Cartel text — ünïcode"),
]
BLIND = sorted(POOL, key=lambda p: (p.topic_id, p.doc_id))


def _expect_error(path: Path, fmt: str, line: int | None, *fragments: str) -> None:
    with pytest.raises(InputError) as info:
        read_judgments(path, fmt)  # type: ignore[arg-type]
    err = info.value
    assert (err.file, err.line) == (str(path), line)
    for fragment in fragments:
        assert fragment in err.reason, err.reason
    assert str(err).startswith(f"{path}:{line}: " if line else f"{path}: ")


def test_trec_pool_is_a_qrels_template_sorted_and_blind(tmp_path: Path) -> None:
    path = tmp_path / "pool.txt"
    assert write_pool_trec(path, POOL) == 3
    assert path.read_text() == "1 0 a-doc\n1 0 z-doc\n2 0 d9\n"


def test_trec_pool_refuses_whitespace_ids(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="whitespace"):
        write_pool_trec(tmp_path / "p", [PoolItem("1", "q", None, "a b", "t")])


def test_pools_refuse_duplicate_pairs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="twice"):
        write_pool_jsonl(tmp_path / "p", [POOL[1], POOL[1]])


def test_jsonl_pool_fields_and_order(tmp_path: Path) -> None:
    path = tmp_path / "pool.jsonl.gz"
    write_pool_jsonl(path, POOL)
    rows = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    assert [list(r) for r in rows] == [["topic_id", "query", "description", "doc_id", "text",
                                        "grade", "grade_scale"]] * 3
    assert rows == [
        {
            "topic_id": p.topic_id,
            "query": p.query,
            "description": p.description,
            "doc_id": p.doc_id,
            "text": p.text,
            "grade": None,
            "grade_scale": "an integer (this collection declares no grade range)",
        }
        for p in BLIND
    ]
    assert "rank" not in path.name and all("score" not in r and "run" not in r for r in rows)


def test_csv_pool_round_trips_awkward_text(tmp_path: Path) -> None:
    path = tmp_path / "pool.csv"
    write_pool_csv(path, POOL, grades=(0, 3))
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["topic_id", "query", "description", "doc_id", "text", "grade",
                       "grade_scale"]
    assert rows[1:] == [[p.topic_id, p.query, p.description or "", p.doc_id, p.text, "",
                         "an integer from 0 to 3"] for p in BLIND]


def test_csv_pool_filled_in_by_an_assessor_reads_back(tmp_path: Path) -> None:
    """The exported CSV with its grade cells filled in is a valid judgments file."""
    path = tmp_path / "pool.csv"
    write_pool_csv(path, POOL)
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index("grade")
    for row, grade in zip(rows[1:], ["2", "0", "-1"], strict=True):
        row[column] = grade
    judged = tmp_path / "judged.csv"
    with judged.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    # Line numbers are physical lines: the d9 text spans lines 4-5.
    assert read_judgments(judged, "csv") == [
        QrelRecord("1", "a-doc", 2, str(judged), 2),
        QrelRecord("1", "z-doc", 0, str(judged), 3),
        QrelRecord("2", "d9", -1, str(judged), 4),
    ]


def test_trec_judgments(tmp_path: Path) -> None:
    path = tmp_path / "judged.qrels"
    path.write_text("1 0 a-doc 1\n1 0 z-doc 0\n")
    assert read_judgments(path, "trec") == [
        QrelRecord("1", "a-doc", 1, str(path), 1),
        QrelRecord("1", "z-doc", 0, str(path), 2),
    ]


def test_csv_judgments_semicolon_bom_and_column_order(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes("\ufeffnote;GRADE;doc_id;topic_id\nok;1;d1;7\n".encode())
    assert read_judgments(path, "csv") == [QrelRecord("7", "d1", 1, str(path), 2)]


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown judgments format"):
        read_judgments(tmp_path / "x", "xlsx")  # type: ignore[arg-type]


def test_trec_judgments_non_integer_grade(tmp_path: Path) -> None:
    path = tmp_path / "j.qrels"
    path.write_text("1 0 d1 1\n1 0 d2 high\n")
    _expect_error(path, "trec", 2, "grade 'high' is not an integer")


def test_trec_judgments_conflicting_grades(tmp_path: Path) -> None:
    path = tmp_path / "j.qrels"
    path.write_text("1 0 d1 1\n1 0 d1 0\n")
    _expect_error(path, "trec", 2, "conflicting", "'d1'", "1 on line 1")


def test_csv_judgments_non_integer_grade(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("topic_id,doc_id,grade\n1,d1,1\n1,d2,2.5\n")
    _expect_error(path, "csv", 3, "grade '2.5' is not an integer")


def test_csv_judgments_missing_grade_value(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("topic_id,doc_id,grade\n1,d1,\n")
    _expect_error(path, "csv", 2, "grade is missing")


def test_csv_judgments_missing_column_in_header(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("\ntopic_id,doc_id,relevance\n1,d1,1\n")
    _expect_error(path, "csv", 2, "header lacks column(s) grade")


def test_csv_judgments_short_row(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("topic_id,doc_id,grade\n1,d1,1\n1,d2\n")
    _expect_error(path, "csv", 3, "row has no 'grade' value")


def test_csv_judgments_conflicting_grades(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text('topic_id,doc_id,grade,text\n1,d1,1,"a\nb"\n1,d1,2,c\n')
    _expect_error(path, "csv", 4, "conflicting", "grade 2", "1 on line 2")


def test_csv_judgments_exact_duplicate(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("topic_id,doc_id,grade\n1,d1,1\n1,d1,1\n")
    _expect_error(path, "csv", 3, "duplicate judgment", "line 2")


def test_csv_judgments_header_only(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("topic_id,doc_id,grade\n")
    _expect_error(path, "csv", None, "no judgments")


def test_csv_judgments_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text("")
    _expect_error(path, "csv", None, "empty")


def test_csv_judgments_unterminated_quote(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text('topic_id,doc_id,grade,text\n1,d1,1,x\n1,d2,1,"open\nmore\n')
    _expect_error(path, "csv", 3, "malformed CSV", "unexpected end of data")


def test_csv_judgments_stray_quote(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_text('topic_id,doc_id,grade,text\n1,d1,1,"a"b"\n')
    _expect_error(path, "csv", 2, "malformed CSV")


def test_csv_judgments_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "j.csv"
    path.write_bytes(b"topic_id,doc_id,grade\n1,d\xff,1\n")
    _expect_error(path, "csv", 2, "not valid UTF-8")
