"""Class 8 of issue 32: an identifier with whitespace is refused at ingest, by every reader.

A JSONL `_id` of `d 1` used to be stored and then make `qrels export` crash (the export cannot
write it as one column). Now document, topic and run-entry ids with any whitespace — ASCII or
Unicode (no-break space, em space, ideographic space, line separator, the information
separators U+001C-U+001F) — are refused where they are read, with file, line and reason, on
both databases, and nothing is written; so whatever is stored exports.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.refusals import (
    READERS,
    World,
    assert_accepted,
    assert_refused,
    write,
)

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
# Whitespace a quoted or structured field can hold (JSON, BEIR's tab-separated cells, XML).
ANY_SPACE = st.sampled_from([" ", "  ", "\u00a0", "\u2003", "\u3000", "\u2028", "\u1680",
                             "\u202f", "\x1c", "\x1f", "\x85"])
# Whitespace that the whitespace-split formats (run, TREC qrels) do not split on.
UNSPLIT = st.sampled_from(["\u00a0", "\u2003", "\u3000", "\u202f", "\u205f", "\u1680"])


def _inside(space: str, left: str, right: str) -> str:
    return f"{left}{space}{right}"


def _check(cli, url: str, world: World, reader: str, name: str, content: str, line: int,
           what: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), name, content)
        assert_refused(cli, url, READERS[reader](world, path), path, line, what,
                       "contains whitespace", "an id is one word")


STRUCTURED = {  # shape -> (reader, file name, content for an id, line, what)
    "jsonl-doc": ("docs", "docs.jsonl",
                  lambda i: json.dumps({"_id": "a", "text": "x"}) + "\n"
                  + json.dumps({"_id": i, "text": "y"}) + "\n", 2, "document id"),
    "jsonl-twin": ("docs", "docs.jsonl",
                   lambda i: json.dumps({"_id": "a", "text": "x", "twin_of": i}) + "\n", 1,
                   "twin_of"),
    "beir-topic": ("topics", "queries.jsonl",
                   lambda i: json.dumps({"_id": "q1", "text": "x"}) + "\n"
                   + json.dumps({"_id": i, "text": "y"}) + "\n", 2, "topic id"),
    "tsv-topic": ("topics", "topics.tsv", lambda i: f"q1\tfirst\n{i}\tsecond\n", 2, "topic id"),
    "xml-topic": ("topics", "topics.xml",
                  lambda i: f'<topics>\n<topic number="1"><query>a</query></topic>\n'
                            f'<topic number="{i}"><query>b</query></topic>\n</topics>\n', 3,
                  "topic id"),
    "beir-qrels-doc": ("qrels-unknown-docs", "qrels.tsv",
                       lambda i: f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\t{i}\t1\n", 3,
                       "document id"),
    "csv-judgment-doc": ("judgments", "judged.csv",
                         lambda i: f'topic_id,doc_id,grade\nq1,d1,1\nq1,"{i}",1\n', 3,
                         "document id"),
}


@SETTINGS
@given(shape=st.sampled_from(sorted(STRUCTURED)), space=ANY_SPACE,
       left=st.sampled_from(["d", "x9", "é"]), right=st.sampled_from(["1", "b", "字"]))
def test_an_id_with_whitespace_is_refused_in_structured_files(
    cli, use_db: str, world: World, shape: str, space: str, left: str, right: str
) -> None:
    reader, name, content, line, what = STRUCTURED[shape]
    if shape == "xml-topic" and space in ("\x1c", "\x1f"):
        space = " "  # not a character XML allows at all
    if shape == "tsv-topic" and space in ("\x1c", "\x1f", "\x85", "\u2028"):
        space = "\u00a0"  # TSV topics are split into lines by \n only, but keep it plain
    _check(cli, use_db, world, reader, name, content(_inside(space, left, right)), line, what)


SPLIT = {  # shape -> (reader, file name, content for an id, line, what)
    "run-doc": ("run-unknown-docs", "r9.run", "q1 Q0 d1 1 1.0 r9\nq1 Q0 {} 2 0.5 r9\n", 2,
                "document id"),
    "run-topic": ("run", "r9.run", "q1 Q0 d1 1 1.0 r9\n{} Q0 d2 2 0.5 r9\n", 2, "topic id"),
    "trec-docno": ("docs", "docs.trec",
                   "<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"
                   "<DOC>\n<DOCNO>{}</DOCNO>\n<TEXT>\ny\n</TEXT>\n</DOC>\n", 8, "document id"),
}


@SETTINGS
@given(shape=st.sampled_from(sorted(SPLIT)), space=UNSPLIT,
       left=st.sampled_from(["d", "q7", "é"]), right=st.sampled_from(["1", "b", "字"]))
def test_an_id_with_unicode_whitespace_is_refused_in_whitespace_separated_files(
    cli, use_db: str, world: World, shape: str, space: str, left: str, right: str
) -> None:
    reader, name, template, line, what = SPLIT[shape]
    _check(cli, use_db, world, reader, name, template.format(_inside(space, left, right)), line,
           what)


@pytest.mark.parametrize("docno", ["d 1", "d\t1", "d\u00a01"])
def test_a_trec_docno_with_an_ascii_space_is_refused(cli, use_db: str, world: World,
                                                     docno: str) -> None:
    content = f"<DOC>\n<DOCNO>{docno}</DOCNO>\n<TEXT>\ny\n</TEXT>\n</DOC>\n"
    _check(cli, use_db, world, "docs", "docs.trec", content, 2, "document id")


def test_what_is_stored_exports_and_reads_back(cli, use_db: str, world: World,
                                               tmp_path: Path) -> None:
    """The issue's case end to end: the `d 1` corpus is refused; one-word ids of the same
    shapes (Unicode letters, punctuation) ingest, and their qrels export and read back."""
    from tcdb.collections.qrels.formats import read_qrels

    bad = write(tmp_path, "bad.jsonl", '{"_id": "d 1", "text": "x"}\n')
    assert_refused(cli, use_db, READERS["docs"](world, bad), bad, 1, "contains whitespace")
    docs = write(tmp_path, "ok.jsonl", "".join(json.dumps({"_id": i, "text": f"t {i}"}) + "\n"
                                              for i in ("d-1", "é_2", "字.3")))
    topics = write(tmp_path, "ok.tsv", "q1\tfirst\n")
    qrels = write(tmp_path, "ok.qrels", "q1 0 d-1 1\nq1 0 é_2 0\nq1 0 字.3 2\n")
    assert_accepted(cli, ["snapshot", "ingest", "c", "ws", "--docs", str(docs), "--topics",
                          str(topics), "--qrels", str(qrels)])
    out = tmp_path / "export.qrels"
    assert_accepted(cli, ["qrels", "export", "c", "ws", "original", "--out", str(out)])
    assert sorted((r.topic_id, r.doc_id, r.grade) for r in read_qrels(out)) == [
        ("q1", "d-1", 1), ("q1", "é_2", 0), ("q1", "字.3", 2)]


TRICKY = "ab1é字\x00\x01\x1b\x1c\x7f\x85\x9f\xa0\u2003\u3000\u200b\u2028#"


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.tuples(st.text(TRICKY, min_size=1, max_size=4),
                              st.text(TRICKY, min_size=1, max_size=4)),
                    min_size=1, max_size=8, unique=True),
       rank=st.sampled_from(["1", "0x1", "+1", "1_0", "2147483648"]))
def test_the_run_fast_path_never_vouches_for_what_the_line_reader_refuses(
    ids: list[tuple[str, str]], rank: str
) -> None:
    """The vectorised reader checks whole columns; whenever it returns rows, the line reader
    (the reference, which names the bad line) returns the same rows."""
    from tcdb.collections.runs.fast_parse import parse_fast
    from tcdb.collections.runs.trec import _parse_slow
    from tcdb.errors import InputError

    data = "".join(f"{topic} Q0 {doc} {rank} 1.0 t\n" for topic, doc in ids).encode()
    fast = parse_fast(data)
    try:
        slow = _parse_slow(Path("x"), data)
    except InputError:
        assert fast is None
        return
    if fast is not None:
        assert fast[:3] == slow[:3]
        assert fast[3].tolist() == slow[3].tolist() and fast[5].tolist() == slow[5].tolist()
