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
    yield seed
    os.environ.pop("TCDB_DATABASE_URL", None)


def _oracle(snapshot: str, tag: str, measure: str, folder: Path) -> float:
    """ir_measures' aggregate of `measure` for the exported run on the exported original
    qrels."""
    run = api.run_export(COLLECTION, snapshot, tag, out=folder / f"{snapshot}-{tag}.run")
    qrels = folder / f"{snapshot}.qrels"
    api.qrels_export(COLLECTION, snapshot, "original", out=qrels)
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
