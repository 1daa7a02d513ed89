"""A count measure (NumRet…) is summed over topics in every report, as trec_eval's `all` line
and ir_measures' `calc_aggregate` give it; the oracle here is `calc_aggregate` on the run and
qrels files tcdb exports, never tcdb's own aggregate."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import ir_measures
import pytest

from tcdb import api
from tests.builders import COLLECTION, Seeded


@pytest.fixture(scope="module")
def seeded(seeded_url: tuple[str, Seeded]) -> Iterator[Seeded]:
    url, seed = seeded_url
    os.environ["TCDB_DATABASE_URL"] = url
    first = seed.labels[0]
    for i, tag in enumerate(r.run for r in api.runs(COLLECTION, first).runs):
        api.run_update(COLLECTION, first, [tag], submitted=f"2024-01-{i + 1:02d}")
    yield seed
    os.environ.pop("TCDB_DATABASE_URL", None)


def _oracle(snapshot: str, tag: str, measure: str, folder: Path, qrels_set: str = "original"
            ) -> float:
    """ir_measures' aggregate of `measure` for the exported run on the exported qrels set."""
    run = api.run_export(COLLECTION, snapshot, tag, out=folder / f"{snapshot}-{tag}.run")
    qrels = folder / f"{snapshot}-{qrels_set}.qrels"
    api.qrels_export(COLLECTION, snapshot, qrels_set, out=qrels)
    parsed = ir_measures.parse_measure(measure)
    found = ir_measures.calc_aggregate([parsed], ir_measures.read_trec_qrels(str(qrels)),
                                       ir_measures.read_trec_run(str(run.out)))
    return float(found[parsed])


@pytest.mark.parametrize("measure", ["NumRet", "NumRet(rel=1)"])
def test_compare_sums_counts(seeded: Seeded, tmp_path: Path, measure: str) -> None:
    first = seeded.labels[0]
    result = api.compare(COLLECTION, first, measure=measure, permutations=0, bootstrap=20)
    assert result.aggregate == "sum"
    for run in result.runs:
        assert run.mean == pytest.approx(_oracle(first, run.run, measure, tmp_path), abs=1e-9)
        assert run.ci_low is not None and run.ci_high is not None
        assert run.ci_low <= run.mean <= run.ci_high  # the sum's interval, not the mean's
    assert "Sum NumRet" in result.paper_table().caption or measure != "NumRet"


def test_compare_keeps_means_of_other_measures(seeded: Seeded) -> None:
    result = api.compare(COLLECTION, seeded.labels[0], measure="AP", permutations=0)
    assert result.aggregate == "mean"
    assert result.paper_table().caption.startswith("Mean AP")


def test_persistence_sums_counts(seeded: Seeded, tmp_path: Path) -> None:
    first, last = seeded.labels[0], seeded.labels[-1]
    result = api.persistence(COLLECTION, snapshots=[first, last], pivot="bm25",
                             measures=["NumRet", "AP"], bootstrap=20)
    counts, means = result.measures["NumRet"], result.measures["AP"]
    assert counts.aggregate == "sum" and means.aggregate == "mean"
    for record in counts.systems:
        for label in (first, last):
            tag = record.runs[label]
            assert record.arp[label] == pytest.approx(
                _oracle(label, tag, "NumRet", tmp_path), abs=1e-9)
        assert record.result_delta[last] == pytest.approx(
            record.arp[first] - record.arp[last], abs=1e-9)
        ci = (record.ci or {})["arp"][first]
        assert ci["low"] <= record.arp[first] <= ci["high"]
    ap = means.systems[0]
    assert ap.arp[first] == pytest.approx(_oracle(first, ap.runs[first], "AP", tmp_path),
                                          abs=1e-9)
    assert "ARP of NumRet: the sum over topics" in result.paper_table().caption


def test_leaderboard_sums_counts(seeded: Seeded, tmp_path: Path) -> None:
    first = seeded.labels[0]
    result = api.leaderboard(COLLECTION, first, measure="NumRet(rel=1)", permutations=0)
    assert result.aggregate == "sum"
    sums = {r.run: _oracle(first, r.run, "NumRet(rel=1)", tmp_path) for r in result.runs}
    best = None
    for run in result.runs:
        assert run.mean == pytest.approx(sums[run.run], abs=1e-9)
        best = run.mean if best is None else max(best, run.mean)
        assert run.state_of_the_art == pytest.approx(best, abs=1e-9)
    assert "Leaderboard over time: sum NumRet(rel=1)" in result.paper_table().caption
    means = api.leaderboard(COLLECTION, first, measure="AP", permutations=0)
    assert means.aggregate == "mean"


def test_reusability_sums_counts(seeded: Seeded, tmp_path: Path) -> None:
    last = seeded.labels[-1]
    result = api.reusability(COLLECTION, last, vs="expanded", measures=["NumRet(rel=1)"])
    figures = result.measures["NumRet(rel=1)"]
    for run in figures.runs:
        assert run.score_a == pytest.approx(
            _oracle(last, run.run, "NumRet(rel=1)", tmp_path), abs=1e-9)
        assert run.score_b == pytest.approx(
            _oracle(last, run.run, "NumRet(rel=1)", tmp_path, "expanded"), abs=1e-9)


def test_leave_out_sums_counts(seeded: Seeded, tmp_path: Path) -> None:
    last = seeded.labels[-1]
    result = api.leave_out(COLLECTION, last, qrels="original", depth=5,
                           measures=["NumRet(rel=1)"])
    runs = [run for group in result.measures["NumRet(rel=1)"].groups for run in group.runs]
    assert runs
    for run in runs:  # the full qrels' figure: ir_measures' sum
        assert run.score_full == pytest.approx(
            _oracle(last, run.run, "NumRet(rel=1)", tmp_path), abs=1e-9)
