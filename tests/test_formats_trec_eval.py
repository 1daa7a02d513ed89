"""trec_eval -q and ir_measures output: measure names, aggregates, skipped rows, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcdb.collections.scores.trec_eval import (
    EvalOutput,
    measure_from_trec_name,
    read_trec_eval,
)
from tcdb.errors import InputError


def _line(measure: str, topic: str, value: str) -> str:
    return f"{measure:<22}\t{topic}\t{value}\n"  # trec_eval's own layout


TREC_EVAL_Q = "".join(
    [
        _line("runid", "all", "bm25"),
        _line("num_ret", "301", "1000"),
        _line("num_rel", "301", "12"),
        _line("num_rel_ret", "301", "10"),
        _line("map", "301", "0.2500"),
        _line("gm_map", "all", "0.1000"),
        _line("Rprec", "301", "0.3333"),
        _line("bpref", "301", "0.4000"),
        _line("recip_rank", "301", "1.0000"),
        _line("P_20", "301", "0.3500"),
        _line("ndcg", "301", "0.6000"),
        _line("ndcg_cut_10", "301", "0.5000"),
        _line("map_cut_100", "301", "0.2000"),
        _line("recall_1000", "301", "0.9000"),
        _line("relstring", "301", "1100"),
        _line("map", "302", "0.5000"),
        _line("num_q", "all", "2"),
        _line("map", "all", "0.3750"),
        _line("ndcg_cut_10", "all", "0.5000"),
    ]
)


def _write(tmp_path: Path, text: str, name: str = "eval.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _expect_error(path: Path, line: int | None, *fragments: str) -> None:
    with pytest.raises(InputError) as info:
        read_trec_eval(path)
    err = info.value
    assert (err.file, err.line) == (str(path), line)
    for fragment in fragments:
        assert fragment in err.reason, err.reason
    assert str(err).startswith(f"{path}:{line}: " if line else f"{path}: ")


def test_trec_eval_q_output_maps_to_ir_measures_names(tmp_path: Path) -> None:
    out = read_trec_eval(_write(tmp_path, TREC_EVAL_Q))
    assert out.source_format == "trec_eval"
    assert out.per_topic == [
        ("AP", "301", 0.25),
        ("Rprec", "301", 0.3333),
        ("Bpref", "301", 0.4),
        ("RR", "301", 1.0),
        ("P@20", "301", 0.35),
        ("nDCG", "301", 0.6),
        ("nDCG@10", "301", 0.5),
        ("AP@100", "301", 0.2),
        ("R@1000", "301", 0.9),
        ("AP", "302", 0.5),
    ]
    assert out.aggregate == {"AP": 0.375, "nDCG@10": 0.5}
    assert {"runid", "num_ret", "num_rel", "num_rel_ret", "num_q", "gm_map", "relstring"} <= (
        out.skipped
    )


@pytest.mark.parametrize(
    ("trec", "irm"),
    [
        ("map", "AP"),
        ("ndcg_cut_5", "nDCG@5"),
        ("ndcg_cut_1000", "nDCG@1000"),
        ("P_5", "P@5"),
        ("P_1000", "P@1000"),
        ("recip_rank", "RR"),
        ("bpref", "Bpref"),
        ("ndcg", "nDCG"),
        ("map_cut_10", "AP@10"),
        ("recall_100", "R@100"),
        ("Rprec", "Rprec"),
        ("num_rel", None),
        ("num_ret", None),
        ("num_rel_ret", None),
        ("runid", None),
        ("gm_map", None),
        ("nonsense", None),
    ],
)
def test_measure_names(trec: str, irm: str | None) -> None:
    assert measure_from_trec_name(trec) == irm


def test_ir_measures_tsv_with_by_query_and_summary(tmp_path: Path) -> None:
    text = "301\tAP\t0.2500\n301\tnDCG@10\t0.5\n302\tAP\t0.5\nall\tAP\t0.375\n"
    out = read_trec_eval(_write(tmp_path, text, "eval.tsv"))
    assert out == EvalOutput(
        per_topic=[("AP", "301", 0.25), ("nDCG@10", "301", 0.5), ("AP", "302", 0.5)],
        aggregate={"AP": 0.375},
        skipped=set(),
        source_format="ir_measures",
    )


def test_ir_measures_names_are_canonicalised(tmp_path: Path) -> None:
    out = read_trec_eval(_write(tmp_path, "q1\tP(rel=2)@10\t0.1\nq1\tnDCG@10\t0.5\n"))
    assert [m for m, _, _ in out.per_topic] == ["P(rel=2)@10", "nDCG@10"]


def test_ir_measures_summary_only(tmp_path: Path) -> None:
    out = read_trec_eval(_write(tmp_path, "AP\t0.3\nnDCG@10\t0.4\n"))
    assert out.per_topic == []
    assert out.aggregate == {"AP": 0.3, "nDCG@10": 0.4}


def test_trec_eval_non_numeric_value(tmp_path: Path) -> None:
    text = _line("map", "301", "0.25") + _line("P_10", "302", "n/a")
    _expect_error(_write(tmp_path, text), 2, "value 'n/a'", "P_10", "'302'", "not a number")


def test_trec_eval_nan_value(tmp_path: Path) -> None:
    text = _line("map", "301", "0.25") + _line("map", "302", "nan")
    _expect_error(_write(tmp_path, text), 2, "not a finite number")


def test_ir_measures_non_numeric_value(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, "301\tAP\t0.2\n302\tAP\tx\n"), 2, "value 'x'", "not a number")


def test_ir_measures_unknown_measure(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, "301\tAP\t0.2\n301\tFancy@3\t0.1\n"), 2, "unknown", "Fancy@3")


def test_wrong_column_count(tmp_path: Path) -> None:
    text = _line("map", "301", "0.25") + "map 302\n"
    _expect_error(_write(tmp_path, text), 2, "expected 3 columns", "found 2")


def test_same_measure_twice_for_a_topic(tmp_path: Path) -> None:
    text = _line("map", "301", "0.25") + "\n" + _line("map", "301", "0.3")
    _expect_error(_write(tmp_path, text), 3, "AP for topic '301' appears twice", "line 1")


def test_unrecognised_file(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, "hello world 1\n"), 1, "neither trec_eval")


def test_empty_file(tmp_path: Path) -> None:
    _expect_error(_write(tmp_path, "\n"), None, "no rows")
