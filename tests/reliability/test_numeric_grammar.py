"""Class 4 of issue 32: numbers are read by the grammar trec_eval reads them with, not Python's.

trec_eval reads ranks, grades and iterations with C's atoi/strtol and scores with atof/strtod;
Python's int()/float() also read `1_0`, `٣`, `１`, ` 7`. The oracle here is the C library itself
(strtod / strtol through ctypes): a token is accepted exactly when C reads all of it as a decimal
number, finite and in range — hexadecimal floats, `nan` and `inf`, which C also reads, are
refused by choice (see `tcdb.collections.files.numeric`) — and then has C's value. Through the CLI,
on
both databases, each field of each reader refuses the Python-only forms with file, line and
reason and changes no row, and the C forms Python also reads are stored with C's values.
"""

from __future__ import annotations

import ctypes
import math
import re
import tempfile
from pathlib import Path

import pytest
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

_LIBC = ctypes.CDLL(None)
_LIBC.strtod.restype = ctypes.c_double
_LIBC.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
_LIBC.strtoll.restype = ctypes.c_longlong
_LIBC.strtoll.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]


def _c_read(token: str, integer: bool) -> float | int | None:
    """C's value of the whole token, or None when C stops before its end."""
    raw = token.encode("utf-8")
    buffer = ctypes.create_string_buffer(raw)
    end = ctypes.c_char_p()
    start = ctypes.cast(buffer, ctypes.c_void_p).value
    pointer = ctypes.cast(buffer, ctypes.c_char_p)
    value = (_LIBC.strtoll(pointer, ctypes.byref(end), 10) if integer
             else _LIBC.strtod(pointer, ctypes.byref(end)))
    consumed = ctypes.cast(end, ctypes.c_void_p).value - start
    return value if raw and consumed == len(raw) else None


TOKEN_CHARS = "0123456789+-._eExXabfinINty٣１²"
TOKENS = st.text(alphabet=TOKEN_CHARS, min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(token=st.one_of(TOKENS, st.floats(allow_nan=True).map(repr),
                       st.sampled_from(["1e400", "-1e400", "0x1p3", "infinity", "NAN", ".e1"])))
def test_a_score_is_read_as_c_reads_a_decimal(token: str) -> None:
    from tcdb.collections.files.numeric import parse_score
    from tcdb.limits import Refused

    c_value = _c_read(token, integer=False)
    decimal = c_value is not None and math.isfinite(c_value) and not re.search(
        "[^0-9+.eE-]", token)
    if decimal:
        assert parse_score(token) == c_value
    else:
        with pytest.raises(Refused):
            parse_score(token)


@settings(max_examples=400, deadline=None)
@given(token=st.one_of(TOKENS, st.integers(-(2**40), 2**40).map(str)))
def test_an_integer_is_read_as_c_reads_a_decimal(token: str) -> None:
    from tcdb.collections.files.numeric import parse_integer
    from tcdb.limits import Refused

    bounds = (-(2**31), 2**31 - 1)
    c_value = _c_read(token, integer=True)
    if c_value is not None and bounds[0] <= c_value <= bounds[1] and len(token) < 18:
        assert parse_integer(token, "rank", bounds) == c_value
    else:
        with pytest.raises(Refused):
            parse_integer(token, "rank", bounds)


# --- every numeric field of every reader, through the CLI on both databases -----------------

PYTHON_ONLY_INTEGERS = ["1_0", "٣", "１", "0x10", "1e3", "1.0", "²", "+-1", "0b1", "1__0"]
NOT_DECIMALS = ["2_5", "nan", "NaN", "inf", "-Infinity", "0x1p3", "1.5f", "1,5", "1e400", "١.٥",
                "1_000.5", "∞"]
SETTINGS = settings(max_examples=10, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

FIELDS = {  # field -> (reader, file name, content with {} for the value, line, reason prefix)
    "rank": ("run", "r9.run", "q1 Q0 d1 1 1.0 r9\nq1 Q0 d2 {} 0.5 r9\n", 2, "rank", False),
    "score": ("run", "r9.run", "q1 Q0 d1 1 1.0 r9\nq1 Q0 d2 2 {} r9\n", 2, "score", True),
    "qrels-grade": ("qrels", "e.qrels", "q1 0 d1 1\nq2 0 d2 {}\n", 2, "grade", False),
    "judgment-grade": ("judgments", "j.csv", "topic_id,doc_id,grade\nq1,d1,1\nq1,d2,{}\n", 3,
                       "grade", False),
    "literature-value": ("literature", "lit.csv",
                         "publication,year,model,category,role,metric,value\n"
                         "P,2020,BM25,probabilistic,baseline,AP,0.2\n"
                         "Q,2021,BM25,probabilistic,baseline,AP,{}\n", 3, "value", True),
    "literature-year": ("literature", "lit.csv",
                        "publication,year,model,category,role,metric,value\n"
                        "P,{},BM25,probabilistic,baseline,AP,0.2\n", 2, "year", False),
}


@SETTINGS
@given(field=st.sampled_from(sorted(FIELDS)), data=st.data())
def test_a_number_only_python_reads_is_refused_in_every_field(
    cli, use_db: str, world: World, field: str, data: st.DataObject
) -> None:
    reader, name, template, line, what, decimal = FIELDS[field]
    token = data.draw(st.sampled_from(NOT_DECIMALS if decimal else PYTHON_ONLY_INTEGERS))
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder), name, template.format(token))
        message = assert_refused(cli, use_db, READERS[reader](world, path), path, line, what,
                                 repr(token))
    assert "not " in message  # "is not an integer / a number / a finite number / whole …"


@pytest.mark.parametrize("token", ["2_5", "nan", "inf", "0x1p3", "1e400"])
def test_a_trec_eval_value_only_python_reads_is_refused(cli, use_db: str, world: World,
                                                        tmp_path: Path, token: str) -> None:
    path = write(tmp_path, "eval.txt", f"map\tq1\t0.25\nmap\tq2\t{token}\nmap\tall\t0.3\n")
    assert_refused(cli, use_db, ["scores", "import", "c", "s1", str(path), "--run", "r1",
                                 "--qrels", "original"], path, 2, "value", repr(token))


def test_c_forms_python_also_reads_are_stored_with_c_values(cli, use_db: str, world: World,
                                                            tmp_path: Path) -> None:
    from tcdb.storage.db import get_engine

    rows = [("+1", "+.5"), ("007", "1."), ("-3", "1E+05"), ("4", "-0.0"), ("5", "2.5e-3")]
    run = write(tmp_path, "cforms.run", "".join(
        f"q1 Q0 d{i} {rank} {score} cforms\n" for i, (rank, score) in enumerate(rows, start=1)))
    assert_accepted(cli, READERS["run"](world, run))
    with get_engine(use_db).connect() as conn:
        stored = conn.execute(text(
            "SELECT e.rank, e.score FROM run r JOIN run_entry e ON e.run_id = r.id "
            "WHERE r.tag = 'cforms' ORDER BY e.eval_rank")).all()
    expected = sorted(((_c_read(rank, True), _c_read(score, False)) for rank, score in rows),
                      key=lambda pair: -pair[1])
    assert sorted(stored, key=lambda pair: -pair[1]) == expected
