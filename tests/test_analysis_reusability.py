"""Reusability analysis: τ variants against references, per-topic τ, rank changes, coverage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from trectools import TrecQrel, TrecRun
from trectools.misc import get_correlation, sort_systems_by

from tcdb.analysis import mean_scores, wide_scores
from tcdb.analysis.bootstrap import tau_ci
from tcdb.analysis.rank_correlation import (
    goodman_kruskal_gamma,
    goodman_kruskal_gamma_matrix,
    tau_ap,
    tau_b,
    tau_b_matrix,
)
from tcdb.analysis.reusability import (
    per_topic_tau,
    rank_changes,
    reusability_report,
    uniques_leave_out,
    unjudged_and_new_relevant,
)


def _direct_tau_omit_ties(a: list[float], b: list[float]) -> float:
    """The definition, pair by pair: (C − D) / (C + D) over pairs untied in both."""
    concordant = discordant = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            da, db = a[i] - a[j], b[i] - b[j]
            if da == 0 or db == 0:
                continue
            if (da > 0) == (db > 0):
                concordant += 1
            else:
                discordant += 1
    if concordant + discordant == 0:
        return float("nan")
    return (concordant - discordant) / (concordant + discordant)


tied_pairs = st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
        st.lists(st.integers(0, 4), min_size=n, max_size=n),
    )
)


@given(tied_pairs)
@settings(max_examples=200, deadline=None)
def test_tau_omit_ties_equals_definition(pair: tuple[list[int], list[int]]) -> None:
    a, b = ([x / 4 for x in v] for v in pair)
    expected = _direct_tau_omit_ties(a, b)
    got = goodman_kruskal_gamma(a, b)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_tau_omit_ties_hand_example() -> None:
    a = [3, 3, 2, 1]
    assert goodman_kruskal_gamma(a, [3, 4, 1, 1]) == pytest.approx(1.0)  # untied pairs agree
    # (0,1) tied in a → omitted; (0,2) C, (0,3) D, (1,2) C, (1,3) C, (2,3) D → (3 − 2) / 5
    assert goodman_kruskal_gamma(a, [1, 4, 0, 2]) == pytest.approx(0.2)
    assert np.isnan(goodman_kruskal_gamma([1, 1, 1], [1, 2, 3]))
    named_a = pd.Series({"x": 0.3, "y": 0.2, "z": 0.1})
    named_b = pd.Series({"z": 0.3, "y": 0.2, "x": 0.1})  # aligned by name, not position
    assert goodman_kruskal_gamma(named_a, named_b) == pytest.approx(-1.0)


@given(tied_pairs)
@settings(max_examples=200, deadline=None)
def test_tau_b_equals_scipy(pair: tuple[list[int], list[int]]) -> None:
    a, b = pair
    expected = scipy.stats.kendalltau(a, b).statistic
    got = tau_b(a, b)
    batched = tau_b_matrix(np.array([a], dtype=float), np.array([b], dtype=float))[0]
    if np.isnan(expected):
        assert np.isnan(got) and np.isnan(batched)
    else:
        assert got == pytest.approx(expected, abs=1e-12)
        assert batched == pytest.approx(expected, abs=1e-12)


class _Res:
    """Just enough of trectools' TrecRes for `sort_systems_by`."""

    def __init__(self, name: str, value: float) -> None:
        self.name, self.value = name, value

    def get_result(self, metric: str) -> float:
        return self.value

    def get_runid(self) -> str:
        return self.name


def _trectools_tau_ap(truth: pd.Series, estimate: pd.Series) -> float:
    sorted_truth = sort_systems_by([_Res(n, v) for n, v in truth.items()])
    sorted_estimate = sort_systems_by([_Res(n, v) for n, v in estimate.items()])
    return get_correlation(sorted_truth, sorted_estimate, "tauap")[0]


@given(st.integers(min_value=2, max_value=15).flatmap(lambda n: st.permutations(range(n))))
@settings(max_examples=200, deadline=None)
def test_tau_ap_equals_trectools_on_tie_free_rankings(perm: list[int]) -> None:
    names = [f"run{i:02d}" for i in range(len(perm))]
    truth = pd.Series(np.linspace(1.0, 0.1, len(perm)), index=names)
    estimate = pd.Series([float(p) for p in perm], index=names)
    assert tau_ap(truth, estimate) == pytest.approx(_trectools_tau_ap(truth, estimate), abs=1e-12)


