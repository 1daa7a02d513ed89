"""What assessors receive (a blind pool) and what they send back (judgments).

Pools are exported *blind*: no run tags, ranks or scores, and rows are written sorted by
(topic_id, doc_id) rather than in pool order, so neither the file nor its order tells an
assessor which system found a document or how high it ranked it.

Every format is a form the assessor fills and sends back as it is:

* CSV: `topic_id,query,description,doc_id,text,grade,grade_scale`, the `grade` cell empty and
  `grade_scale` saying what to write there (`an integer from 0 to 2`);
* JSONL: the same fields, `"grade": null`;
* TREC: a qrels template, `topic 0 docid` with the fourth column, the grade, left empty — no
  placeholder, since any number (-1 included) is a real grade in some collection; a line left
  unfilled is refused on import as a qrels line of three columns.

Texts are exported without the blank lines around them (counted by the export).
Judgments come back in the same three formats; a row whose grade is still empty is refused in
one line naming it, never read as 0.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from itertools import groupby
from pathlib import Path

from tcdb.collections.files.compression import write_text
from tcdb.collections.files.csv_safe import write_csv
from tcdb.collections.files.lines import text_lines
from tcdb.collections.qrels.formats import (
    check_duplicate,
    check_judgment_ids,
    parse_grade,
    read_qrels,
)
from tcdb.collections.runs.trec import read_text
from tcdb.collections.sources.records import QrelRecord, delimiter_of
from tcdb.errors import InputError
from tcdb.escaping import csv_plain
from tcdb.limits import Refused
from tcdb.vocabulary import JudgmentFormat

POOL_FIELDS = ("topic_id", "query", "description", "doc_id", "text", "grade", "grade_scale")
JUDGMENT_COLUMNS = ("topic_id", "doc_id", "grade")


def grade_scale(grades: tuple[int, int] | None) -> str:
    """What an assessor writes in the grade column, in words (the collection's grades)."""
    if grades is None:
        return "an integer (this collection declares no grade range)"
    return f"an integer from {grades[0]} to {grades[1]}"


@dataclass(frozen=True, slots=True)
class PoolItem:
    """One (topic, document) pair to judge, with what an assessor needs to see and no more."""

    topic_id: str
    query: str
    description: str | None
    doc_id: str
    text: str


def _blind_order(rows: Iterable[PoolItem], seed: int | None = None) -> list[PoolItem]:
    """Rows in an order that cannot reveal rank, duplicates refused: sorted by (topic, doc), or
    with `seed` each topic's documents shuffled (topics stay in order)."""
    items = sorted(rows, key=lambda item: (item.topic_id, item.doc_id))
    for before, after in zip(items, items[1:], strict=False):
        if (before.topic_id, before.doc_id) == (after.topic_id, after.doc_id):
            raise ValueError(f"document {after.doc_id!r} twice in the pool of {after.topic_id!r}")
    if seed is None:
        return items
    rng = random.Random(seed)
    shuffled: list[PoolItem] = []
    for _, group in groupby(items, key=lambda item: item.topic_id):
        docs = list(group)
        rng.shuffle(docs)
        shuffled.extend(docs)
    return shuffled


def write_pool_trec(path: Path, rows: Iterable[PoolItem], seed: int | None = None,
                    grades: tuple[int, int] | None = None) -> int:
    """Write the pool as a qrels template, `topic 0 docid` lines to which the assessor
    appends the grade (ids only); returns the number of rows.

    Every pool writer sorts by (topic, doc), or with `seed` shuffles each topic's documents.
    """
    items = _blind_order(rows, seed)
    for item in items:
        for value in (item.topic_id, item.doc_id):
            if not value or len(value.split()) != 1 or value.strip() != value:
                raise ValueError(f"id {value!r} is empty or contains whitespace")
    write_text(path, "".join(f"{item.topic_id} 0 {item.doc_id}\n" for item in items))
    return len(items)


def write_pool_jsonl(path: Path, rows: Iterable[PoolItem], seed: int | None = None,
                     grades: tuple[int, int] | None = None) -> int:
    """Write the pool as JSON lines with topic_id, query, description, doc_id, text, and
    `"grade": null` with the `grade_scale` to fill it by."""
    items = _blind_order(rows, seed)
    scale = grade_scale(grades)
    lines = (json.dumps({**asdict(item), "grade": None, "grade_scale": scale},
                        ensure_ascii=False) + "\n" for item in items)
    write_text(path, "".join(lines))
    return len(items)


def write_pool_csv(path: Path, rows: Iterable[PoolItem], seed: int | None = None,
                   grades: tuple[int, int] | None = None) -> int:
    """Write the pool as CSV for spreadsheets: topic_id, query, description, doc_id, text, an
    empty grade cell and the grade_scale to fill it by.

    Texts may hold commas, quotes and newlines; the csv module quotes them. Web texts are
    untrusted: a cell a spreadsheet would evaluate (`=…`, `@…`) starts with `'` (`csv_safe`).
    A missing description is an empty cell.
    """
    items = _blind_order(rows, seed)
    scale = grade_scale(grades)
    text = write_csv(([item.topic_id, item.query, item.description or "", item.doc_id,
                       item.text, "", scale] for item in items), header=POOL_FIELDS)
    write_text(path, text)
    return len(items)


def read_judgments(path: Path, fmt: JudgmentFormat | str) -> list[QrelRecord]:
    """Read an assessor's judgments: TREC qrels, CSV with topic_id, doc_id, grade columns, or
    JSON lines with those fields (the exported forms, filled in).

    Extra columns and fields (the exported query, text and grade scale, notes) are ignored.
    A (topic, doc) judged twice in one file is refused, with a different grade or the same
    one. A TREC file's
    iteration column says nothing here (the pool's batches are counted by tcdb): dropped. An
    id our CSV export neutralised (`'=x`, `csv_safe`) reads back as itself (`=x`).
    """
    path = Path(path)
    if fmt == "trec":
        _check_filled_template(path)
        return [replace(record, iteration=None) for record in read_qrels(path)]
    if fmt == "csv":
        return _read_judgments_csv(path)
    if fmt == "jsonl":
        return _read_judgments_jsonl(path)
    raise ValueError(f"unknown judgments format {fmt!r}: expected 'trec', 'csv' or 'jsonl'")


MISSING_GRADE = "grade is missing (fill it in, or leave unjudged documents out of the file)"


def _check_filled_template(path: Path) -> None:
    """A line of the exported qrels template left as it was (`topic 0 doc`, three columns)
    is an unfilled grade, said so, rather than a qrels line of the wrong shape."""
    for number, line in enumerate(text_lines(read_text(path)), start=1):
        fields = line.split()
        if len(fields) == 3 and fields[1] == "0":
            raise InputError(path, number, MISSING_GRADE + " (a qrels line is `topic 0 doc "
                             "grade`)")


def _read_judgments_jsonl(path: Path) -> list[QrelRecord]:
    """JSONL judgments: one object per line with topic_id, doc_id and an integer grade."""
    records: list[QrelRecord] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    file = str(path)
    for number, line in enumerate(text_lines(read_text(path)), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InputError(path, number, f"not a JSON object: {exc}") from None
        if not isinstance(item, dict):
            raise InputError(path, number, "not a JSON object")
        topic, doc, grade = (item.get(key) for key in JUDGMENT_COLUMNS)
        if not isinstance(topic, str) or not isinstance(doc, str) or not topic or not doc:
            raise InputError(path, number, "topic_id and doc_id must be non-empty texts")
        if grade is None or grade == "":
            raise InputError(path, number, MISSING_GRADE)
        if isinstance(grade, bool) or not isinstance(grade, int | str):
            raise InputError(path, number, f"grade {grade!r} is not an integer")
        try:
            check_judgment_ids(topic, doc)
            value = parse_grade(str(grade))
        except Refused as exc:
            raise InputError(path, number, str(exc)) from None
        check_duplicate(seen, path, number, topic, doc, value)
        records.append(QrelRecord(topic, doc, value, file, number))
    if not records:
        raise InputError(path, None, "judgments file has no judgments")
    return records


def _read_judgments_csv(path: Path) -> list[QrelRecord]:
    """CSV judgments; line numbers are physical lines, so quoted multi-line texts are fine."""
    text = read_text(path)
    header_line = next((line for line in text_lines(text) if line.strip()), "")
    if not header_line:
        raise InputError(path, None, "judgments file is empty")
    delimiter = delimiter_of(header_line, columns=JUDGMENT_COLUMNS)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records: list[QrelRecord] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    columns: dict[str, int] | None = None
    file = str(path)
    end = 0
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if columns is None:
                columns = _header_columns(path, start, row)
                continue
            values = {}
            for name, index in columns.items():
                if index >= len(row):
                    raise InputError(path, start, f"row has no {name!r} value")
                values[name] = csv_plain(row[index].strip())
            topic, doc, grade_text = (values[name] for name in JUDGMENT_COLUMNS)
            if not topic or not doc:
                raise InputError(path, start, "empty topic_id or doc_id")
            if not grade_text:
                raise InputError(path, start, MISSING_GRADE)
            try:
                check_judgment_ids(topic, doc)
                grade = parse_grade(grade_text)
            except Refused as exc:
                raise InputError(path, start, str(exc)) from None
            check_duplicate(seen, path, start, topic, doc, grade)
            records.append(QrelRecord(topic, doc, grade, file, start))
    except csv.Error as exc:
        raise InputError(path, end + 1, f"malformed CSV: {exc}") from exc
    if not records:
        raise InputError(path, None, "judgments file has no judgments")
    return records


def _header_columns(path: Path, line: int, header: list[str]) -> dict[str, int]:
    """Index of each required column; a missing one is an error on the header line."""
    names = [cell.strip().lower() for cell in header]
    missing = [name for name in JUDGMENT_COLUMNS if name not in names]
    if missing:
        found = ", ".join(repr(n) for n in names)
        reason = f"header lacks column(s) {', '.join(missing)} (found {found})"
        raise InputError(path, line, reason)
    return {name: names.index(name) for name in JUDGMENT_COLUMNS}
