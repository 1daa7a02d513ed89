"""The outcome breakdown of Lin et al. (SIGIR 2021) completed: ESL as the rank of the relevant
document (rank 1 scores 1), t and signed-rank tests on ESL and RR over "both" topics, the
binomial test over "only one" topics, the two decision rules, cutoff 100 — and the structure of
the study's Table 2 (each run vs the earlier ones) reproduced on planted data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tcdb.analysis.outcomes import decisions, outcome_breakdown
from tests import leaderboard_data

pytestmark = pytest.mark.slow

# --- pure ---------------------------------------------------------------------------------------


def test_esl_is_the_rank_of_the_relevant_document() -> None:
    ranks_a = {"q1": 1, "q2": 4, "q3": 2, "q4": None}
    ranks_b = {"q1": 3, "q2": 4, "q3": 7, "q4": 1}
    result = outcome_breakdown(ranks_a, ranks_b, k=100)
    both = result["both"]
    assert (both["mean_esl_a"], both["mean_esl_b"]) == pytest.approx((7 / 3, 14 / 3))
    assert both["p_esl"] == pytest.approx(stats.ttest_rel([1, 4, 2], [3, 4, 7]).pvalue)
    assert both["p_esl_wilcoxon"] == pytest.approx(stats.wilcoxon([1, 4, 2], [3, 4, 7]).pvalue)
    rr_a, rr_b = [1, 1 / 4, 1 / 2], [1 / 3, 1 / 4, 1 / 7]
    assert both["p_rr"] == pytest.approx(stats.ttest_rel(rr_a, rr_b).pvalue)
    assert both["p_rr_wilcoxon"] == pytest.approx(stats.wilcoxon(rr_a, rr_b).pvalue)
    assert outcome_breakdown({"q": 1}, {"q": 1})["both"]["mean_esl_a"] == 1.0  # not 0


def test_decision_rules() -> None:
    # A wins "only one" significantly, "both" not tested: better, no harm
    assert decisions(10, 0, 0.002, 3.0, 3.0, None) == {
        "alpha": 0.05, "better_only_one": True, "worse_only_one": False, "better_both": False,
        "worse_both": False, "significantly_better": True, "does_no_harm": True}
    # A ranks the relevant document higher (lower ESL) significantly: better
    assert decisions(3, 3, 1.0, 2.0, 5.0, 0.01)["significantly_better"] is True
    # not significant either way: no harm, not better
    rule = decisions(6, 4, 0.75, 2.0, 2.5, 0.3)
    assert (rule["significantly_better"], rule["does_no_harm"]) == (False, True)
    # better on "both" but significantly worse on "only one": neither better nor harmless
    rule = decisions(0, 10, 0.002, 1.0, 18.0, 1e-6)
    assert (rule["better_both"], rule["worse_only_one"]) == (True, True)
    assert (rule["significantly_better"], rule["does_no_harm"]) == (False, False)
    # the level matters: p = 0.03 is significant at 0.05, not at 0.01
    assert decisions(9, 1, 0.03, None, None, None, alpha=0.01)["does_no_harm"] is True
    assert decisions(1, 9, 0.03, None, None, None)["does_no_harm"] is False


# --- both databases: the study's Table 2 on planted data ----------------------------------------


@pytest.fixture
def marco(db: str, tmp_path: Path) -> Path:
    leaderboard_data.build(tmp_path)
    return tmp_path


def _ranks(run: str, topics: range) -> np.ndarray:
    return np.array([leaderboard_data.planted_rank(run, i) for i in topics], dtype=float)


def test_table_2_each_run_against_the_earlier_ones(marco: Path, cli) -> None:
    from tcdb import api

    report = api.compare("marco", "dev", qrels="original", runs=None, measure="RR@100",
                         vs_earlier=True, permutations=0)
    outcomes = report.outcomes
    assert outcomes.applicable and outcomes.k == 100 and outcomes.alpha == 0.05
    table = {(p.run_a, p.run_b): p for p in outcomes.pairs}
    assert list(table) == [("bert", "bm25"), ("t5", "bm25"), ("t5", "bert"),
                           ("greedy", "bm25"), ("greedy", "bert"), ("greedy", "t5")]
    # the study's columns: counts, ESL A/B with p, MRR A/B with p, binomial p, decisions
    rows = {pair: (p.counts["neither"], p.counts["only_a"], p.counts["only_b"],
                   p.counts["both"], p.decision.significantly_better,
                   p.decision.does_no_harm) for pair, p in table.items()}
    assert rows == {("bert", "bm25"): (10, 0, 0, 30, True, True),
                    ("t5", "bm25"): (0, 10, 0, 30, True, True),
                    ("t5", "bert"): (0, 10, 0, 30, True, True),
                    ("greedy", "bm25"): (0, 10, 10, 20, True, True),
                    ("greedy", "bert"): (0, 10, 10, 20, True, True),
                    ("greedy", "t5"): (0, 0, 10, 30, False, False)}
    bert = table[("bert", "bm25")]
    # ESL = rank: bert 2 + i mod 3 (mean 3), bm25 10 + i mod 5 (mean 12) over topics 1–30
    assert (bert.both.mean_esl_a, bert.both.mean_esl_b) == pytest.approx((3, 12))
    a, b = _ranks("bert", range(1, 31)), _ranks("bm25", range(1, 31))
    assert bert.both.p_esl == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert bert.both.p_esl_wilcoxon == pytest.approx(stats.wilcoxon(a, b).pvalue)
    assert bert.both.mrr_a == pytest.approx(np.mean(1 / a))
    assert bert.both.p_rr == pytest.approx(stats.ttest_rel(1 / a, 1 / b).pvalue)
    assert bert.only_one.p_value is None  # no "only one" topic to test
    t5 = table[("t5", "bert")]  # the same ranks where both find it: nothing to test there
    assert t5.both.p_esl is None and t5.decision.better_both is False
    assert t5.only_one.p_value == pytest.approx(2 * 0.5 ** 10)  # binomial, 10 of 10
    greedy = table[("greedy", "t5")]  # better where both find it, misses ten: harm
    assert (greedy.both.mean_esl_a, greedy.both.mean_esl_b) == pytest.approx(
        (1, (60 + 500) / 30))  # t5: 2 + i mod 3 on 11–30 (sum 60), 50 on 31–40
    assert greedy.decision.better_both and greedy.decision.worse_only_one
    assert table[("greedy", "bert")].only_one.p_value == pytest.approx(1.0)
    code, out, err = cli("report", "compare", "marco", "dev", "--measure", "RR@100",
                         "--vs-earlier", "--permutations", "0")
    assert code == 0, err
    assert "relevant document in the top 100" in out and "A no harm" in out
    decision_lines = [line.split() for line in out.splitlines()
                      if line.startswith("greedy") and line.split()[-1] in ("yes", "no")]
    assert ["greedy", "t5", "no", "no"] in decision_lines
    assert ["greedy", "bert", "yes", "yes"] in decision_lines
