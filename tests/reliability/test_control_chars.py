"""Class 2 of issue 32: NUL and other control characters, the same on both databases.

Identifiers (topic and document ids in every reader) refuse a control character with file, line
and reason, writing nothing. Free text (a document's text, a topic's query) keeps its words and
its whitespace controls and loses the control characters that are not whitespace — NUL, which
PostgreSQL cannot store, among them (TREC SGML is read as ir_datasets' TrecDocs reads it, whose
markup parser makes U+FFFD of a NUL) — so both databases hold the same text.
"""

from __future__ import annotations

import itertools
import json
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

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
# Control characters that are not whitespace to any reader's split: NUL, SOH, BS, ESC, DEL and
# the C1 controls (two UTF-8 bytes each).
CONTROLS = st.sampled_from(["\x00", "\x01", "\x08", "\x1b", "\x7f", "\x9f", "\x80"])
ASCII_CONTROLS = st.sampled_from(["\x00", "\x01", "\x08", "\x1b", "\x7f"])  # TrecDocs splits C1
_labels = itertools.count()


def _id_with(char: str, where: int, base: str) -> str:
    """`base` with `char` inserted at position `where` (start, middle or end)."""
    cut = min(where, len(base))
    return base[:cut] + char + base[cut:]


FILES = {  # reader -> (file name, content with {} where the id goes, line of that id)
    "run-topic": ("run", "r9.run", "q1 Q0 d1 1 1.0 r9\n{} Q0 d2 2 0.5 r9\n", 2),
    "run-doc": ("run-unknown-docs", "r9.run", "q1 Q0 d1 1 1.0 r9\nq1 Q0 {} 2 0.5 r9\n", 2),
    "qrels-doc": ("qrels-unknown-docs", "e.qrels", "q1 0 d1 1\nq1 0 {} 1\n", 2),
    "qrels-topic": ("qrels", "e.qrels", "q1 0 d1 1\n{} 0 d2 1\n", 2),
    "topics-tsv": ("topics", "t.tsv", "q1\tfirst\n{}\tsecond\n", 2),
    "judgments-doc": ("judgments", "j.csv", "topic_id,doc_id,grade\nq1,d1,1\nq1,{},1\n", 3),
}


@SETTINGS
@given(kind=st.sampled_from(sorted(FILES)), char=CONTROLS, where=st.integers(0, 3))
def test_an_identifier_with_a_control_character_is_refused(
    cli, use_db: str, world: World, kind: str, char: str, where: int
) -> None:
    reader, name, template, line = FILES[kind]
    value = _id_with(char, where, "q9" if "topic" in kind else "d9")
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), name, template.format(value))
        assert_refused(cli, use_db, READERS[reader](world, path), path, line,
                       f"contains a control character (U+{ord(char):04X})")


@SETTINGS
@given(char=CONTROLS, where=st.integers(0, 3), shape=st.sampled_from(["jsonl", "beir-topics"]))
def test_a_json_id_with_an_escaped_control_character_is_refused(
    cli, use_db: str, world: World, char: str, where: int, shape: str
) -> None:
    value = _id_with(char, where, "x9")
    rows = [{"_id": "a", "text": "x"}, {"_id": value, "text": "y"}]
    content = "".join(json.dumps(row) + "\n" for row in rows)  # the character as \\uXXXX
    reader, name = ("docs", "docs.jsonl") if shape == "jsonl" else ("topics", "queries.jsonl")
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), name, content)
        assert_refused(cli, use_db, READERS[reader](world, path), path, 2,
                       f"contains a control character (U+{ord(char):04X})")


@SETTINGS
@given(char=ASCII_CONTROLS, where=st.integers(0, 3))
def test_a_docno_with_a_control_character_is_refused(
    cli, use_db: str, world: World, char: str, where: int
) -> None:
    value = _id_with(char, where, "d9")
    content = (f"<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"
               f"<DOC>\n<DOCNO>{value}</DOCNO>\n<TEXT>\ny\n</TEXT>\n</DOC>\n")
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), "docs.trec", content)
        assert_refused(cli, use_db, READERS["docs"](world, path), path, 8,
                       f"contains a control character (U+{ord(char):04X})")


# Free text: what each control becomes. Whitespace controls stay (they separate words, and
# ir_datasets' TrecDocs keeps them); the others are dropped.
DROPPED = ["\x00", "\x01", "\x07", "\x08", "\x0e", "\x1b"]
KEPT = ["\t", "\x0b", "\x0c", "\x1c", "\x1f"]


@SETTINGS
@given(dropped=st.lists(st.sampled_from(DROPPED), min_size=1, max_size=3),
       kept=st.sampled_from(KEPT), shape=st.sampled_from(["trec", "jsonl"]))
def test_free_text_is_stored_without_its_non_whitespace_controls(
    cli, use_db: str, world: World, dropped: list[str], kept: str, shape: str
) -> None:
    from tcdb.collections.documents.jsonl import read_jsonl_documents
    from tcdb.collections.documents.trec import read_trec_documents
    from tcdb.storage.db import get_engine

    body = f"al{''.join(dropped)}pha{kept}beta"
    # TREC markup is read as ir_datasets' TrecDocs reads it: its parser (lxml) makes U+FFFD of
    # a NUL; the other controls are dropped from the text.
    nul = "\ufffd" * dropped.count("\x00") if shape == "trec" else ""
    query = f"find{''.join(dropped)} me"
    label = f"t{next(_labels)}"
    with tempfile.TemporaryDirectory() as folder:
        if shape == "trec":
            docs = write(Path(folder), "docs.trec",
                         f"<DOC>\n<DOCNO>z1</DOCNO>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n")
        else:
            docs = write(Path(folder), "docs.jsonl", json.dumps({"_id": "z1", "text": body}))
        topics = write(Path(folder), "topics.tsv", f"zq\t{query}\n")
        read = (read_trec_documents if shape == "trec" else read_jsonl_documents)(docs)
        assert f"al{nul}pha{kept}beta" in next(iter(read)).text  # as the reader gives it
        assert_accepted(cli, ["snapshot", "ingest", "c", label, "--docs", str(docs),
                              "--topics", str(topics)])
    with get_engine(use_db).connect() as conn:
        stored = conn.execute(text(
            "SELECT c.text FROM snapshot s JOIN snapshot_document d ON d.snapshot_id = s.id "
            "JOIN content c ON c.id = d.content_id WHERE s.label = :label"),
            {"label": label}).scalar_one()
        stored_query = conn.execute(text(
            "SELECT t.query FROM snapshot s JOIN snapshot_topic t ON t.snapshot_id = s.id "
            "WHERE s.label = :label"), {"label": label}).scalar_one()
    # Texts equal up to whitespace share one content row: compare the words.
    assert stored.split() == [f"al{nul}pha", "beta"]
    assert not any(char in stored for char in DROPPED)
    assert stored_query == "find me"
