"""System rankings across snapshots (issue 33, item 3) from per-topic scores: each pair of
snapshots ranks the systems by their mean over the topics both judge, and τ-b / τ-c equal
`scipy.stats.kendalltau` on means this test computes itself with ir_measures from the run and
qrels files; τ_AP equals hand-computed values (Yilmaz et al. 2008)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from scipy import stats

from tcdb import api
from tcdb.analysis.snapshot_rankings import compare_rankings
from tests.builders import COLLECTION


def test_tau_ap_equals_the_hand_computed_values() -> None:
    """Truth A > B > C > D. Estimate A > C > B > D: C(2)=1/1, C(3)=1/2, C(4)=3/3,
    p = 2.5/3, τ_AP = 2p − 1 = 2/3. A swap at the top (B > A > C > D): p = (0 + 1 + 1)/3,
    τ_AP = 1/3; at the bottom (A > B > D > C): p = (1 + 1 + 2/3)/3, τ_AP = 7/9. τ-b is 2/3
    for all three (one discordant pair of six)."""
    truth = pd.Series({"A": 0.4, "B": 0.3, "C": 0.2, "D": 0.1})
    for later, expected in (({"A": 0.4, "C": 0.3, "B": 0.2, "D": 0.1}, 2 / 3),
                            ({"B": 0.4, "A": 0.3, "C": 0.2, "D": 0.1}, 1 / 3),
                            ({"A": 0.4, "B": 0.3, "D": 0.2, "C": 0.1}, 7 / 9)):
        figures = compare_rankings(truth, pd.Series(later))
        assert figures["tau_ap"] == pytest.approx(expected, abs=1e-12)
        assert figures["tau_b"] == pytest.approx(2 / 3, abs=1e-12)
        assert figures["n_changed"] == 2


def test_equal_means_tie_after_rounding() -> None:
    """0.1 + 0.2 and 0.3 differ in the last bit; rounded they are one mean, so a tie."""
    a = pd.Series({"x": 0.1 + 0.2, "y": 0.3, "z": 0.1})
    b = pd.Series({"x": 0.3, "y": 0.1 + 0.2, "z": 0.1})
    figures = compare_rankings(a, b)
    assert figures["n_changed"] == 0
    assert figures["tau_b"] == pytest.approx(
        stats.kendalltau([0.3, 0.3, 0.1], [0.3, 0.3, 0.1], variant="b").statistic)


def _per_topic(seed: Path, label: str, system: str, measure: str) -> dict[str, float]:
    """ir_measures on the run and qrels files the seeded collection was built from."""
    folder = seed / "seed" / label
    qrels = list(ir_measures.read_trec_qrels(str(folder / "qrels.txt")))
    run = list(ir_measures.read_trec_run(str(folder / "runs" / f"{system}.run")))
    parsed = ir_measures.parse_measure(measure)
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc([parsed], qrels, run)}


def _judged(seed: Path, label: str) -> set[str]:
    return {q.query_id for q in ir_measures.read_trec_qrels(
        str(seed / "seed" / label / "qrels.txt"))}


@pytest.fixture(scope="module")
def seeded(database_url: str, tmp_path_factory: pytest.TempPathFactory):
    import os

    from tcdb.storage.db import truncate_all
    from tests.builders import seed_collection

    truncate_all(database_url)
    folder = tmp_path_factory.mktemp("rankings")
    previous = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    try:
        yield folder, seed_collection(folder)
    finally:
        if previous is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = previous


def test_rankings_from_scores_match_scipy_on_ir_measures_means(seeded) -> None:
    folder, data = seeded
    report = api.ranking_across_snapshots(COLLECTION, snapshots=data.labels, measures=["AP"],
                                          compute=False)
    figures = report.measures["AP"]
    assert report.source == "scores" and not figures.skipped
    assert [(p.earlier, p.later) for p in figures.pairs] == list(
        itertools.combinations(data.labels, 2))
    per_topic = {(label, s): _per_topic(folder, label, s, "AP")
                 for label in data.labels for s in data.systems}
    for pair in figures.pairs:
        common = sorted(_judged(folder, pair.earlier) & _judged(folder, pair.later), key=int)
        assert pair.topics == common and pair.n_topics == len(common)

        def mean(label: str, system: str, common: list[str] = common) -> float:
            values = per_topic[(label, system)]
            return round(math.fsum(values.get(t, 0.0) for t in common) / len(common), 12)

        x = [mean(pair.earlier, s) for s in data.systems]
        y = [mean(pair.later, s) for s in data.systems]
        assert pair.tau_b == pytest.approx(stats.kendalltau(x, y, variant="b").statistic,
                                           abs=1e-12)
        assert pair.tau_c == pytest.approx(stats.kendalltau(x, y, variant="c").statistic,
                                           abs=1e-12)
    own = {r.system: r for r in figures.systems}
    for label in data.labels:
        judged = _judged(folder, label)
        expected = {s: math.fsum(per_topic[(label, s)].get(t, 0.0) for t in judged)
                    / len(judged) for s in data.systems}
        for s in data.systems:
            assert own[s].score[label] == pytest.approx(expected[s], abs=1e-12)
    assert report.lineage is not None and len(report.lineage.runs) == 3 * len(data.systems)


def test_cli_rankings_from_scores(seeded, cli) -> None:
    folder, data = seeded
    code, out, err = cli("report", "rankings", COLLECTION, "--snapshots", *data.labels, "-m",
                         "AP", "--no-compute", "--json")
    assert code == 0, err
    body = json.loads(out)
    assert body["topics_said"].startswith("the topics both snapshots")
    assert body["lineage"]["qrels"] and len(body["measures"]["AP"]["pairs"]) == 3
    code, out, err = cli("report", "rankings", COLLECTION, "-m", "AP", "--topics", "core",
                         "--no-compute")
    assert code == 0, err
    assert "core topics" in out and "τ_AP" in out
    code, out, err = cli("report", "rankings", COLLECTION, "--snapshots", data.labels[0],
                         "--no-compute")
    assert code != 0 and "--snapshots" in err


def test_persistence_page_draws_the_rankings_report(seeded) -> None:
    """The Persistence page's τ chart is the report's pairs, and its table the report's
    largest rank changes against the first snapshot (names as plain text)."""
    import streamlit as st

    from tests.dashboard_pages import chart_with, open_page

    folder, data = seeded
    st.cache_data.clear()
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="AP",
                   snapshots=",".join(data.labels))
    drawn = chart_with(at, "earlier", "later", "τ-b", "τ_AP")
    report = api.ranking_across_snapshots(COLLECTION, snapshots=data.labels, measures=["AP"],
                                          compute=False)
    pairs = report.measures["AP"].pairs
    assert list(zip(drawn["earlier"], drawn["later"], strict=True)) == [
        (p.earlier, p.later) for p in pairs]
    assert drawn["τ-b"].tolist() == pytest.approx([p.tau_b for p in pairs])
    assert drawn["τ_AP"].tolist() == pytest.approx([p.tau_ap for p in pairs])
    assert any("System rankings across snapshots" in h.value for h in at.subheader)


def test_persistence_page_ranks_by_a_published_results_table(seeded, tmp_path: Path) -> None:
    """With a results table imported for the same systems (team = the runs' group), the page
    offers to rank by it, and draws the report from the table's figures."""
    import streamlit as st

    from tests.dashboard_pages import chart_with, open_page

    folder, data = seeded
    runs = api.runs(COLLECTION, data.labels[0]).runs
    lines = ["team,run,snapshot,nDCG@10"]
    for j, label in enumerate(data.labels):
        for k, run in enumerate(sorted(runs, key=lambda r: r.run)):
            lines.append(f"{run.group or ''},{run.run},{label},{(k * 7 + j * 3) % 10 / 20:.2f}")
    table = tmp_path / "published.csv"
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = api.results_import(COLLECTION, table)
    assert imported.n_new_systems == 0  # the runs' own systems
    st.cache_data.clear()
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="nDCG@10",
                   snapshots=",".join(data.labels), rank_by="published results table")
    drawn = chart_with(at, "earlier", "later", "τ-b", "τ_AP")
    report = api.ranking_across_snapshots(COLLECTION, snapshots=data.labels,
                                          measures=["nDCG@10"], source="results")
    assert drawn["τ-b"].tolist() == pytest.approx(
        [p.tau_b for p in report.measures["nDCG@10"].pairs])
    x = [float(line.split(",")[3]) for line in lines[1:] if f",{data.labels[0]}," in line]
    y = [float(line.split(",")[3]) for line in lines[1:] if f",{data.labels[-1]}," in line]
    first_last = next(p for p in report.measures["nDCG@10"].pairs
                      if (p.earlier, p.later) == (data.labels[0], data.labels[-1]))
    assert first_last.tau_b == pytest.approx(stats.kendalltau(x, y, variant="b").statistic)