@given(tied_pairs)
@settings(max_examples=100, deadline=None)
def test_tau_ap_breaks_ties_by_name_like_trectools(pair: tuple[list[int], list[int]]) -> None:
    names = [f"r{i:02d}" for i in range(len(pair[0]))]
    truth = pd.Series([float(x) for x in pair[0]], index=names)
    estimate = pd.Series([float(x) for x in pair[1]], index=names)
    assert tau_ap(truth, estimate) == pytest.approx(_trectools_tau_ap(truth, estimate), abs=1e-12)


def test_tau_ap_is_top_weighted_in_the_estimate() -> None:
    names = ["a", "b", "c", "d", "e"]
    truth = pd.Series([5.0, 4, 3, 2, 1], index=names)
    swap_top = pd.Series([4.0, 5, 3, 2, 1], index=names)
    swap_bottom = pd.Series([5.0, 4, 3, 1, 2], index=names)
    assert tau_ap(truth, truth) == pytest.approx(1.0)
    assert tau_ap(truth, pd.Series([1.0, 2, 3, 4, 5], index=names)) == pytest.approx(-1.0)
    # both have Kendall τ = 0.8, but a swap at the top costs more under τ_AP
    assert goodman_kruskal_gamma(truth, swap_top) == pytest.approx(0.8)
    assert tau_ap(truth, swap_top) < tau_ap(truth, swap_bottom) < 1.0
    assert tau_ap(truth, swap_top) == pytest.approx(0.5)  # p = (0 + 1 + 1 + 1)/4 = 0.75


def _long(scores: dict[str, dict[str, float]]) -> pd.DataFrame:
    rows = [(run, topic, v) for run, per in scores.items() for topic, v in per.items()]
    return pd.DataFrame(rows, columns=["run", "topic", "value"])


def test_mean_scores_follow_trec_eval_c() -> None:
    per_topic = _long({"x": {"t1": 0.5, "t2": 0.3}, "y": {"t1": 0.4}})
    means = mean_scores(per_topic)
    assert means["x"] == pytest.approx(0.4)
    assert means["y"] == pytest.approx(0.2)  # t2 missing → 0
    means = mean_scores(per_topic, topics=["t1", "t2", "t3"])
    assert means["x"] == pytest.approx(0.8 / 3)
    assert mean_scores(per_topic, topics=["t1"])["y"] == pytest.approx(0.4)
    assert wide_scores(per_topic).loc["t2", "y"] == 0.0
    with pytest.raises(ValueError, match="more than one score"):
        mean_scores(pd.concat([per_topic, per_topic]))
    mixed = per_topic.assign(measure=["map", "ndcg", "map"])
    with pytest.raises(ValueError, match="mix measures"):
        mean_scores(mixed)
    assert mean_scores(mixed, measure="map")["x"] == pytest.approx(0.5)


def test_per_topic_tau_and_summary() -> None:
    a = _long({
        "r1": {"t1": 0.9, "t2": 0.1, "t3": 0.5},
        "r2": {"t1": 0.5, "t2": 0.2, "t3": 0.5},
        "r3": {"t1": 0.1, "t2": 0.3},
    })  # fmt: skip
    b = _long({
        "r1": {"t1": 0.8, "t2": 0.3, "t3": 0.4},
        "r2": {"t1": 0.6, "t2": 0.2, "t3": 0.6},
        "r3": {"t1": 0.2, "t2": 0.1, "t3": 0.0},
    })  # fmt: skip
    table, summary = per_topic_tau(a, b, threshold=0.9)
    taus = dict(zip(table["topic"], table["tau"], strict=True))
    assert taus["t1"] == pytest.approx(1.0)
    assert taus["t2"] == pytest.approx(-1.0)
    # t3: a = (0.5, 0.5, 0 [missing]), b = (0.4, 0.6, 0.0): pair (r1, r2) tied in a → omitted
    assert taus["t3"] == pytest.approx(1.0)
    assert summary == {"min": -1.0, "median": 1.0, "below_threshold": ["t2"]}
    table_b, _ = per_topic_tau(a, b, method="b")
    assert table_b.loc[table_b["topic"] == "t3", "tau"].item() == pytest.approx(
        scipy.stats.kendalltau([0.5, 0.5, 0.0], [0.4, 0.6, 0.0]).statistic
    )


