"""Persistence measures: fidelity to repro_eval 0.5.0, planted effects, bootstrap.

The repro_eval fidelity tests run on per-topic scores that repro_eval's own evaluators computed
from generated runs and qrels (`tests.repro_eval_data`), and also on Breuer et al.'s real ones
where `../shared/anchors/repro_eval` is present.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from repro_eval.measure.overall_effects import DRI, ER, mean_score
from repro_eval.measure.statistics import ttest

from tcdb.analysis.bootstrap import persistence_ci
from tcdb.analysis.persistence import per_topic_deltas, persistence_table
from tests.repro_eval_data import Anchors, sources
from tests.repro_eval_data import anchors as load_anchors

MEASURES = ["ap", "p10", "ndcg10", "ndcg100", "ndcg1000"]


@pytest.fixture(params=sources())
def anchors(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Anchors:
    """Generated per-topic scores, and the real ones where present."""
    return load_anchors(request.param, tmp_path_factory.getbasetemp() / "repro_eval")


def _column(path: Path, column: str) -> dict[int, float]:
    frame = pd.read_csv(path)
    return dict(zip(frame["Row"].astype(int), frame[column].astype(float), strict=True))


def _nested(scores: dict[int, float]) -> dict[str, dict[str, float]]:
    """repro_eval's input shape: {topic: {measure: value}}."""
    return {str(t): {"m": v} for t, v in scores.items()}


def _frame(series: dict[tuple[str, str], dict[int, float]]) -> pd.DataFrame:
    rows = [
        (system, snap, topic, value)
        for (system, snap), scores in series.items()
        for topic, value in scores.items()
    ]
    return pd.DataFrame(rows, columns=["system", "snapshot", "topic", "value"])


def _constellations(root: Path, measure: str) -> list[str]:
    base = pd.read_csv(root / f"rpd_wcrobust04_{measure}.csv", nrows=0).columns
    adv = pd.read_csv(root / f"rpd_wcrobust0405_{measure}.csv", nrows=0).columns
    base_n = {c.rsplit("_", 1)[1] for c in base if c != "Row"}
    adv_n = {c.rsplit("_", 1)[1] for c in adv if c != "Row"}
    return sorted(base_n & adv_n, key=int)


@pytest.mark.parametrize("measure", MEASURES)
def test_er_dri_pvalues_equal_repro_eval(measure: str, anchors: Anchors) -> None:
    root = anchors.scores
    org_base = _column(root / f"org_wcrobust04_{measure}.csv", "WCrobust04")
    org_adv = _column(root / f"org_wcrobust0405_{measure}.csv", "WCrobust0405")
    constellations = _constellations(root, measure)
    assert len(constellations) >= anchors.min_constellations
    for n in constellations:
        rpd_base = _column(root / f"rpd_wcrobust04_{measure}.csv", f"rpd_wcrobust04_{n}")
        rpd_adv = _column(root / f"rpd_wcrobust0405_{measure}.csv", f"rpd_wcrobust0405_{n}")
        assert set(org_base) != set(rpd_base)  # another collection, its own topics
        per_topic = _frame(
            {
                ("base", "core17"): org_base,
                ("adv", "core17"): org_adv,
                ("base", "core18"): rpd_base,
                ("adv", "core18"): rpd_adv,
            }
        )
        table = {r["system"]: r for r in persistence_table(per_topic, ["core17", "core18"], "base")}
        adv, base = table["adv"], table["base"]

        oa, ob, ra, rb = map(_nested, (org_adv, org_base, rpd_adv, rpd_base))
        assert adv["er"]["core18"] == pytest.approx(ER(oa, ob, ra, rb)["m"], abs=1e-9, rel=0)
        assert adv["delta_ri"]["core18"] == pytest.approx(DRI(oa, ob, ra, rb)["m"], abs=1e-9, rel=0)
        for record, orig, rep in ((adv, oa, ra), (base, ob, rb)):
            expected_p = ttest(orig, rep, rpd=False)["m"]
            assert record["p_value"]["core18"] == pytest.approx(expected_p, abs=1e-9, rel=0)
            arp1, arp2 = mean_score(orig)["m"], mean_score(rep)["m"]
            assert record["arp"]["core17"] == pytest.approx(arp1, abs=1e-9, rel=0)
            assert record["arp"]["core18"] == pytest.approx(arp2, abs=1e-9, rel=0)
            assert record["result_delta"]["core18"] == pytest.approx(arp1 - arp2, abs=1e-9)
            assert record["relative_drop"]["core18"] == pytest.approx((arp1 - arp2) / arp1)
        # the pivot against itself is 0/0: no ER, no ΔRI (None, shown as –)
        assert base["is_pivot"] and base["er"]["core18"] is None
        assert base["delta_ri"]["core18"] is None
        json.dumps(table)


