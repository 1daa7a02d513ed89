"""TREC run files: round trips, the fast and the reference reader agreeing, and every bad input."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcdb.collections.runs.fast_parse import parse_fast
from tcdb.collections.runs.trec import (
    RunFile,
    _parse_slow,
    checksum_file,
    read_run,
    write_run,
)
from tcdb.errors import InputError

ROWS = [("301", "FT911-1", 1, 12.5), ("301", "LA0101-2", 2, 11.0), ("302", "FT911-1", 1, 3.25)]


def _write(tmp_path: Path, text: str | bytes, name: str = "run.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _expect_error(path: Path, line: int | None, *fragments: str) -> InputError:
    with pytest.raises(InputError) as info:
        read_run(path)
    err = info.value
    assert err.file == str(path)
    assert err.line == line
    for fragment in fragments:
        assert fragment in err.reason
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err).startswith(prefix)
    return err


def _assert_rows(run: RunFile, rows: list[tuple[str, str, int, float]]) -> None:
    assert list(
        zip(run.topics, run.docs, run.ranks.tolist(), run.scores.tolist(), strict=True)
    ) == [(t, d, r, float(s)) for t, d, r, s in rows]


def test_write_then_read_round_trips_rows_tag_and_checksum(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run"
    assert write_run(path, ROWS, "bm25") == 3
    run = read_run(path)
    assert run.tag == "bm25"
    assert run.path == path
    _assert_rows(run, ROWS)
    assert run.lines.tolist() == [1, 2, 3]
    assert run.ranks.dtype == np.int64 and run.scores.dtype == np.float64
    assert run.lines.dtype == np.int64
    assert run.checksum == hashlib.sha256(path.read_bytes()).hexdigest() == checksum_file(path)
    assert len(run) == 3
    frame = run.to_frame()
    assert list(frame.columns) == ["topic", "doc", "rank", "score", "line"]
    assert frame["doc"].tolist() == ["FT911-1", "LA0101-2", "FT911-1"]


def test_write_run_keeps_scores_exact(tmp_path: Path) -> None:
    rows = [("1", "d1", 1, 0.1 + 0.2), ("1", "d2", 2, -1e-300), ("1", "d3", 3, np.float64(7.0))]
    path = tmp_path / "r.txt"
    write_run(path, rows, "t")
    assert read_run(path).scores.tolist() == [0.1 + 0.2, -1e-300, 7.0]


def test_gzip_is_detected_by_magic_bytes_not_suffix(tmp_path: Path) -> None:
    gz_path = tmp_path / "run.gz"
    write_run(gz_path, ROWS, "bm25")
    assert gz_path.read_bytes()[:2] == b"\x1f\x8b"
    disguised = tmp_path / "run.txt"
    disguised.write_bytes(gz_path.read_bytes())
    for path in (gz_path, disguised):
        run = read_run(path)
        _assert_rows(run, ROWS)
        assert run.checksum == hashlib.sha256(path.read_bytes()).hexdigest()


def test_plain_file_named_gz_is_read_as_plain(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n", "run.gz")
    assert read_run(path).docs == ["d1"]


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    path = _write(tmp_path, b"\x1f\x8b\x08\x00garbage")
    _expect_error(path, None, "gzip")


def test_whitespace_variants_blank_lines_and_crlf(tmp_path: Path) -> None:
    text = (
        "\n"
        "301\tQ0\tFT911-1\t1\t12.5\tbm25\r\n"
        "   \n"
        "301  Q0   LA0101-2 2 11 bm25   \r\n"
        "\r\n"
        "  302 0 FT911-1 1 3.25e0 bm25\n"
        "\n"
    )
    run = read_run(_write(tmp_path, text))
    _assert_rows(run, ROWS)
    assert run.lines.tolist() == [2, 4, 6]
    assert run.tag == "bm25"


def test_blank_lines_keep_line_numbers_on_the_fast_path(tmp_path: Path) -> None:
    text = "1 Q0 a 1 1.0 t\n\n\n1 Q0 b 2 0.5 t\n\n2 Q0 a 1 0.1 t"
    data = text.encode()
    fast = parse_fast(data)
    assert fast is not None
    assert fast[5].tolist() == [1, 4, 6]
    assert read_run(_write(tmp_path, text)).lines.tolist() == [1, 4, 6]


def test_non_ascii_doc_ids_are_decoded(tmp_path: Path) -> None:
    run = read_run(_write(tmp_path, "q1 Q0 Zürich_é 1 2.0 t\nq1 Q0 日本 2 1.0 t\n"))
    assert run.docs == ["Zürich_é", "日本"]


def test_same_doc_for_different_topics_is_fine(tmp_path: Path) -> None:
    run = read_run(_write(tmp_path, "1 Q0 d 1 1 t\n2 Q0 d 1 1 t\n"))
    assert run.topics == ["1", "2"]


# --- bad input: each names the file, the line and the reason --------------------------------


def test_too_few_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5\n")
    _expect_error(path, 2, "expected 6", "found 5")


def test_fields_after_the_tag_are_ignored_as_trec_eval_ignores_them(tmp_path: Path) -> None:
    # trec_eval 10's own test file results.trunc has them (issue 33, item 4)
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n\n1 Q0 d2 2 0.5 t extra fields\n")
    run = read_run(path)
    assert (run.tag, run.docs, run.lines.tolist()) == ("t", ["d1", "d2"], [1, 3])


def test_non_numeric_rank(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n1 Q0 d2 two 0.5 t\n")
    _expect_error(path, 2, "rank 'two' is not an integer")


def test_fractional_rank(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1.5 1.0 t\n")
    _expect_error(path, 1, "rank '1.5' is not an integer")


def test_rank_out_of_range(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n1 Q0 d2 99999999999999999999 0.5 t\n")
    _expect_error(path, 2, "rank 99999999999999999999 is out of range")


def test_non_numeric_score(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 high t\n")
    _expect_error(path, 2, "score 'high' is not a number")


@pytest.mark.parametrize("score", ["nan", "NaN", "inf", "-inf", "Infinity"])
def test_non_finite_score(tmp_path: Path, score: str) -> None:
    path = _write(tmp_path, f"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 {score} t\n")
    _expect_error(path, 2, f"score {score!r} is not a finite number")


def test_same_document_twice_for_one_topic(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.9 t\n2 Q0 d1 1 1 t\n1 Q0 d1 3 0.8 t\n")
    _expect_error(path, 4, "document 'd1' appears twice for topic '1'", "first on line 1")


def test_empty_file(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, ""), None, "no rows")


def test_file_of_blank_lines(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, "\n  \n\t\n"), None, "no rows")


def test_empty_gzip_file(tmp_path: Path) -> None:
    path = _write(tmp_path, gzip.compress(b""), "run.gz")
    _expect_error(path, None, "no rows")


def test_mixed_tags_name_both(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 bm25\n1 Q0 d2 2 0.9 bm25\n1 Q0 d3 3 0.8 dense\n")
    _expect_error(path, 3, "'dense'", "'bm25'", "line 1", "one run")


def test_undecodable_bytes_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, b"1 Q0 d1 1 1.0 t\n1 Q0 d\xff\xfe 2 0.9 t\n")
    _expect_error(path, 2, "not valid UTF-8", "byte 7")


def test_errors_deep_in_a_large_file_name_the_right_line(tmp_path: Path) -> None:
    rows = [(str(t), f"doc{d}", d + 1, 100.0 - d) for t in range(10) for d in range(500)]
    path = tmp_path / "big.run"
    write_run(path, rows, "big")
    lines = path.read_text().splitlines(keepends=True)
    lines[4321] = lines[4321].replace("doc321", "doc320")  # topic 8, duplicate of line 4321
    path.write_text("".join(lines))
    _expect_error(path, 4322, "document 'doc320' appears twice for topic '8'", "line 4321")


def test_errors_in_gzip_files_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, gzip.compress(b"1 Q0 d1 1 1.0 t\n1 Q0 d2 2 x t\n"), "run.gz")
    _expect_error(path, 2, "score 'x' is not a number")


def test_first_bad_line_wins(tmp_path: Path) -> None:
    path = _write(tmp_path, "1 Q0 d1 1 1.0 a\n1 Q0 d1 x 1.0 b\n1 Q0 d1 1\n")
    _expect_error(path, 2, "rank 'x'")


def test_write_run_refuses_whitespace_in_ids_and_tag(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="row 2"):
        write_run(tmp_path / "r", [("1", "a", 1, 1.0), ("1", "b c", 2, 0.5)], "t")
    with pytest.raises(ValueError, match="tag"):
        write_run(tmp_path / "r", ROWS, "two words")
    assert not (tmp_path / "r").exists()


# --- the fast path agrees with the reference reader ------------------------------------------

_ids = st.text(alphabet="abcXYZ019-_.é", min_size=1, max_size=6)
_sep = st.sampled_from([" ", "  ", "\t", " \t "])


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(_ids, _ids), min_size=1, max_size=30, unique=True),
    sep=_sep,
    crlf=st.booleans(),
    blank_every=st.integers(min_value=0, max_value=4),
    trailing=st.sampled_from(["", " ", "\n", "\n\n"]),
)
def test_fast_and_reference_readers_agree(
    pairs: list[tuple[str, str]], sep: str, crlf: bool, blank_every: int, trailing: str
) -> None:
    end = "\r\n" if crlf else "\n"
    out = []
    for i, (topic, doc) in enumerate(pairs):
        if blank_every and i % blank_every == 0:
            out.append(end)
        out.append(sep.join([topic, "Q0", doc, str(i), f"{1.0 / (i + 1)!r}", "tag"]) + end)
    data = ("".join(out) + trailing).encode()
    fast = parse_fast(data)
    slow = _parse_slow(Path("x"), data)
    assert fast is not None
    assert fast[0] == slow[0] and fast[1] == slow[1] and fast[2] == slow[2]
    for a, b in zip(fast[3:6], slow[3:6], strict=True):
        assert a.tolist() == b.tolist()
    codes, names = fast[6]
    assert [names[c] for c in codes] == slow[1]  # the fast path's topic coding