def test_rank_changes_sorted_by_largest_move() -> None:
    mean_a = pd.Series({"r1": 0.5, "r2": 0.4, "r3": 0.3, "r4": 0.2})
    mean_b = pd.Series({"r1": 0.45, "r2": 0.5, "r3": 0.2, "r4": 0.6})
    table = rank_changes(mean_a, mean_b)
    # under B: r4 0.6, r2 0.5, r1 0.45, r3 0.2 → changes r4 +3, r1 −2, r3 −1, r2 0
    assert table["run"].tolist() == ["r4", "r1", "r3", "r2"]
    r4 = table.iloc[0]
    assert (r4["rank_a"], r4["rank_b"], r4["rank_change"]) == (4, 1, 3)
    assert table.set_index("run").loc["r1", "rank_change"] == -2
    assert list(table.columns) == ["run", "score_a", "rank_a", "score_b", "rank_b", "rank_change"]


def _run_table() -> pd.DataFrame:
    rows = []
    docs = {
        ("runA", "t1"): ["d1", "d2", "d3", "d4"],
        ("runA", "t2"): ["d5", "d6", "d7"],
        ("runB", "t1"): ["d2", "d8", "d9", "d1"],
        ("runB", "t2"): ["d6", "d10"],
    }
    for (run, topic), ranked in docs.items():
        for rank, doc in enumerate(ranked, start=1):
            rows.append((run, topic, doc, rank, 100.0 - rank))
    return pd.DataFrame(rows, columns=["run", "topic", "doc", "rank", "score"])


QRELS_A = pd.DataFrame(
    [("t1", "d1", 1), ("t1", "d2", 0), ("t2", "d5", 2), ("t2", "d6", 0), ("t1", "d4", -1)],
    columns=["topic", "doc", "grade"],
)
QRELS_B = pd.concat(
    [
        QRELS_A,
        pd.DataFrame(
            [("t1", "d3", 1), ("t1", "d8", 0), ("t1", "d9", 2), ("t2", "d7", 1), ("t2", "d10", 1)],
            columns=["topic", "doc", "grade"],
        ),
    ],
    ignore_index=True,
)


def test_unjudged_and_new_relevant_hand_counts() -> None:
    counts = unjudged_and_new_relevant(_run_table(), QRELS_A, QRELS_B, k=3).set_index("run")
    # runA top3: t1 d1 d2 d3 (d3 unjudged, relevant in B), t2 d5 d6 d7 (d7 unjudged, relevant)
    assert counts.loc["runA"].to_dict() == {"n_retrieved": 6, "unjudged_a": 2, "new_relevant_b": 2}
    # runB top3: t1 d2 d8 d9 (d8, d9 unjudged; d9 relevant), t2 d6 d10 (d10 unjudged, relevant)
    assert counts.loc["runB"].to_dict() == {"n_retrieved": 5, "unjudged_a": 3, "new_relevant_b": 2}
    strict = unjudged_and_new_relevant(_run_table(), QRELS_A, QRELS_B, 2, k=3).set_index("run")
    assert strict.loc["runB", "new_relevant_b"] == 1


@pytest.mark.parametrize("k", [1, 2, 3, 10])
def test_unjudged_counts_equal_trectools_coverage(tmp_path: Path, k: int) -> None:
    runs = _run_table()
    qrels_path = tmp_path / "qrels.txt"
    with qrels_path.open("w") as out:
        for row in QRELS_A.itertuples(index=False):
            out.write(f"{row.topic} 0 {row.doc} {row.grade}\n")
    qrels = TrecQrel(str(qrels_path))
    counts = unjudged_and_new_relevant(runs, QRELS_A, QRELS_B, k=k).set_index("run")
    for run, part in runs.groupby("run"):
        path = tmp_path / f"{run}.txt"
        with path.open("w") as out:
            for row in part.itertuples(index=False):
                out.write(f"{row.topic} Q0 {row.doc} {row.rank} {row.score} {run}\n")
        trec_run = TrecRun(str(path))
        covered = trec_run.check_qrel_coverage(qrels, topX=k)
        topics = sorted(trec_run.topics())
        retrieved = [min(k, int((part["topic"] == t).sum())) for t in topics]
        expected = sum(r - c for r, c in zip(retrieved, covered, strict=True))
        assert counts.loc[run, "unjudged_a"] == expected


