"""Significance families in `tcdb report compare`: every run vs a baseline, each run vs every
earlier-submitted one, all pairs; corrections (Holm, Bonferroni, Benjamini–Hochberg) within
each family only; the randomisation test and BH equal to scipy called the same way; the t-test's
interval of the mean difference; `--topics SET`. Pure tests first, then both databases."""

from __future__ import annotations

import datetime as dt
import io
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from scipy import stats

from tcdb.analysis.families import all_pairs, baseline_pairs, earlier_pairs
from tcdb.analysis.significance import (
    benjamini_hochberg,
    compare_runs,
    correct,
    holm,
    permutation_p,
    t_interval,
)
from tests.builders import build_snapshot, write_run_file
from tests.multiple_testing_oracle import adjusted_by_hand

pytestmark = pytest.mark.slow


def _mean_diff(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    return np.mean(a - b, axis=axis)


def _scipy_permutation(x: np.ndarray, y: np.ndarray, n: int, seed: int) -> float:
    return float(stats.permutation_test((x, y), _mean_diff, permutation_type="samples",
                                        n_resamples=n, random_state=seed, vectorized=True,
                                        alternative="two-sided").pvalue)


# --- pure: tests and corrections --------------------------------------------------------------

def test_benjamini_hochberg_by_hand_and_equal_to_scipy() -> None:
    # sorted 0.01, 0.03, 0.04, 0.2 → ×4/rank: 0.04, 0.06, 0.0533, 0.2 → step-up minimum
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.2]) == pytest.approx(
        [0.04, 0.16 / 3, 0.16 / 3, 0.2])
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, 12)
    assert benjamini_hochberg(p) == pytest.approx(
        stats.false_discovery_control(p, method="bh"), abs=1e-15)
    with_nan = np.array([0.01, np.nan, 0.04, 0.03])  # NaN is no test: m = 3, and stays NaN
    got = benjamini_hochberg(with_nan)
    assert np.isnan(got[1])
    assert got[[0, 2, 3]] == pytest.approx(
        stats.false_discovery_control([0.01, 0.04, 0.03], method="bh"))
    assert correct([0.01, 0.04], "bh") == pytest.approx([0.02, 0.04])  # ×2/1, ×2/2


# By hand, for p = .01 .04 .03 .005 .3 (m = 5); ascending: .005 .01 .03 .04 .3
#   Bonferroni ×5, capped at 1: .05 .2 .15 .025 1
#   Holm ×5 ×4 ×3 ×2 ×1 in ascending order: .025 .04 .09 .08 .3 → running max
#        .025 .04 .09 .09 .3 → in input order .04 .09 .09 .025 .3
#   BH ×5/rank: .025 .025 .05 .05 .3 → running min from the largest
#        .025 .025 .05 .05 .3 → in input order .025 .05 .05 .025 .3
# and for p = .6 .7 (m = 2): Bonferroni 1 1; Holm min(1, 1.2) = 1, then max(1, .7) = 1;
# BH .6×2/1 = 1.2, .7×2/2 = .7 → running min .7 .7. With a NaN (no test), m counts the others.
BY_HAND = [
    ([0.01, 0.04, 0.03, 0.005, 0.3], {"bonferroni": [0.05, 0.2, 0.15, 0.025, 1.0],
                                      "holm": [0.04, 0.09, 0.09, 0.025, 0.3],
                                      "bh": [0.025, 0.05, 0.05, 0.025, 0.3]}),
    ([0.6, 0.7], {"bonferroni": [1.0, 1.0], "holm": [1.0, 1.0], "bh": [0.7, 0.7]}),
    ([0.01, float("nan"), 0.04], {"bonferroni": [0.02, float("nan"), 0.08],
                                  "holm": [0.02, float("nan"), 0.04],
                                  "bh": [0.02, float("nan"), 0.04]}),
]


@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh"])
def test_corrections_equal_hand_computed_values(method: str) -> None:
    for p, expected in BY_HAND:
        assert correct(p, method) == pytest.approx(expected[method], nan_ok=True)
        # and the oracle the other tests use (tests/multiple_testing_oracle.py) agrees
        assert adjusted_by_hand(p, method) == pytest.approx(expected[method], nan_ok=True)


def test_permutation_test_equals_scipy_with_the_same_seed() -> None:
    # hand-computed, exact (2³ sign flips ≤ resamples): differences 1, 2, 3, observed mean 2;
    # only "all +" and "all −" reach |2| → p = 2/8
    assert permutation_p(np.array([3.0, 4, 5]), np.array([2.0, 2, 2]), 100) == 0.25
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 1, 40)
    y = np.clip(x + rng.normal(-0.05, 0.1, 40), 0, 1)
    for seed in (0, 7):
        assert permutation_p(x, y, 2_000, seed) == _scipy_permutation(x, y, 2_000, seed)
    assert permutation_p(x, y, 2_000, 0) != permutation_p(x, y, 2_000, 7)  # the seed is used
    assert np.isnan(permutation_p(x, y, 0))  # 0 resamples: not run
    wide = pd.DataFrame({"a": x, "b": y})
    row = compare_runs(wide, correction="none", permutations=2_000, seed=7).iloc[0]
    assert row["p_permutation"] == _scipy_permutation(x, y, 2_000, 7)
    assert row["p_permutation_corrected"] == row["p_permutation"]


