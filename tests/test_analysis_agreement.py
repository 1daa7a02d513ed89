"""KTU and RBO (`tcdb.analysis.ranking_agreement`) against repro_eval 0.5.0 on random rankings, and
the cases repro_eval cannot take (a missing ranking, one document)."""

from __future__ import annotations

import random
from collections import OrderedDict

import pytest
from repro_eval.measure.document_order import KTU, RBO

from tcdb.analysis.ranking_agreement import ktu, ranking_agreement, rbo


def _run(rankings: dict[str, list[str]]) -> dict[str, OrderedDict[str, float]]:
    return {t: OrderedDict((d, float(len(docs) - r)) for r, d in enumerate(docs))
            for t, docs in rankings.items()}


@pytest.mark.parametrize("seed", range(5))
def test_random_rankings_equal_repro_eval(seed: int) -> None:
    rng = random.Random(seed)
    pool = [f"https://x/{i:04d}" for i in range(300)]
    first, later = {}, {}
    for t in range(12):
        n = rng.choice([2, 3, 10, 50, 100])
        first[str(t)] = rng.sample(pool, n)
        overlap = rng.sample(first[str(t)], rng.randint(0, n))
        rest = rng.sample([d for d in pool if d not in overlap], n - len(overlap))
        later[str(t)] = rng.sample(overlap + rest, n)
    for depth, p in ((1000, 0.8), (20, 0.95), (5, 0.5)):
        result = ranking_agreement(first, later, list(first), depth=depth, p=p)
        expected_ktu = KTU(_run(first), _run(later), trim_thresh=depth, per_topic=True)
        for row in result["topics"]:
            t = row["topic"]
            assert row["ktu"] == pytest.approx(expected_ktu[t], abs=1e-9, rel=0)
            expected_rbo = RBO(_run({t: first[t]}), _run({t: later[t]}), p=p,
                               depth=row["rbo_depth"], pbar=False, per_topic=True)[t]
            assert row["rbo"] == pytest.approx(expected_rbo, abs=1e-9, rel=0)
        assert result["n_ktu"] == result["n_rbo"] == 12


def test_what_repro_eval_cannot_take() -> None:
    result = ranking_agreement({"a": ["d1", "d2"], "b": ["d1"], "c": ["d1", "d2"]},
                               {"a": ["d2", "d1"], "b": ["d1"]}, ["a", "b", "c"], depth=10)
    a, b, c = result["topics"]
    assert (a["ktu"], a["common"], a["rbo_depth"]) == (-1.0, 2, 2)
    assert b["ktu"] is None and b["rbo"] == 1.0 and "two documents" in b["reason"]
    assert c["ktu"] is None and c["rbo"] is None and c["reason"] == \
        "no ranking in the later snapshot"
    assert (result["n_ktu"], result["n_rbo"]) == (1, 2)
    assert result["mean_ktu"] == -1.0 and result["mean_rbo"] == pytest.approx((a["rbo"] + 1) / 2)
    assert ktu(["x", "y", "z"], ["x", "y", "z"]) == 1.0
    assert rbo(["x"], ["y"], 0.8, 3) == 0.0
    with pytest.raises(ValueError, match="p must lie"):
        ranking_agreement({}, {}, [], p=1.0)
