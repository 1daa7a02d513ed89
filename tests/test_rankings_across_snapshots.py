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