def _expected_pairs(labels: list[str], which: str) -> list[tuple[str, str]]:
    if which == "first":
        return [(labels[0], later) for later in labels[1:]]
    return list(itertools.combinations(labels, 2))


def _means_over_common(folder: Path, pair: tuple[str, str], systems: list[str],
                       measure: str) -> tuple[list[float], list[float]]:
    """Each system's mean in both snapshots of the pair over the topics both judge (0 for a
    topic it did not answer), from ir_measures on the files, rounded to 12 decimals."""
    common = sorted(_judged(folder, pair[0]) & _judged(folder, pair[1]), key=int)
    out = []
    for label in pair:
        values = {s: _per_topic(folder, label, s, measure) for s in systems}
        out.append([round(math.fsum(values[s].get(t, 0.0) for t in common) / len(common), 12)
                    for s in systems])
    return out[0], out[1]


@pytest.mark.parametrize("which", ["all", "first"])
def test_tau_b_and_pearson_r_equal_scipy_for_every_pair(seeded, cli, which: str) -> None:
    """τ-b and Pearson's r with their p, as `--json` prints them, against scipy on means this
    test computes with ir_measures; `--pairs first` keeps the pairs against the first."""
    folder, data = seeded
    args = ["report", "rankings", COLLECTION, "--snapshots", *data.labels, "-m", "AP",
            "--no-compute", "--json"]
    code, out, err = cli(*args, "--pairs", which)
    assert code == 0, err
    body = json.loads(out)
    assert body["pairs"] == which
    pairs = body["measures"]["AP"]["pairs"]
    assert [(p["earlier"], p["later"]) for p in pairs] == _expected_pairs(data.labels, which)
    for pair in pairs:
        x, y = _means_over_common(folder, (pair["earlier"], pair["later"]), data.systems, "AP")
        tau_b = stats.kendalltau(x, y, variant="b")
        r = stats.pearsonr(x, y)
        assert pair["tau_b"] == pytest.approx(tau_b.statistic, abs=1e-12)
        assert pair["p_tau_b"] == pytest.approx(tau_b.pvalue, abs=1e-12)
        assert pair["pearson_r"] == pytest.approx(r.statistic, abs=1e-12)
        assert pair["p_pearson_r"] == pytest.approx(r.pvalue, abs=1e-12)
    code, out, err = cli(*args[:-1], "--pairs", which)  # the table says every figure
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("earlier"))
    assert header.split()[:9] == ["earlier", "later", "systems", "topics", "τ-b", "p", "τ-b",
                                  "Pearson", "r"]
    assert "Pearson r: scipy.stats.pearsonr" in out
    rows = [line.split() for line in out.split("largest")[0].splitlines() if line[:4].isdigit()]
    assert [(row[0], row[1]) for row in rows] == _expected_pairs(data.labels, which)
    for row, pair in zip(rows, pairs, strict=True):
        assert float(row[6]) == pytest.approx(pair["pearson_r"], abs=5e-5)


