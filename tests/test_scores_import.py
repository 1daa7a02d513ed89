"""Importing published per-topic scores (trec_eval -q, ir_measures TSV), on both databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tcdb.errors import ConflictError, InputError
from tcdb.operations import Database
from tcdb.schema import Evaluation, Run, RunEntry, Score
from tests.builders import build_snapshot, write_run_file

DOCS = {f"d{i}": f"text {i}" for i in range(6)}
TOPICS = {"1": "one", "2": "two", "3": "three", "4": "four"}
QRELS = [("1", "d1", 1), ("2", "d2", 1), ("3", "d3", 2)]  # topic 4 is not judged

TREC_EVAL = """runid\tall\told-run
num_q\tall\t2
num_ret\t1\t1000
map\t1\t0.5000
map\t2\t0.2500
map\tall\t0.3750
ndcg_cut_10\t1\t0.6000
ndcg_cut_10\t2\t0.3000
P_20\t1\t0.0500
gm_map\tall\t0.3000
"""
IR_MEASURES = "1\tAP\t0.5\n3\tAP\t0.75\n1\tRR\t1.0\n"


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    build_snapshot(tmp_path, "c", "s1", DOCS, TOPICS, QRELS)
    return tmp_path


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _counts() -> tuple[int, int, int]:
    with Database().session() as session:
        return tuple(session.execute(select(func.count()).select_from(t)).scalar_one()
                     for t in (Run, Score, Evaluation))  # type: ignore[return-value]


def test_trec_eval_output_becomes_a_run_with_imported_scores(snap: Path, cli) -> None:
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import score_table

    path = _write(snap, "old.trec_eval", TREC_EVAL)
    code, out, err = cli("scores", "import", "c", "s1", path, "--qrels", "original", "--run",
                         "old-run", "--system", "Legacy", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "imported" and report["n_scores"] == 5
    assert report["measures"] == ["AP", "P@20", "nDCG@10"]
    assert "gm_map" in report["skipped"]
    with Database().session() as session:
        run = session.execute(select(Run)).scalar_one()
        assert run.n_entries == 0 and run.checksum is not None
        sources = set(session.execute(select(Evaluation.source)).scalars())
        assert session.execute(select(func.count()).select_from(RunEntry)).scalar_one() == 0
    assert sources == {"imported"}
    means = score_table(Database(), "c", "s1", "original", ["AP", "nDCG@10", "RR"])
    by_measure = dict(zip(means["measure"], means["value"], strict=True))
    assert by_measure["AP"] == pytest.approx((0.5 + 0.25) / 3)  # trec_eval -c: 3 qrels topics
    assert by_measure["nDCG@10"] == pytest.approx(0.9 / 3)
    assert by_measure["RR"] != by_measure["RR"]  # never evaluated: NaN, not 0
    inter = score_table(Database(), "c", "s1", "original", ["AP"], intersection=True)
    assert inter["value"].iloc[0] == pytest.approx(0.375)
    assert means["system"].iloc[0] == "Legacy"
    report2 = evaluate(Database(), "c", "s1", "original", ["RR"])
    assert report2.skipped == ["old-run"] and report2.n_computed == 0


def test_ir_measures_tsv_is_read_too(snap: Path) -> None:
    from tcdb.api import scores_import
    from tcdb.scoring.scores import score_table

    report = scores_import("c", "s1", _write(snap, "r.tsv", IR_MEASURES), qrels="original",
                           run="tsv-run")
    assert report.measures == ["AP", "RR"] and report.n_scores == 3
    table = score_table(Database(), "c", "s1", "original", ["AP"], per_topic=True)
    assert dict(zip(table["topic"], table["value"], strict=True)) == {"1": 0.5, "2": 0.0,
                                                                       "3": 0.75}


def test_same_scores_again_are_a_no_op_and_different_ones_need_replace(snap: Path) -> None:
    from tcdb.api import scores_import

    path = _write(snap, "r.tsv", IR_MEASURES)
    scores_import("c", "s1", path, qrels="original", run="r")
    before = _counts()
    assert scores_import("c", "s1", path, qrels="original", run="r").status == "unchanged"
    assert _counts() == before
    changed = _write(snap, "r2.tsv", IR_MEASURES.replace("0.75", "0.7"))
    with pytest.raises(ConflictError, match="different 'original' scores for AP"):
        scores_import("c", "s1", changed, qrels="original", run="r")
    assert _counts() == before
    report = scores_import("c", "s1", changed, qrels="original", run="r", replace=True)
    assert report.status == "replaced"
    with Database().session() as session:
        values = sorted(session.execute(select(Score.value)).scalars())
    assert values == [0.5, 0.7, 1.0]


def test_topic_not_in_snapshot_names_file_and_line(snap: Path, cli) -> None:
    path = _write(snap, "bad.tsv", "1\tAP\t0.5\n99\tAP\t0.1\n")
    with pytest.raises(InputError) as caught:
        from tcdb.api import scores_import

        scores_import("c", "s1", path, qrels="original", run="r")
    assert (caught.value.file, caught.value.line) == (str(path), 2)
    assert "topic '99' is not in snapshot 's1'" in caught.value.reason
    code, _, err = cli("scores", "import", "c", "s1", path, "--qrels", "original", "--run", "r")
    assert code == 1 and f"{path}:2:" in err
    assert _counts() == (0, 0, 0)


def test_topic_without_judgments_is_refused(snap: Path) -> None:
    from tcdb.api import scores_import

    path = _write(snap, "bad.trec_eval", "map\t1\t0.5\nmap\t4\t0.1\n")
    with pytest.raises(InputError) as caught:
        scores_import("c", "s1", path, qrels="original", run="r")
    assert caught.value.line == 2 and "has no judgments in qrels set 'original'" in str(
        caught.value)
    assert _counts() == (0, 0, 0)


def test_unreadable_value_is_an_input_error(snap: Path) -> None:
    from tcdb.api import scores_import

    path = _write(snap, "bad.trec_eval", "map\t1\t0.5\nmap\t2\thigh\n")
    with pytest.raises(InputError) as caught:
        scores_import("c", "s1", path, qrels="original", run="r")
    assert caught.value.line == 2 and "is not a number" in caught.value.reason
    assert _counts() == (0, 0, 0)


def test_run_with_entries_is_not_overwritten_by_imported_scores(snap: Path) -> None:
    from tcdb.api import run_import, scores_import

    run_import("c", "s1", [write_run_file(snap / "runs", "r", [("1", "d1", 1.0)])])
    with pytest.raises(ConflictError, match="has its entries stored"):
        scores_import("c", "s1", _write(snap, "r.tsv", IR_MEASURES), qrels="original", run="r")
    assert _counts() == (1, 0, 0)
