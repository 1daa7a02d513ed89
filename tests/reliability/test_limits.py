"""Class 1 of issue 32: what PostgreSQL cannot hold is refused on both databases, before writing.

PostgreSQL's columns are VARCHAR(200) for topic ids, VARCHAR(500) for unresolved document ids,
VARCHAR(32) for qrels iterations, INTEGER for ranks and SMALLINT for grades; SQLite would store
anything. Each generated value one past a limit is refused by the file's reader with one line
naming file, line and reason, and no row changes; a value at the limit is stored, and reads back
the same, on both databases.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from tests.reliability.refusals import (
    READERS,
    World,
    assert_accepted,
    assert_refused,
    write,
)

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
# PostgreSQL's sizes, written out here rather than read from the code under test.
TOPIC_ID, DOC_ID, ITERATION = 200, 500, 32
INT32_MAX, SMALLINT_MAX = 2**31 - 1, 2**15 - 1
LETTERS = st.sampled_from(["q", "é", "字"])  # lengths are characters, not bytes
_labels = itertools.count()


def _refused(cli, url: str, world: World, reader: str, name: str, content: str, line: int,
             *reason: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), name, content)
        return assert_refused(cli, url, READERS[reader](world, path), path, line, *reason)


TOPIC_FILES = {
    "run": ("r9.run", "q1 Q0 d1 1 1.0 r9\n{} Q0 d2 2 0.5 r9\n"),
    "qrels": ("extra.qrels", "q1 0 d1 1\n{} 0 d2 1\n"),
    "topics": ("topics.tsv", "q1\tfirst\n{}\tsecond\n"),
}


@SETTINGS
@given(reader=st.sampled_from(sorted(TOPIC_FILES)), letter=LETTERS,
       extra=st.integers(1, 400))
def test_a_topic_id_longer_than_200_characters_is_refused(
    cli, use_db: str, world: World, reader: str, letter: str, extra: int
) -> None:
    name, template = TOPIC_FILES[reader]
    topic = letter * (TOPIC_ID + extra)
    _refused(cli, use_db, world, reader, name, template.format(topic), 2, "topic id",
             f"({TOPIC_ID + extra} characters) is longer than 200 characters")


DOC_FILES = {
    "run-unknown-docs": ("r9.run", "q1 Q0 d1 1 1.0 r9\nq1 Q0 {} 2 0.5 r9\n", 2),
    "qrels-unknown-docs": ("extra.qrels", "q1 0 d1 1\nq2 0 {} 1\n", 2),
    "docs": ("docs.jsonl", '{{"_id": "a", "text": "x"}}\n{{"_id": "{}", "text": "y"}}\n', 2),
}


@SETTINGS
@given(reader=st.sampled_from([*sorted(DOC_FILES), "trec"]), letter=LETTERS,
       extra=st.integers(1, 600))
def test_a_document_id_longer_than_500_characters_is_refused(
    cli, use_db: str, world: World, reader: str, letter: str, extra: int
) -> None:
    doc = letter * (DOC_ID + extra)
    if reader == "trec":
        content = (f"<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"
                   f"<DOC>\n<DOCNO>{doc}</DOCNO>\n<TEXT>\ny\n</TEXT>\n</DOC>\n")
        _refused(cli, use_db, world, "docs", "docs.trec", content, 8, "document id",
                 "is longer than 500 characters")
        return
    name, template, line = DOC_FILES[reader]
    _refused(cli, use_db, world, reader, name, template.format(doc), line, "document id",
             f"({DOC_ID + extra} characters) is longer than 500 characters")


@SETTINGS
@given(rank=st.one_of(st.integers(INT32_MAX + 1, 10**30), st.integers(-(10**30), -INT32_MAX - 2)))
def test_a_rank_beyond_integer_is_refused_not_wrapped(cli, use_db: str, world: World,
                                                      rank: int) -> None:
    _refused(cli, use_db, world, "run", "r9.run", f"q1 Q0 d1 1 1.0 r9\nq1 Q0 d2 {rank} 0.5 r9\n",
             2, f"rank {rank} is out of range")


@SETTINGS
@given(grade=st.one_of(st.integers(SMALLINT_MAX + 1, 10**12),
                       st.integers(-(10**12), -SMALLINT_MAX - 2)),
       reader=st.sampled_from(["qrels", "judgments"]))
def test_a_grade_beyond_smallint_is_refused(cli, use_db: str, world: World, grade: int,
                                            reader: str) -> None:
    content = (f"q1 0 d1 1\nq2 0 d2 {grade}\n" if reader == "qrels"
               else f"topic_id,doc_id,grade\nq1,d1,1\nq1,d2,{grade}\n")
    line = 2 if reader == "qrels" else 3
    _refused(cli, use_db, world, reader, "judged.csv" if reader == "judgments" else "q.qrels",
             content, line, f"grade {grade} is out of range")


@SETTINGS
@given(extra=st.integers(1, 100), letter=LETTERS)
def test_a_qrels_iteration_longer_than_32_characters_is_refused(
    cli, use_db: str, world: World, extra: int, letter: str
) -> None:
    iteration = letter * (ITERATION + extra)
    _refused(cli, use_db, world, "qrels", "q.qrels", f"q1 0 d1 1\nq2 {iteration} d2 1\n", 2,
             "iteration", "is longer than 32 characters")


def test_values_at_the_limits_are_stored_and_read_back_the_same(
    cli, use_db: str, world: World, tmp_path: Path
) -> None:
    from tcdb.storage.db import get_engine

    doc = "é" * DOC_ID  # 500 characters, 1000 bytes
    run = write(tmp_path, "edge.run", f"q1 Q0 d1 {INT32_MAX} 1.0 edge\n"
                                      f"q1 Q0 {doc} {-INT32_MAX - 1} 0.5 edge\n")
    assert_accepted(cli, READERS["run-unknown-docs"](world, run))
    iteration = "字" * ITERATION
    qrels = write(tmp_path, "edge.qrels", f"q1 {iteration} d1 {SMALLINT_MAX}\n"
                                          f"q2 0 {doc} {-SMALLINT_MAX - 1}\n")
    assert_accepted(cli, READERS["qrels-unknown-docs"](world, qrels))
    topic = "t" * TOPIC_ID
    topics = write(tmp_path, "edge.tsv", f"{topic}\tedge query\n")
    assert_accepted(cli, ["snapshot", "ingest", "c", f"edge{next(_labels)}", "--docs",
                          str(world.docs), "--topics", str(topics)])
    with get_engine(use_db).connect() as conn:
        entries = conn.execute(text(
            "SELECT e.rank, u.external_doc_id, u.rank FROM run r "
            "JOIN run_entry e ON e.run_id = r.id "
            "JOIN run_entry_unresolved u ON u.run_id = r.id WHERE r.tag = 'edge'")).all()
        judged = conn.execute(text(
            "SELECT j.grade, j.iteration, u.external_doc_id, u.grade FROM qrels_set s "
            "JOIN judgment j ON j.qrels_set_id = s.id "
            "JOIN judgment_unresolved u ON u.qrels_set_id = s.id WHERE s.name = 'extra'")).all()
        topic_ids = conn.execute(text("SELECT external_id FROM snapshot_topic")).scalars().all()
    assert entries == [(INT32_MAX, doc, -INT32_MAX - 1)]
    assert judged == [(SMALLINT_MAX, iteration, doc, -SMALLINT_MAX - 1)]
    assert topic in topic_ids


def test_the_schema_columns_are_declared_from_the_same_limits() -> None:
    """One source: the readers' limits and the columns' sizes are the same constants."""
    from sqlalchemy import Integer, SmallInteger

    from tcdb import limits
    from tcdb.schema import metadata

    tables = metadata.tables
    assert tables["snapshot_topic"].c.external_id.type.length == limits.TOPIC_ID_LENGTH == 200
    for name in ("run_entry_unresolved", "judgment_unresolved"):
        assert tables[name].c.external_doc_id.type.length == limits.DOC_ID_LENGTH == 500
    for name in ("judgment", "judgment_unresolved"):
        assert tables[name].c.iteration.type.length == limits.ITERATION_LENGTH == 32
        assert isinstance(tables[name].c.grade.type, SmallInteger)
    assert limits.GRADE_RANGE == (-(2**15), 2**15 - 1)
    assert isinstance(tables["run_entry"].c.rank.type, Integer)
    assert limits.RANK_RANGE == (-(2**31), 2**31 - 1)
    for table, column in (("run", "tag"), ("collection", "name"), ("qrels_set", "name")):
        assert tables[table].c[column].type.length == limits.NAME_LENGTH
