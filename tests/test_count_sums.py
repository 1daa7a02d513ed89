"""A count measure (NumRet…) is summed over topics in every report, as trec_eval's `all` line
and ir_measures' `calc_aggregate` give it; the oracle here is `calc_aggregate` on the run and
qrels files tcdb exports, never tcdb's own aggregate."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ir_measures
import pytest

from tcdb import api
from tests.builders import COLLECTION, Seeded

pytestmark = pytest.mark.slow


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
    caption = result.paper_table().caption
    assert caption.startswith(f"{measure} summed over the topics on ")
    assert f"{measure} is the sum over the {result.n_topics:,} topics, not the mean" in caption


def test_compare_keeps_means_of_other_measures(seeded: Seeded) -> None:
    result = api.compare(COLLECTION, seeded.labels[0], measure="AP", permutations=0)
    assert result.aggregate == "mean"
    assert result.paper_table().caption.startswith("Mean AP")
    assert "sum" not in result.paper_table().caption


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
    caption = result.paper_table().caption
    assert "Leaderboard over time: NumRet(rel=1) summed over the topics" in caption
    assert (f"NumRet(rel=1) is the sum over the {result.n_topics:,} topics, not the mean"
            in caption)
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


def _table_heads(out: str) -> list[list[str]]:
    """Each table's header cells as the CLI prints it piped (columns two spaces apart)."""
    import re

    lines = out.splitlines()
    return [re.split(r"\s{2,}", lines[i - 1].strip()) for i, line in enumerate(lines)
            if i and set(line.strip()) <= set("-─ ") and line.strip()]


def test_cli_says_sum_for_a_count_and_mean_otherwise(seeded: Seeded, cli: Any) -> None:
    """compare and leaderboard on the terminal: the runs' column and title say what the figure
    is; a count's note says the tests are on per-topic values."""
    import json

    first = seeded.labels[0]
    for command in ("compare", "leaderboard"):
        code, out, err = cli("report", command, COLLECTION, first, "-m", "NumRet(rel=1)",
                             "--permutations", "1")
        assert code == 0, err
        assert any("sum" in head and "mean" not in head for head in _table_heads(out)), out
        assert "NumRet(rel=1) summed over the topics" in out
        assert "NumRet(rel=1) is the sum over the" in out and "not the mean" in out
        code, out, err = cli("report", command, COLLECTION, first, "-m", "NumRet(rel=1)",
                             "--permutations", "1", "--json")
        assert code == 0, err
        assert json.loads(out)["aggregate"] == "sum"
        code, out, err = cli("report", command, COLLECTION, first, "-m", "AP",
                             "--permutations", "1")
        assert code == 0, err
        assert any("mean" in head for head in _table_heads(out)), out
        assert "mean AP" in out and "summed" not in out and "the sum over" not in out


def test_papers_name_counts_as_sums_in_scores_tables(seeded: Seeded, cli: Any) -> None:
    import json

    first = seeded.labels[0]
    code, out, err = cli("scores", COLLECTION, first, "-m", "AP", "-m", "NumRet(rel=1)",
                         "--json")
    assert code == 0, err
    assert {(m["measure"], m["aggregate"]) for m in json.loads(out)["means"]} == {
        ("AP", "mean"), ("NumRet(rel=1)", "sum")}
    table = api.scores(COLLECTION, first, measures=["AP", "NumRet(rel=1)"]).paper_table()
    assert "NumRet(rel=1): sums over the topics, not means" in table.caption
    table = api.scores(COLLECTION, first, measures=["AP"]).paper_table()
    assert "sums over the topics" not in table.caption


def test_topic_deltas_say_the_mean_per_topic_and_a_counts_sum(seeded: Seeded,
                                                              cli: Any) -> None:
    """`mean_delta` is the mean of the per-topic changes for every measure; a count also has
    the change of its sum over those topics, equal to the difference of the summed figures."""
    first, last = seeded.labels[0], seeded.labels[-1]
    system = api.runs(COLLECTION, first).runs[0].system
    result = api.topic_deltas(COLLECTION, system=system, snapshots=[first, last],
                              measure="NumRet(rel=1)")
    deltas = [t.delta for t in result.topics]
    assert result.mean_delta == pytest.approx(sum(deltas) / len(deltas), abs=1e-9)
    assert result.sum_delta == pytest.approx(
        sum(t.score_b for t in result.topics) - sum(t.score_a for t in result.topics),
        abs=1e-9)
    plain = api.topic_deltas(COLLECTION, system=system, snapshots=[first, last], measure="AP")
    assert plain.sum_delta is None
    code, out, err = cli("report", "topic-deltas", COLLECTION, "--system", system,
                         "--snapshots", first, last, "-m", "NumRet(rel=1)")
    assert code == 0, err
    assert "mean Δ per topic" in out and f"Δ of the sum over the {result.n_topics} topics" in out


def test_dashboard_labels_a_count_as_a_sum(seeded: Seeded) -> None:
    """The Compare page: the runs' axis and the leaderboard's say `summed over the topics` for
    a count, `mean` for AP; the captions say what a dot is."""
    import json

    from tests.dashboard_pages import charts, clear_cache, open_page

    first = seeded.labels[0]
    api.evaluate(COLLECTION, first, measures=["NumRet(rel=1)"])  # the page only reads
    clear_cache()
    for measure, said, dot in (("NumRet(rel=1)", "NumRet(rel=1) summed over the topics",
                                "sum of NumRet(rel=1)"), ("AP", "mean AP", "mean AP")):
        at = open_page("compare", collection=COLLECTION, snapshot=first, measure=measure)
        titles = [json.dumps(spec) for spec, _ in charts(at)]
        assert sum(said in t for t in titles) >= 2, (measure, titles)  # runs, leaderboard
        assert not any("summed" in t for t in titles) or measure != "AP"
        captions = " ".join(e.value for e in at.caption)
        assert f"the dot is the run's {dot}" in captions.replace("\\", "")
        assert f"each point is a run's {dot}" in captions.replace("\\", "")
