"""The leaderboard over time: runs by submission date, the SOTA chain (a tie after rounding is no
new SOTA; runs of one day are not earlier than one another), each new SOTA tested against every
earlier one with the family corrected — pure on planted scores, then `tcdb report leaderboard`,
its API and JSON on both databases."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from scipy import stats

from tcdb.analysis.leaderboard import sota_chain
from tcdb.analysis.means import exact_mean
from tests import leaderboard_data
from tests.multiple_testing_oracle import adjusted_by_hand

pytestmark = pytest.mark.slow

D = [dt.date(2021, m, 1) for m in range(1, 6)]
SCORES = {  # six topics; the comments give the means
    "a": [0.2, 0.3, 0.4, 0.3, 0.2, 0.4],  # 0.3, first: SOTA
    "b": [0.1, 0.2, 0.9, 0.4, 0.4, 0.4],  # 0.4: SOTA
    "c": [0.1, 0.55, 0.55, 0.4, 0.4, 0.4],  # 0.4 after rounding (a hair more before): a tie
    "d": [0.3, 0.3, 0.3, 0.4, 0.4, 0.4],  # 0.35, the same day as c
    "e": [0.4, 0.5, 0.9, 0.5, 0.4, 0.3],  # 0.5: SOTA
    "f": [0.4, 0.4, 0.4, 0.5, 0.5, 0.5],  # 0.45, the same day as e: beats all before it
    "g": [0.5, 0.5, 0.5, 0.4, 0.4, 0.46],  # 0.46 < e
}
DATES = {"a": D[0], "b": D[1], "c": D[2], "d": D[2], "e": D[3], "f": D[3], "g": D[4]}


def _chain(test: str = "t", **kwargs: object) -> dict[str, dict]:
    wide = pd.DataFrame(SCORES)
    rows = sota_chain(wide, DATES, test, **kwargs)  # type: ignore[arg-type]
    return {row["run"]: row for row in rows}


def test_sota_chain_on_planted_means() -> None:
    assert exact_mean(SCORES["c"]) > exact_mean(SCORES["b"])  # only float noise apart
    rows = _chain()
    assert list(rows) == ["a", "b", "c", "d", "e", "f", "g"]
    assert {r: rows[r]["is_sota"] for r in rows} == {
        "a": True, "b": True, "c": False, "d": False, "e": True, "f": True, "g": False}
    assert rows["c"]["mean"] == rows["b"]["mean"] == rows["c"]["best_before"] == 0.4
    assert rows["g"]["best_before"] == 0.5 and rows["a"]["best_before"] is None
    assert rows["a"]["previous_sota"] is None and rows["a"]["family"] is None
    # e and f (one day) are each tested against the SOTAs before that day: a and b
    for run in ("e", "f"):
        assert rows[run]["previous_sota"] == "b"
        assert [f["run"] for f in rows[run]["family"]] == ["a", "b"]
    x, b = np.array(SCORES["e"]), np.array(SCORES["b"])
    assert rows["e"]["p"] == pytest.approx(stats.ttest_rel(x, b).pvalue)
    raw = [stats.ttest_rel(x, np.array(SCORES[s])).pvalue for s in ("a", "b")]
    assert [f["p_corrected"] for f in rows["e"]["family"]] == pytest.approx(
        list(adjusted_by_hand(raw, "holm")))
    assert rows["b"]["family"][0]["mean_diff"] == pytest.approx(0.1)


def test_sign_test_steps_by_hand() -> None:
    rows = _chain("sign", alpha=0.05, correction="holm")
    # e − b: +.3 +.3 0 +.1 0 −.1 → 3 wins, 1 loss: p = 10/16; e − a: 5 wins, 1 loss: p = 14/64
    family = {f["run"]: f for f in rows["e"]["family"]}
    assert (family["b"]["p"], family["a"]["p"]) == pytest.approx((0.625, 0.21875))
    # Holm over the family of two: 0.21875 × 2, then max(0.625 × 1, 0.4375)
    assert (family["a"]["p_corrected"], family["b"]["p_corrected"]) == pytest.approx(
        (0.4375, 0.625))
    assert rows["e"]["significant"] is False and rows["e"]["significant_vs_all"] is False
    none = _chain("sign", correction="none")
    assert none["e"]["family"][0]["p_corrected"] == pytest.approx(0.21875)


# --- both databases ------------------------------------------------------------------------------


@pytest.fixture
def marco(db: str, tmp_path: Path) -> Path:
    leaderboard_data.build(tmp_path)
    return tmp_path


def _rr(run: str) -> np.ndarray:
    ranks = [leaderboard_data.planted_rank(run, i) for i in range(1, 41)]
    return np.array([1 / r if r else 0.0 for r in ranks])


def test_leaderboard_report_and_its_steps(marco: Path) -> None:
    from tcdb import api

    report = api.leaderboard("marco", "dev", measure="RR@100")
    assert report.chain == ["bm25", "bert", "t5", "greedy"]
    assert (report.n_steps, report.n_significant, report.n_topics) == (3, 3, 40)
    rows = {r.run: r for r in report.runs}
    assert [r.submitted for r in report.runs] == sorted(
        d.isoformat() for d in leaderboard_data.DATES.values())
    assert rows["greedy"].mean == pytest.approx(0.75)
    assert rows["t5"].p == pytest.approx(stats.ttest_rel(_rr("t5"), _rr("bert")).pvalue)
    raw = [stats.ttest_rel(_rr("greedy"), _rr(s)).pvalue for s in ("bm25", "bert", "t5")]
    assert [f.p_corrected for f in rows["greedy"].family] == pytest.approx(
        list(adjusted_by_hand(raw, "holm")))
    perm = api.leaderboard("marco", "dev", measure="RR@100", test="permutation",
                           permutations=999, seed=5, compute=False)
    t5 = next(r for r in perm.runs if r.run == "t5")
    expected = stats.permutation_test(
        (_rr("t5"), _rr("bert")), lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", n_resamples=999, random_state=5, vectorized=True).pvalue
    assert t5.p == pytest.approx(expected, abs=1e-15)
    # without the last entries, the chain ends earlier
    short = api.leaderboard("marco", "dev", measure="RR@100", runs=["bm25", "t5"])
    assert short.chain == ["bm25", "t5"] and short.n_steps == 1


def test_cli_json_terminal_and_bad_input(marco: Path, cli,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb import api
    from tcdb.api import run_import
    from tcdb.cli import output, report_leaderboard
    from tests.builders import write_run_file

    code, out, err = cli("report", "leaderboard", "marco", "dev", "--measure", "RR@100",
                         "--test", "wilcoxon", "--correction", "bh", "--json")
    assert code == 0, err
    expected = api.leaderboard("marco", "dev", measure="RR@100", test="wilcoxon", correction="bh")
    assert json.loads(out) == expected.to_data()
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=80, color_system=None)
    monkeypatch.setattr(output, "console", terminal)
    monkeypatch.setattr(report_leaderboard, "console", terminal)
    report_leaderboard.show_leaderboard(expected)
    text = screen.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    assert "SOTA chain: bm25 → bert → t5 → greedy; 3 of 3 steps significant" in text
    run_import("marco", "dev", [write_run_file(marco / "runs", "nodate",
                                              [("1", "r1", 2.0), ("1", "n5", 1.0)])])
    code, _, err = cli("report", "leaderboard", "marco", "dev", "--measure", "RR@100")
    assert code == 1 and "without a submitted date: nodate" in err
    code, _, err = cli("report", "leaderboard", "marco", "dev", "--measure", "RR@100",
                       "--test", "t-test")
    assert code == 1 and "unknown test 't-test'" in err
