"""Relevance judgments in TREC qrels (`topic iteration doc grade`) and BEIR TSV form.

A qrels file is the ground truth every score is computed against, so it is read strictly: a
grade that is not an integer, a wrong column count, or one (topic, doc) judged twice — even with
the same grade — stops the import with the file and line, instead of being silently resolved.

As trec_eval 10 reads it: lines starting with `#` are comments, skipped. Ids are one word within
their columns' lengths (`tcdb.limits`), the iteration one word of at most 32 characters, the
grade a decimal integer within SMALLINT (`tcdb.collections.files.numeric`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tcdb.collections.files.bad_lines import BadLines, one_line
from tcdb.collections.files.compression import write_text
from tcdb.collections.files.lines import text_lines
from tcdb.collections.files.numeric import parse_integer
from tcdb.collections.runs.trec import read_text
from tcdb.collections.sources.records import QrelRecord
from tcdb.errors import InputError
from tcdb.limits import (
    DOC_ID_LENGTH,
    GRADE_RANGE,
    ITERATION_LENGTH,
    TOPIC_ID_LENGTH,
    Refused,
    check_identifier,
)

BEIR_HEADER = ("query-id", "corpus-id", "score")


def parse_grade(text: str) -> int:
    """The grade: a decimal integer (negative allowed, e.g. -2 for spam) within SMALLINT;
    `Refused` otherwise."""
    return parse_integer(text, "grade", GRADE_RANGE)


def check_judgment_ids(topic: str, doc: str) -> None:
    """A judgment's topic and document ids against the identifier rule (`Refused`)."""
    check_identifier(topic, "topic id", TOPIC_ID_LENGTH)
    check_identifier(doc, "document id", DOC_ID_LENGTH)


def is_comment(line: str) -> bool:
    """A comment line of trec_eval 10's files: `#` first (after any indentation)."""
    return line.lstrip().startswith("#")


def read_qrels(path: Path, bad: BadLines | None = None) -> list[QrelRecord]:
    """Read a TREC or BEIR qrels file (plain or gzip), detected by BEIR's header line.

    Returns every judgment in file order, each pointing back at its file and line. A bad line
    raises `InputError`, or under `bad` that keeps going (`--on-bad-lines warn|skip`) is set
    aside into `bad.rejected`.
    """
    path = Path(path)
    lines = text_lines(read_text(path))
    first = next((i for i, line in enumerate(lines) if line.strip() and not is_comment(line)),
                 None)
    if first is None:
        raise InputError(path, None, "qrels file has no judgments")
    header = tuple(field.strip().lower() for field in lines[first].split("\t"))
    beir = header == BEIR_HEADER
    records: list[QrelRecord] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    file = str(path)
    for index in range(first + 1 if beir else first, len(lines)):
        with one_line(bad):
            number = index + 1
            line = lines[index]
            if not line.strip() or is_comment(line):
                continue
            if beir:
                fields = [field.strip() for field in line.split("\t")]
                if len(fields) != 3:
                    reason = (f"expected 3 tab-separated columns {BEIR_HEADER}, "
                              f"found {len(fields)}")
                    raise InputError(path, number, reason)
                topic, doc, grade_text = fields
                iteration = None
            else:
                fields = line.split()
                if len(fields) != 4:
                    reason = (f"expected 4 columns `topic iteration doc grade`, "
                              f"found {len(fields)}")
                    raise InputError(path, number, reason)
                topic, iteration, doc, grade_text = fields
            if not topic or not doc:
                raise InputError(path, number, "empty topic or document id")
            try:
                check_judgment_ids(topic, doc)
                grade = parse_grade(grade_text)
                if iteration is not None:
                    check_identifier(iteration, "iteration", ITERATION_LENGTH)
            except Refused as exc:
                raise InputError(path, number, str(exc)) from None
            check_duplicate(seen, path, number, topic, doc, grade)
            records.append(QrelRecord(topic, doc, grade, file, number, iteration))
    if not records:
        raise InputError(path, None, "qrels file has no judgments")
    return records


def check_duplicate(
    seen: dict[tuple[str, str], tuple[int, int]],
    path: Path,
    number: int,
    topic: str,
    doc: str,
    grade: int,
) -> None:
    """Refuse a second judgment of (topic, doc) in one file: which one counts would be a guess."""
    previous = seen.setdefault((topic, doc), (grade, number))
    if previous[1] == number:
        return
    first_grade, first_line = previous
    if first_grade == grade:
        reason = (
            f"duplicate judgment: document {doc!r} for topic {topic!r} is judged again with the "
            f"same grade {grade} (first on line {first_line})"
        )
    else:
        reason = (
            f"conflicting judgments: document {doc!r} for topic {topic!r} has grade {grade} here "
            f"but {first_grade} on line {first_line}"
        )
    raise InputError(path, number, reason)


def write_qrels(path: Path, records: Iterable[QrelRecord], fmt: str = "trec") -> int:
    """Write judgments as TREC qrels (`topic iteration doc grade`, the iteration as it was read,
    else 0) or as BEIR TSV (with its header); gzip when the name ends in `.gz`.

    Refuses ids with whitespace (they would shift columns on reading). Returns the row count.
    """
    if fmt not in ("trec", "beir"):
        raise ValueError(f"unknown qrels format {fmt!r}: expected 'trec' or 'beir'")
    out: list[str] = ["\t".join(BEIR_HEADER) + "\n"] if fmt == "beir" else []
    for record in records:
        for value in (record.topic_id, record.doc_id):
            if not value or len(value.split()) != 1 or value.strip() != value:
                raise ValueError(f"id {value!r} is empty or contains whitespace")
        if fmt == "beir":
            out.append(f"{record.topic_id}\t{record.doc_id}\t{int(record.grade)}\n")
        else:
            out.append(f"{record.topic_id} {record.iteration or 0} {record.doc_id} "
                       f"{int(record.grade)}\n")
    write_text(path, "".join(out))
    return len(out) - (fmt == "beir")