def test_baseline_only_constellations_pvalues_equal_repro_eval(anchors: Anchors) -> None:
    """Constellations re-implemented for the baseline only still get repro_eval's p-values."""
    root = anchors.scores
    for measure in MEASURES:
        org = _column(root / f"org_wcrobust04_{measure}.csv", "WCrobust04")
        columns = pd.read_csv(root / f"rpd_wcrobust04_{measure}.csv", nrows=0).columns[1:]
        for column in columns:
            rpd = _column(root / f"rpd_wcrobust04_{measure}.csv", column)
            per_topic = _frame({("base", "s1"): org, ("base", "s2"): rpd})
            (record,) = persistence_table(per_topic, ["s1", "s2"], "base")
            expected = ttest(_nested(org), _nested(rpd), rpd=False)["m"]
            assert record["p_value"]["s2"] == pytest.approx(expected, abs=1e-9, rel=0)


def test_paired_pvalues_on_core_topics_equal_repro_eval(anchors: Anchors) -> None:
    """`paired`: repro_eval's `ttest(..., rpd=True)` (scipy's ttest_rel) on the topics both
    snapshots share — Core17's 50 and a Core18 re-implementation's 25 have 25 in common (in
    the generated data 24 and 12 have 8)."""
    from scipy import stats

    root = anchors.scores
    checked = 0
    for measure in MEASURES:
        org = _column(root / f"org_wcrobust04_{measure}.csv", "WCrobust04")
        columns = pd.read_csv(root / f"rpd_wcrobust04_{measure}.csv", nrows=0).columns[1:]
        for column in columns[:5]:
            rpd = _column(root / f"rpd_wcrobust04_{measure}.csv", column)
            per_topic = _frame({("base", "s1"): org, ("base", "s2"): rpd})
            (record,) = persistence_table(per_topic, ["s1", "s2"], "base", paired=True)
            core = [t for t in org if t in rpd]
            expected = ttest(_nested({t: org[t] for t in core}),
                             _nested({t: rpd[t] for t in core}), rpd=True)["m"]
            assert record["n_paired"]["s2"] == len(core) == anchors.n_shared_topics
            assert record["p_value_paired"]["s2"] == pytest.approx(expected, abs=1e-9, rel=0)
            assert record["p_value_paired"]["s2"] == pytest.approx(
                stats.ttest_rel([org[t] for t in core], [rpd[t] for t in core]).pvalue,
                abs=1e-12, rel=0)
            checked += 1
    assert checked == 5 * len(MEASURES)
    same = _frame({("base", "s1"): {1: 0.5, 2: 0.25}, ("base", "s2"): {1: 0.5, 2: 0.25, 3: 1.0}})
    (record,) = persistence_table(same, ["s1", "s2"], "base", paired=True)
    assert record["p_value_paired"]["s2"] == 1.0 and record["n_paired"]["s2"] == 2  # as repro_eval
    (record,) = persistence_table(same, ["s1", "s2"], "base")
    assert "p_value_paired" not in record


def _planted(factor: float, topics_1: list[str], topics_2: list[str], seed: int) -> pd.DataFrame:
    """Pivot with noisy scores; 'halving'/'keeping' systems add a constant advantage."""
    rng = np.random.default_rng(seed)
    rows = []
    for snap, topics, scale in (("s1", topics_1, 1.0), ("s2", topics_2, factor)):
        base = rng.uniform(0.2, 0.6, len(topics))
        for topic, value in zip(topics, base, strict=True):
            rows.append(("pivot", snap, topic, value))
            rows.append(("halving", snap, topic, value + 0.2 * scale))
            rows.append(("keeping", snap, topic, value + 0.2))
    return pd.DataFrame(rows, columns=["system", "snapshot", "topic", "value"])


