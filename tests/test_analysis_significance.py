"""Pairwise significance tests, Holm/Bonferroni corrections, and the outcome breakdown."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from tcdb.analysis import wide_scores
from tcdb.analysis.outcomes import outcome_breakdown, outcome_table
from tcdb.analysis.significance import bonferroni, compare_runs, holm, paired_effect_size
from tests.multiple_testing_oracle import adjusted_by_hand

pytestmark = pytest.mark.slow


def _wide(seed: int = 0, n_topics: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.6, n_topics)
    data = {
        "bm25": base,
        "rm3": np.clip(base + rng.normal(0.03, 0.05, n_topics), 0, 1),
        "dense": np.clip(base + rng.normal(0.10, 0.08, n_topics), 0, 1),
        "same": base.copy(),
    }
    return pd.DataFrame(data, index=pd.Index([f"t{i}" for i in range(n_topics)], name="topic"))


def test_every_p_value_equals_scipy() -> None:
    wide = _wide()
    table = compare_runs(wide, correction="none")
    assert len(table) == len(list(combinations(wide.columns, 2)))
    for row in table.itertuples(index=False):
        x, y = wide[row.run_a].to_numpy(), wide[row.run_b].to_numpy()
        diff = x - y
        assert row.mean_diff == pytest.approx(diff.mean())
        expected_t = scipy.stats.ttest_rel(x, y).pvalue
        expected_w = scipy.stats.wilcoxon(x, y).pvalue
        expected_r = scipy.stats.ranksums(x, y).pvalue
        wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
        assert (row.wins, row.losses) == (wins, losses)
        if wins + losses:
            expected_s = scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue
            assert row.p_sign == pytest.approx(expected_s, abs=1e-15)
        else:
            assert np.isnan(row.p_sign)
        for got, expected in (
            (row.p_t, expected_t),
            (row.p_wilcoxon, expected_w),
            (row.p_ranksum, expected_r),
        ):
            if np.isnan(expected):
                assert np.isnan(got)
            else:
                assert got == pytest.approx(expected, abs=1e-15)
        assert row.p_t_corrected == row.p_t or np.isnan(row.p_t)


def test_holm_hand_example() -> None:
    # sorted: 0.01×4 = 0.04, 0.02×3 = 0.06, 0.03×2 = 0.06, 0.04×1 = 0.04 → running max
    p = [0.03, 0.01, 0.04, 0.02]
    assert holm(p) == pytest.approx([0.06, 0.04, 0.06, 0.06])
    # monotone step-down: a later, smaller scaled value is lifted to the running max
    assert holm([0.001, 0.5, 0.4]) == pytest.approx([0.003, 0.8, 0.8])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    out = holm([0.01, float("nan"), 0.04])  # NaN is not a test: m = 2
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.04)
    assert bonferroni([0.01, 0.2, float("nan")]) == pytest.approx([0.02, 0.4, np.nan], nan_ok=True)


def test_corrections_apply_per_test_across_pairs() -> None:
    wide = _wide(1)
    pairs = [("bm25", "rm3"), ("bm25", "dense"), ("rm3", "dense")]
    raw = compare_runs(wide, pairs=pairs, correction="none")
    for method in ("holm", "bonferroni"):
        corrected = compare_runs(wide, pairs=pairs, correction=method)
        assert corrected[["run_a", "run_b"]].values.tolist() == [list(p) for p in pairs]
        for test in ("t", "wilcoxon", "ranksum", "sign"):
            expected = adjusted_by_hand(raw[f"p_{test}"].to_numpy(), method)
            assert corrected[f"p_{test}_corrected"].to_numpy() == pytest.approx(expected)
            assert (corrected[f"p_{test}_corrected"] >= corrected[f"p_{test}"]).all()
    with pytest.raises(ValueError, match="unknown correction"):
        compare_runs(wide, correction="fdr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a column"):
        compare_runs(wide, pairs=[("bm25", "nope")])


def test_identical_runs_and_missing_scores() -> None:
    wide = _wide(2)
    row = compare_runs(wide, pairs=[("bm25", "same")]).iloc[0]
    assert np.isnan(row["p_t"]) and np.isnan(row["p_sign"])
    assert row["mean_diff"] == 0.0
    long = pd.DataFrame(
        [("a", "t1", 0.5), ("a", "t2", 0.7), ("b", "t1", 0.4)], columns=["run", "topic", "value"]
    )
    table = compare_runs(wide_scores(long), correction="none")
    assert table.iloc[0]["mean_b"] == pytest.approx(0.2)  # missing topic counts 0


def test_outcome_breakdown_hand_example() -> None:
    # 10 topics: neither 2, only_a 3, only_b 1, both 4 (cutoff k = 10)
    ranks_a = {"q1": None, "q2": 11, "q3": 1, "q4": 2, "q5": 5, "q6": None,
               "q7": 1, "q8": 3, "q9": 2, "q10": 7}  # fmt: skip
    ranks_b = {"q1": None, "q2": None, "q3": None, "q4": None, "q5": None, "q6": 4,
               "q7": 2, "q8": 1, "q9": 5, "q10": 10}  # fmt: skip
    result = outcome_breakdown(ranks_a, ranks_b, k=10)
    json.dumps(result)
    assert result["n_topics"] == 10
    assert result["counts"] == {"neither": 2, "only_a": 3, "only_b": 1, "both": 4}
    assert result["shares"] == {"neither": 0.2, "only_a": 0.3, "only_b": 0.1, "both": 0.4}
    both_a, both_b = np.array([1.0, 3, 2, 7]), np.array([2.0, 1, 5, 10])
    assert result["both"]["n"] == 4
    # ESL = rank (rank 1 scores 1, as Lin et al. define it)
    assert result["both"]["mean_esl_a"] == pytest.approx(3.25)  # (1 + 3 + 2 + 7) / 4
    assert result["both"]["mean_esl_b"] == pytest.approx(4.5)  # (2 + 1 + 5 + 10) / 4
    assert result["both"]["mrr_a"] == pytest.approx(np.mean(1 / both_a))
    assert result["both"]["mrr_b"] == pytest.approx(np.mean(1 / both_b))
    assert result["both"]["p_esl"] == pytest.approx(
        scipy.stats.ttest_rel(both_a, both_b).pvalue
    )
    assert result["both"]["p_rr"] == pytest.approx(
        scipy.stats.ttest_rel(1 / both_a, 1 / both_b).pvalue
    )
    assert result["only_one"]["n_only_a"] == 3 and result["only_one"]["n_only_b"] == 1
    assert result["only_one"]["p_value"] == pytest.approx(0.625)  # binomial(3 of 4, p = 0.5)


def test_outcome_table_topics_union_and_cutoff() -> None:
    table = outcome_table(pd.Series({"a": 3.0, "b": float("nan")}), {"c": 1}, k=2)
    assert table.set_index("topic")["outcome"].to_dict() == {
        "a": "neither", "b": "neither", "c": "only_b",
    }  # fmt: skip
    empty = outcome_breakdown({"a": None}, {"a": None})
    assert empty["only_one"]["p_value"] is None and empty["both"]["mrr_a"] is None
    with pytest.raises(ValueError, match="positive integer"):
        outcome_table({"a": 0}, {"a": 1})


def test_paired_effect_size_is_cohens_d_z() -> None:
    """d_z: the mean per-topic difference over its standard deviation (ddof 1); undefined
    (None) for fewer than two topics or no spread."""
    difference = np.array([0.1, 0.3, -0.05, 0.2])
    assert paired_effect_size(difference) == pytest.approx(
        difference.mean() / difference.std(ddof=1))
    assert paired_effect_size(np.array([0.2])) is None
    assert paired_effect_size(np.array([0.25, 0.25, 0.25])) is None


def test_float_noise_between_equal_scores_is_no_effect() -> None:
    # 0.1 + 0.2 and 0.3 differ in the last bit: the runs are equal, d is undefined, not 1e16.
    noise = np.array([(0.1 + 0.2) - 0.3, 0.0, (0.7 + 0.1) - 0.8])
    assert paired_effect_size(noise) is None
