"""Arbitrary bytes never give a traceback: the run, qrels and TREC document parsers either read
a file or raise `InputError` (file, line, reason).

Two kinds of input each: any bytes at all, and bytes assembled from the format's own tokens
(ids, numbers, tags, odd whitespace, broken UTF-8, a gzip header), which reach far deeper into
the parsers than noise does.
"""

from __future__ import annotations

import gzip
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcdb.errors import InputError

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

ODD = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x00", "\ufeff", "\u2028", "\x85"]
BROKEN = [b"\xff", b"\xc3", b"\xe2\x82", b"\xef\xbb\xbf", b"\x1f\x8b"]
RUN_TOKENS = ["q1", "q2", "Q0", "d1", "d2", "doc-3", "1", "2", "-1", "0", "99999999999999999999",
              "2.5", "-0.5", "1e400", "nan", "inf", "-inf", "1_0", "٣", "tag", "other", "é"]
QRELS_TOKENS = ["q1", "q2", "0", "d1", "d2", "1", "2", "-2", "+1", "1.0", "x", "query-id",
                "corpus-id", "score", "٣", "é"]
TREC_TOKENS = ["<DOC>", "</DOC>", "<DOCNO>", "</DOCNO>", "<TEXT>", "</TEXT>", "<TITLE>",
               "</TITLE>", "<HEAD>", "<DD>", "<p>", "&amp;", "&", "<", ">", "d1", "text", "é",
               "<!--", "]]>", "<DOC", "</DOC> "]


def _assembled(tokens: list[str]) -> st.SearchStrategy[bytes]:
    """Lines of the format's tokens and odd whitespace, with now and then a broken byte."""
    piece = st.one_of(st.sampled_from(tokens).map(str.encode),
                      st.sampled_from(ODD).map(str.encode), st.sampled_from(BROKEN))
    return st.lists(piece, max_size=60).map(b"".join)


def _maybe_gzip(data: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """The bytes as they are, gzipped, or gzipped and cut short."""
    return st.one_of(data, data.map(gzip.compress),
                     st.tuples(data, st.integers(0, 40)).map(
                         lambda pair: gzip.compress(pair[0])[:pair[1]]))


def _reads_or_refuses(parse: Callable[[Path], Any], data: bytes, name: str) -> Any:
    """Parse `data` from a file; only InputError may come out. Returns the parse, or None."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            return parse(path)
        except InputError as exc:
            assert exc.file == str(path) or str(path) in str(exc)
            assert exc.line is None or exc.line >= 1
            return None


def _read_run(path: Path) -> Any:
    from tcdb.collections.runs.trec import read_run

    return read_run(path)


def _check_run(data: bytes) -> None:
    run = _reads_or_refuses(_read_run, data, "fuzz.run")
    if run is not None:
        n = len(run)
        assert n > 0 and len(run.docs) == len(run.ranks) == len(run.scores) == len(run.lines) == n
        assert len(set(zip(run.topics, run.docs, strict=True))) == n  # no pair twice
        assert all(score == score for score in run.scores.tolist())  # no NaN


@SETTINGS
@given(st.binary(max_size=400))
def test_run_parser_any_bytes(data: bytes) -> None:
    _check_run(data)


@SETTINGS
@given(_maybe_gzip(_assembled(RUN_TOKENS)))
def test_run_parser_run_like_bytes(data: bytes) -> None:
    _check_run(data)


def _read_qrels(path: Path) -> Any:
    from tcdb.collections.qrels.formats import read_qrels

    return read_qrels(path)


def _check_qrels(data: bytes) -> None:
    records = _reads_or_refuses(_read_qrels, data, "fuzz.qrels")
    if records is not None:
        assert records and len({(r.topic_id, r.doc_id) for r in records}) == len(records)
        assert all(isinstance(r.grade, int) and r.line and r.line >= 1 for r in records)


@SETTINGS
@given(st.binary(max_size=400))
def test_qrels_parser_any_bytes(data: bytes) -> None:
    _check_qrels(data)


@SETTINGS
@given(_maybe_gzip(_assembled(QRELS_TOKENS)))
def test_qrels_parser_qrels_like_bytes(data: bytes) -> None:
    _check_qrels(data)


def _read_trec(path: Path) -> Any:
    from tcdb.collections.documents.trec import read_trec_documents

    return list(read_trec_documents(path))


def _check_trec(data: bytes) -> None:
    documents = _reads_or_refuses(_read_trec, data, "fuzz.trec")
    if documents is not None:
        assert all(isinstance(d.doc_id, str) and isinstance(d.text, str) for d in documents)


@SETTINGS
@given(st.binary(max_size=400))
def test_trec_document_parser_any_bytes(data: bytes) -> None:
    _check_trec(data)


@SETTINGS
@given(_maybe_gzip(_assembled(TREC_TOKENS)))
def test_trec_document_parser_trec_like_bytes(data: bytes) -> None:
    _check_trec(data)