@pytest.mark.parametrize("disjoint", [False, True])
def test_planted_effect_ratio(disjoint: bool) -> None:
    topics_1 = [f"q{i}" for i in range(40)]
    topics_2 = [f"q{i}" for i in range(25, 70)] if disjoint else topics_1
    per_topic = _planted(0.5, topics_1, topics_2, seed=3)
    table = {r["system"]: r for r in persistence_table(per_topic, ["s1", "s2"], "pivot")}
    assert table["halving"]["er"]["s2"] == pytest.approx(0.5, abs=1e-12)
    assert table["keeping"]["er"]["s2"] == pytest.approx(1.0, abs=1e-12)
    assert table["pivot"]["er"]["s2"] is None and table["pivot"]["delta_ri"]["s2"] is None
    pivot_arp = table["pivot"]["arp"]
    ri_1 = 0.2 / pivot_arp["s1"]
    ri_2 = 0.1 / pivot_arp["s2"]
    assert table["halving"]["delta_ri"]["s2"] == pytest.approx(ri_1 - ri_2, abs=1e-12)
    expected_delta = table["halving"]["arp"]["s1"] - table["halving"]["arp"]["s2"]
    assert table["halving"]["result_delta"]["s2"] == pytest.approx(expected_delta)
    deltas = per_topic_deltas(per_topic, ["s1", "s2"], "pivot")
    halving = deltas[deltas["system"] == "halving"]
    assert np.allclose(halving.loc[halving["snapshot"] == "s1", "delta"], 0.2)
    assert np.allclose(halving.loc[halving["snapshot"] == "s2", "delta"], 0.1)
    assert len(halving[halving["snapshot"] == "s2"]) == len(topics_2)
    assert set(deltas["system"]) == {"halving", "keeping"}


def test_missing_topic_counts_zero_and_zero_denominator_is_null() -> None:
    rows = [
        ("p", "s1", "a", 0.5), ("p", "s1", "b", 0.5),
        ("x", "s1", "a", 0.5), ("x", "s1", "b", 0.5),  # no improvement in s1 → ER undefined
        ("p", "s2", "a", 0.4), ("p", "s2", "b", 0.2),
        ("x", "s2", "a", 0.8),  # topic b missing → counts 0
    ]  # fmt: skip
    per_topic = pd.DataFrame(rows, columns=["system", "snapshot", "topic", "value"])
    table = {r["system"]: r for r in persistence_table(per_topic, ["s1", "s2"], "p")}
    assert table["x"]["arp"]["s2"] == pytest.approx(0.4)
    assert table["x"]["er"]["s2"] is None
    assert table["x"]["delta_ri"]["s2"] == pytest.approx(0.0 - (0.4 - 0.3) / 0.3)
    json.dumps(table)  # NaN never leaks into JSON


def test_three_snapshots_compare_each_later_with_first() -> None:
    topics = [f"q{i}" for i in range(30)]
    a = _planted(0.5, topics, topics, seed=1)
    b = _planted(0.25, topics, topics, seed=2)
    b = b[b["snapshot"] == "s2"].assign(snapshot="s3")
    per_topic = pd.concat([a, b], ignore_index=True)
    table = {r["system"]: r for r in persistence_table(per_topic, ["s1", "s2", "s3"], "pivot")}
    assert set(table["halving"]["er"]) == {"s2", "s3"}
    assert table["halving"]["er"]["s3"] == pytest.approx(0.25)
    assert set(table["pivot"]["arp"]) == {"s1", "s2", "s3"}


def test_persistence_bootstrap_deterministic_and_covers_estimate() -> None:
    topics_1 = [f"q{i}" for i in range(40)]
    topics_2 = [f"q{i}" for i in range(20, 70)]
    rng = np.random.default_rng(7)
    per_topic = _planted(0.5, topics_1, topics_2, seed=5)
    noise = rng.normal(0, 0.05, len(per_topic)) * (per_topic["system"] != "pivot")
    per_topic = per_topic.assign(value=per_topic["value"] + noise)
    first = persistence_ci(per_topic, ["s1", "s2"], "pivot", "halving", n_samples=2000, seed=11)
    again = persistence_ci(per_topic, ["s1", "s2"], "pivot", "halving", n_samples=2000, seed=11)
    other = persistence_ci(per_topic, ["s1", "s2"], "pivot", "halving", n_samples=2000, seed=12)
    assert first == again
    assert first["er"]["s2"] != other["er"]["s2"]
    table = {r["system"]: r for r in persistence_table(per_topic, ["s1", "s2"], "pivot")}
    for name, point in (
        ("er", table["halving"]["er"]["s2"]),
        ("delta_ri", table["halving"]["delta_ri"]["s2"]),
        ("result_delta", table["halving"]["result_delta"]["s2"]),
    ):
        ci = first[name]["s2"]
        assert ci["estimate"] == pytest.approx(point, abs=1e-12)
        assert ci["low"] < point < ci["high"]
    for snap in ("s1", "s2"):
        ci = first["arp"][snap]
        assert ci["estimate"] == pytest.approx(table["halving"]["arp"][snap])
        assert ci["low"] < ci["estimate"] < ci["high"]
    assert not math.isnan(first["er"]["s2"]["high"])