def test_t_interval_of_the_mean_difference_equals_scipy() -> None:
    x = np.array([0.2, 0.5, 0.4, 0.9, 0.3])
    y = np.array([0.1, 0.5, 0.2, 0.6, 0.4])
    ci = stats.ttest_rel(x, y).confidence_interval()
    assert t_interval(x, y) == pytest.approx((ci.low, ci.high))
    # by hand: differences .1 0 .2 .3 −.1, mean .1, sd √.025, t(0.975, 4) = 2.776…
    half = stats.t.ppf(0.975, 4) * np.sqrt(0.025) / np.sqrt(5)
    assert t_interval(x, y) == pytest.approx((0.1 - half, 0.1 + half))
    row = compare_runs(pd.DataFrame({"a": x, "b": y}), permutations=0).iloc[0]
    assert (row["diff_t_low"], row["diff_t_high"]) == pytest.approx((ci.low, ci.high))


# --- pure: which pairs, which families --------------------------------------------------------

DAY = dt.date(2021, 1, 1)


def test_family_designs_name_the_right_pairs() -> None:
    assert all_pairs(["a", "b", "c"]) == [("a", "b", "all"), ("a", "c", "all"),
                                          ("b", "c", "all")]
    assert baseline_pairs(["a", "base", "c"], "base") == [("a", "base", "vs base"),
                                                          ("c", "base", "vs base")]
    dates = {"late": DAY + dt.timedelta(9), "first": DAY, "twin1": DAY + dt.timedelta(3),
             "twin2": DAY + dt.timedelta(3)}
    # the twins share a date: neither is earlier than the other
    assert earlier_pairs(dates) == [
        ("twin1", "first", "twin1"), ("twin2", "first", "twin2"),
        ("late", "first", "late"), ("late", "twin1", "late"), ("late", "twin2", "late")]
    with pytest.raises(ValueError, match="without a submitted date: x"):
        earlier_pairs({"a": DAY, "x": None})


def test_correction_applies_within_each_family_only() -> None:
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 1, 30)
    wide = pd.DataFrame({name: np.clip(base + rng.normal(shift, 0.1, 30), 0, 1)
                         for name, shift in (("a", 0), ("b", 0.04), ("c", 0.08), ("d", 0.1))})
    pairs = earlier_pairs({"a": DAY, "b": DAY + dt.timedelta(1), "c": DAY + dt.timedelta(2),
                           "d": DAY + dt.timedelta(2)})
    raw = compare_runs(wide, [(a, b) for a, b, _ in pairs], "none", permutations=0)
    for method in ("holm", "bonferroni", "bh"):
        table = compare_runs(wide, [(a, b) for a, b, _ in pairs], method,
                             families=[f for _, _, f in pairs], permutations=0)
        for family in ("b", "c", "d"):
            mine = (table["family"] == family).to_numpy()
            for test in ("t", "wilcoxon", "sign"):
                assert table.loc[mine, f"p_{test}_corrected"].to_numpy() == pytest.approx(
                    adjusted_by_hand(raw.loc[mine, f"p_{test}"].to_numpy(), method))
        # one family of all five would have corrected more
        assert (table["p_t_corrected"] <= adjusted_by_hand(raw["p_t"].to_numpy(), method)
                + 1e-15).all()
    assert holm([0.01, 0.02])[1] == 0.02  # (the family "c" of two: ×2, ×1 then the max)


# --- both databases ----------------------------------------------------------------------------

TOPICS = {str(t): f"query {t}" for t in range(1, 21)}
DOCS = {f"d{i}": f"text {i}" for i in range(40)}
DATES = {"base": dt.date(2020, 1, 1), "early": dt.date(2020, 3, 1),
         "twin": dt.date(2020, 3, 1), "late": dt.date(2020, 9, 1)}


@pytest.fixture
def dated(db: str, tmp_path: Path) -> Path:
    """Twenty graded topics, four dated runs (two submitted the same day) and one undated."""
    from tcdb import api
    from tcdb.api import run_import

    rng = random.Random(8)
    qrels = [(t, d, rng.choice([0, 0, 1, 2])) for t in TOPICS for d in rng.sample(sorted(DOCS), 10)]
    build_snapshot(tmp_path, "c", "s", DOCS, TOPICS, qrels)
    for tag in [*DATES, "undated"]:
        rows = [(t, d, float(30 - i)) for t in TOPICS
                for i, d in enumerate(rng.sample(sorted(DOCS), 20))]
        run_import("c", "s", [write_run_file(tmp_path / "runs", tag, rows)],
                   submitted=DATES.get(tag))
    api.topic_set_create(collection="c", name="odd", snapshot="s",
                         topic_ids=[t for t in TOPICS if int(t) % 2])
    return tmp_path