def test_pearson_r_in_the_frame_and_the_paper_table(seeded) -> None:
    folder, data = seeded
    report = api.ranking_across_snapshots(COLLECTION, snapshots=data.labels, measures=["AP"],
                                          compute=False, pairs="first")
    frame = report.to_frame()
    pairs = report.measures["AP"].pairs
    assert frame["pearson_r"].tolist() == pytest.approx([p.pearson_r for p in pairs])
    assert frame["p_pearson_r"].tolist() == pytest.approx([p.p_pearson_r for p in pairs])
    paper = report.paper_table()
    assert "Pearson's r" in paper.caption and f"each later snapshot and {data.labels[0]}" in \
        paper.caption


JUDGED_ONLY = "nDCG(judged_only=True)@10"


def test_judged_only_measures_equal_ir_measures_in_evaluate_rankings_and_persistence(
        seeded, cli) -> None:
    """`nDCG(judged_only=True)@10` (LongEval's judged-only figure) is a measure like any
    other: evaluate's means, the rankings' τ-b and r and persistence's ARP equal ir_measures
    called directly on the same run and qrels files. Judged-only skips unjudged documents, so
    a document below rank 10 can count: the runs are scored whole, not cut at 10."""
    folder, data = seeded
    plain_differs = False
    for label in data.labels:
        code, out, err = cli("evaluate", COLLECTION, label, "-m", JUDGED_ONLY, "--json")
        assert code == 0, err
        means = {m["run"]: m for m in json.loads(out)["means"] if m["measure"] == JUDGED_ONLY}
        judged = _judged(folder, label)
        assert set(means) == set(data.systems)
        for system in data.systems:
            values = _per_topic(folder, label, system, JUDGED_ONLY)
            expected = math.fsum(values.get(t, 0.0) for t in judged) / len(judged)
            assert means[system]["value"] == pytest.approx(expected, abs=1e-12)
            plain = _per_topic(folder, label, system, "nDCG@10")
            plain_differs |= any(abs(plain[t] - values[t]) > 1e-9 for t in values)
    assert plain_differs  # the seeded runs retrieve unjudged documents: the measures differ

    report = api.ranking_across_snapshots(COLLECTION, snapshots=data.labels,
                                          measures=[JUDGED_ONLY])
    pairs = report.measures[JUDGED_ONLY].pairs
    assert [(p.earlier, p.later) for p in pairs] == _expected_pairs(data.labels, "all")
    for pair in pairs:
        x, y = _means_over_common(folder, (pair.earlier, pair.later), data.systems,
                                  JUDGED_ONLY)
        assert pair.tau_b == pytest.approx(stats.kendalltau(x, y, variant="b").statistic,
                                           abs=1e-12)
        assert pair.pearson_r == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)

    code, out, err = cli("report", "persistence", COLLECTION, "-s", *data.labels, "--pivot",
                         "bm25", "-m", JUDGED_ONLY, "--json")
    assert code == 0, err
    systems = {s["system"]: s for s in json.loads(out)["measures"][JUDGED_ONLY]["systems"]}
    assert set(systems) == set(data.systems)
    for label in data.labels:
        judged = _judged(folder, label)
        for system in data.systems:
            values = _per_topic(folder, label, system, JUDGED_ONLY)
            expected = math.fsum(values.get(t, 0.0) for t in judged) / len(judged)
            assert systems[system]["arp"][label] == pytest.approx(expected, abs=1e-12)


def test_pearson_r_is_none_when_a_snapshot_ranks_every_system_alike() -> None:
    """r is undefined when one side is constant (scipy: nan and a warning): None, as τ-b; with
    two systems scipy's r is ±1 with p 1."""
    constant = compare_rankings(pd.Series({"a": 0.2, "b": 0.2, "c": 0.2}),
                                pd.Series({"a": 0.1, "b": 0.3, "c": 0.2}))
    assert constant["pearson_r"] is None and constant["p_pearson_r"] is None
    two = compare_rankings(pd.Series({"a": 0.2, "b": 0.1}), pd.Series({"a": 0.1, "b": 0.3}))
    expected = stats.pearsonr([0.2, 0.1], [0.1, 0.3])
    assert (two["pearson_r"], two["p_pearson_r"]) == pytest.approx(
        (expected.statistic, expected.pvalue))