def test_uniques_leave_out_removes_only_group_unique_relevant() -> None:
    runs = _run_table()
    runs["group"] = runs["run"].map({"runA": "g1", "runB": "g2"})
    extra = pd.DataFrame(
        [("runC", "t1", "d3", 1, 1.0, "g2")],
        columns=["run", "topic", "doc", "rank", "score", "group"],
    )
    runs = pd.concat([runs, extra], ignore_index=True)
    left = uniques_leave_out(runs, QRELS_B, "g1", k=3)
    # g1 top3 = {t1: d1 d2 d3, t2: d5 d6 d7}; g2 top3 = {t1: d2 d8 d9 d3, t2: d6 d10}
    # unique to g1: (t1,d1) rel, (t2,d5) rel, (t2,d7) rel → removed; d3 is shared with runC
    removed = set(zip(QRELS_B["topic"], QRELS_B["doc"], strict=True)) - set(
        zip(left["topic"], left["doc"], strict=True)
    )
    assert removed == {("t1", "d1"), ("t2", "d5"), ("t2", "d7")}
    left_g2 = uniques_leave_out(runs, QRELS_B, "g2", k=3)
    removed = set(zip(QRELS_B["topic"], QRELS_B["doc"], strict=True)) - set(
        zip(left_g2["topic"], left_g2["doc"], strict=True)
    )
    assert removed == {("t1", "d9"), ("t2", "d10")}  # d8 unique but not relevant
    everything = uniques_leave_out(runs, QRELS_B, "g2", k=3, relevant_only=False)
    assert len(QRELS_B) - len(everything) == 3


def _random_scores(seed: int, n_runs: int = 12, n_topics: int = 40) -> tuple[pd.DataFrame, ...]:
    rng = np.random.default_rng(seed)
    rows_a, rows_b = [], []
    for i in range(n_runs):
        for j in range(n_topics):
            value = min(1.0, max(0.0, rng.normal(0.2 + 0.01 * i, 0.1)))
            rows_a.append((f"run{i:02d}", f"t{j}", value))
            rows_b.append((f"run{i:02d}", f"t{j}", min(1.0, value + abs(rng.normal(0, 0.1)))))
    columns = ["run", "topic", "value"]
    return pd.DataFrame(rows_a, columns=columns), pd.DataFrame(rows_b, columns=columns)


def test_reusability_report_shape_and_consistency() -> None:
    a, b = _random_scores(4)
    report = reusability_report(a, b, run_top_k=_run_table(), qrels_a=QRELS_A, qrels_b=QRELS_B, k=3)
    json.dumps(report)
    assert report["n_runs"] == 12 and report["n_topics"] == 40
    mean_a, mean_b = mean_scores(a), mean_scores(b)
    assert report["kendall_tau"] == pytest.approx(goodman_kruskal_gamma(mean_a, mean_b))
    assert report["tau_b"] == pytest.approx(scipy.stats.kendalltau(mean_a, mean_b).statistic)
    assert report["tau_ap"] == pytest.approx(_trectools_tau_ap(mean_b, mean_a))
    assert set(report["per_topic_tau"]) == {"min", "median", "below_threshold"}
    first = report["runs"][0]
    assert {"run", "score_a", "rank_a", "score_b", "rank_b", "rank_change", "unjudged_a"} <= set(
        first
    )
    assert sorted(r["run"] for r in report["runs"]) == sorted(mean_a.index)
    assert all(r["unjudged_a"] == 0 for r in report["runs"] if r["run"] not in {"runA", "runB"})


def test_tau_batch_matches_scalar() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(50, 9)).astype(float)
    y = rng.integers(0, 5, size=(50, 9)).astype(float)
    batch = goodman_kruskal_gamma_matrix(x, y)
    for row in range(50):
        expected = _direct_tau_omit_ties(list(x[row]), list(y[row]))
        assert batch[row] == pytest.approx(expected, nan_ok=True)


def test_tau_bootstrap_deterministic_and_covers_estimate() -> None:
    a, b = _random_scores(9)
    first = tau_ci(a, b, n_samples=3000, seed=42)
    assert first == tau_ci(a, b, n_samples=3000, seed=42)
    assert first != tau_ci(a, b, n_samples=3000, seed=43)
    point = goodman_kruskal_gamma(mean_scores(a), mean_scores(b))
    assert first["estimate"] == pytest.approx(point)
    assert first["low"] <= point <= first["high"]
    assert first["low"] < first["high"]
    ci_b = tau_ci(a, b, method="b", n_samples=3000, seed=42)
    assert ci_b["estimate"] == pytest.approx(tau_b(mean_scores(a), mean_scores(b)))