def test_baseline_family_tests_every_run_against_it(dated: Path) -> None:
    from tcdb import api

    report = api.compare("c", "s", qrels="original", runs=["early", "late", "twin"], measure="AP",
                         correction="holm", baseline="base", permutations=500, seed=3)
    assert report.family.model_dump() == {"design": "baseline", "baseline": "base",
                                          "n_families": 1}
    assert [(p.run_a, p.run_b) for p in report.pairs] == [
        ("early", "base"), ("late", "base"), ("twin", "base")]
    raw = [p.p_t for p in report.pairs]
    assert [p.p_t_corrected for p in report.pairs] == pytest.approx(
        list(adjusted_by_hand(raw, "holm")))
    for pair in report.pairs:
        assert pair.effect_size is not None and pair.diff_t_low < pair.diff_t_high
        assert pair.p_permutation is not None


def test_vs_earlier_families_follow_the_submitted_dates(dated: Path, cli) -> None:
    from tcdb import api

    runs = ["late", "twin", "early", "base"]
    report = api.compare("c", "s", qrels="original", runs=runs, measure="AP",
                         correction="bonferroni", vs_earlier=True, permutations=0)
    pairs = [(p.run_a, p.run_b, p.family) for p in report.pairs]
    # by date; the runs of one day in the order given (twin before early)
    assert pairs == [("twin", "base", "twin"), ("early", "base", "early"),
                     ("late", "base", "late"), ("late", "twin", "late"),
                     ("late", "early", "late")]
    assert report.family.n_families == 3
    late = [p for p in report.pairs if p.family == "late"]
    assert [p.p_t_corrected for p in late] == pytest.approx(
        [min(1.0, 3 * p.p_t) for p in late])
    early = next(p for p in report.pairs if p.family == "early")
    assert early.p_t_corrected == early.p_t  # a family of one
    assert {r.run: r.submitted for r in report.runs}["twin"] == "2020-03-01"
    code, _, err = cli("report", "compare", "c", "s", "--measure", "AP", "--vs-earlier")
    assert code == 1 and "without a submitted date: undated" in err
    code, _, err = cli("report", "compare", "c", "s", "--run", "early", "--run", "twin",
                       "--measure", "AP", "--vs-earlier")
    assert code == 1 and "same submitted date" in err
    code, _, err = cli("report", "compare", "c", "s", "--measure", "AP", "--vs-earlier",
                       "--baseline", "base")
    assert code == 1 and "one family design" in err


def test_topic_set_restricts_the_topics(dated: Path) -> None:
    from tcdb import api
    from tcdb.api import per_topic_scores

    report = api.compare("c", "s", qrels="original", runs=["base", "late"], measure="AP",
                         topics="odd", permutations=0)
    assert report.n_topics == 10 and report.topic_set == "odd"
    scores = per_topic_scores("c", "s", qrels="original", measure="AP", runs=["late"],
                              compute=False).to_frame()
    odd = scores[scores["topic"].astype(int) % 2 == 1]
    assert report.runs[1].mean == pytest.approx(odd["value"].sum() / 10)


def test_cli_json_is_the_report_and_tables_fit_80_columns(dated: Path, cli,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from tcdb import api
    from tcdb.cli import output, report_compare

    args = ("report", "compare", "c", "s", "--baseline", "base", "--run", "early", "--run",
            "late", "--measure", "AP", "--correction", "bh", "--permutations", "300", "--seed",
            "4")
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    expected = api.compare("c", "s", qrels="original", runs=["early", "late"], measure="AP",
                           correction="bh", baseline="base", permutations=300, seed=4)
    assert json.loads(out) == expected.to_data()
    assert expected.correction == "bh"
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=80, color_system=None)
    monkeypatch.setattr(output, "console", terminal)
    monkeypatch.setattr(report_compare, "console", terminal)
    report_compare.show_compare(expected)
    text = screen.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80 and "…" not in text
    for pair in expected.pairs:
        assert f"{pair.p_permutation_corrected:.4f}" in text
        assert f"{pair.diff_t_low:.4f}" in text
    assert "bh within each family: every run vs base" in text


def test_every_pair_is_reported_as_it_is_tested() -> None:
    """`on_pair` (the report's progress bar) is called once per pair, after its row."""
    from tcdb.analysis.significance import compare_runs

    rng = np.random.default_rng(3)
    wide = pd.DataFrame(rng.random((12, 5)), columns=[f"r{i}" for i in range(5)])
    calls: list[int] = []
    table = compare_runs(wide, permutations=0, on_pair=lambda: calls.append(1))
    assert len(calls) == len(table) == 10
