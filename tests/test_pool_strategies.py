"""Pooling strategies and the simulation before judging, on SQLite and PostgreSQL.

* `depth` orders a depth-k pool first: cut after the pool's size, it is today's pool and
  trectools' `topX` pool.
* `rrf` and `rbp` (sum and max) equal trectools' `TrecPoolMaker.make_pool` on the same runs.
* On a generated collection with known relevance, the adaptive strategies find more relevant
  documents than depth at the same budget, and τ rises with the budget.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_run_file

N_TOPICS = 8
N_DOCS = 400
N_RELEVANT = 60
QUALITY = [1.4, 0.2, 2.3, 0.8, 1.7, 0.5, 1.1, 2.0, 0.3, 1.0, 0.6, 1.5]  # one per run


def _relevant(rng: random.Random) -> dict[str, set[str]]:
    return {str(t): {f"d{i}" for i in rng.sample(range(N_DOCS), N_RELEVANT)}
            for t in range(1, N_TOPICS + 1)}


@pytest.fixture
def generated(db: str, tmp_path: Path) -> dict[str, set[str]]:
    """Twelve runs in four groups whose quality (how far relevant documents are lifted above
    noise) grows with the run's number; 25 relevant documents per topic, all judged."""
    from tcdb.api import run_import

    rng = random.Random(7)
    relevant = _relevant(rng)
    qrels = [(t, f"d{i}", 1 if f"d{i}" in rel else 0) for t, rel in relevant.items()
             for i in range(N_DOCS)]
    build_snapshot(tmp_path, "g", "s1", {f"d{i}": f"text {i}" for i in range(N_DOCS)},
                   {t: f"query {t}" for t in relevant}, qrels)
    for r, quality in enumerate(QUALITY):
        rows = []
        for topic, rel in relevant.items():
            scored = sorted(((quality * (f"d{i}" in rel) + rng.gauss(0, 1), f"d{i}")
                             for i in range(N_DOCS)), reverse=True)[:150]
            rows += [(topic, doc, round(score, 6)) for score, doc in scored]
        path = write_run_file(tmp_path / "runs", f"r{r:02d}", rows)
        run_import("g", "s1", [path], group=f"team{r % 4}")
    return relevant


def test_adaptive_strategies_find_more_and_tau_rises(generated: dict[str, set[str]]) -> None:
    from tcdb import api

    budgets = [80, 160, 320, 640, 1280]
    report = api.pool_simulation("g", "s1", qrels="original", budgets=budgets,
                                 strategies=["depth", "rrf", "rbp", "mtf", "maxmean"])
    assert report.n_runs == 12 and report.n_groups == 4
    assert report.relevant_total == N_TOPICS * N_RELEVANT
    rows = {(r.strategy.split(":")[0], r.budget): r.model_dump() for r in report.rows}
    for b in budgets:
        assert all(rows[(s, b)]["n_judged"] == b for s in ("depth", "mtf", "maxmean"))
    for b in budgets:
        depth_found = rows[("depth", b)]["relevant_found"]
        assert rows[("mtf", b)]["relevant_found"] > depth_found, b
        assert rows[("maxmean", b)]["relevant_found"] > depth_found, b
    for s in ("depth", "rrf", "rbp", "mtf", "maxmean"):
        taus = [rows[(s, b)]["tau_b"] for b in budgets]
        assert all(t is not None for t in taus)
        assert taus[-1] > taus[0], (s, taus)
        assert rows[(s, 1280)]["logo_tau_b"] is not None
        found = [rows[(s, b)]["relevant_found"] for b in budgets]
        assert found == sorted(found)


def test_simulation_counts_what_the_budget_buys(generated: dict[str, set[str]]) -> None:
    """Relevant found equals the relevant documents among the first `budget` of the order."""
    from tcdb import api
    from tcdb.pools.rankings import load_rankings
    from tcdb.pools.strategies import cut, make_strategy
    from tcdb.runs import get_runs

    report = api.pool_simulation("g", "s1", qrels="original", budgets=[10], strategies=["rrf"],
                                 per_topic=True, leave_out=False)
    with Database().session() as session:
        from tcdb.catalog.collections import get_snapshot

        snap = get_snapshot(session, "g", "s1")
        ids = [r.pk for r in get_runs(session, snap)]
        rankings = load_rankings(session.connection(), snap.pk, ids, "trec_eval", False)
    rrf = make_strategy("rrf")
    orders = {t: rrf.order(r, lambda d: None) for t, r in rankings.topics.items()}
    chosen = cut(orders, 10, True, rankings.topic_order())
    expected = sum(len(set(docs) & generated[t]) for t, docs in chosen.items())
    (row,) = report.rows
    assert row.relevant_found == expected
    assert row.n_judged == 10 * N_TOPICS
    assert row.logo_tau_b is None


def test_simulate_cli_table_and_json(generated: dict[str, set[str]], cli) -> None:
    code, out, err = cli("pool", "simulate", "g", "s1", "--qrels", "original", "--strategy",
                         "depth", "--strategy", "rbp:p=0.9", "--budgets", "40,80",
                         "--no-leave-out", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [(r["strategy"], r["budget"]) for r in data["rows"]] == [
        ("depth", 40), ("depth", 80), ("rbp:p=0.9,aggregate=sum", 40),
        ("rbp:p=0.9,aggregate=sum", 80)]
    code, out, err = cli("pool", "simulate", "g", "s1", "--qrels", "original", "--strategy",
                         "mtf", "--budgets", "40")
    assert code == 0, err
    assert "mtf:relevant_grade=1" in out and "τ-b" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--strategy", "nope"], "no pooling strategy 'nope'"),
    (["--strategy", "rbp:p=2"], "rbp p must be between 0 and 1"),
    (["--strategy", "rbp:q=1"], "'q=1' is not key=value with a parameter of rbp"),
    (["--budgets", "0"], "'0' is not a budget"),
    (["--measure", "NumRel"], "--measure: NumRel does not rank systems"),
    (["--measure", "NumQ"], "--measure: NumQ does not rank systems"),
])
def test_simulate_bad_options(generated: dict[str, set[str]], cli, args: list[str],
                              message: str) -> None:
    base = ["pool", "simulate", "g", "s1", "--qrels", "original"]
    if "--budgets" not in args:
        base += ["--budgets", "10"]
    code, _, err = cli(*base, *args)
    assert code != 0
    assert message in " ".join(err.split())


def test_api_pool_simulation_frame(generated: dict[str, set[str]]) -> None:
    from tcdb import api

    frame = api.pool_simulation("g", "s1", qrels="original", budgets=[40, 80],
                                strategies="depth", leave_out=False).to_frame()
    report = api.pool_simulation("g", "s1", qrels="original", budgets="40,80",
                                 strategies=["depth"], leave_out=False)
    assert frame.to_dict("records") == [r.model_dump() for r in report.rows]
    assert list(frame["budget"]) == [40, 80]


@pytest.mark.parametrize("measure", ["AP", "nDCG@10", "P@5", "RR", "Rprec", "R@20", "Bpref"])
def test_cut_runs_score_alike_on_every_subset_of_the_qrels(measure: str) -> None:
    """Runs cut after their last relevant document (complete qrels) score the same as whole
    runs on any subset of the complete qrels; tied scores included. Bpref is left whole."""
    from tcdb.pools.simulation import cut_after_last_relevant, mean_scores

    rng = random.Random(3)
    qrels = {str(t): {f"d{i}": rng.choice([0, 0, 0, 1, 2]) for i in range(60)}
             for t in range(1, 6)}
    runs = {f"r{r}": {str(t): {f"d{i}": float(rng.choice(range(8)))
                               for i in rng.sample(range(80), 40)} for t in range(1, 6)}
            for r in range(4)}
    cut = cut_after_last_relevant(runs, qrels, measure)
    if measure == "Bpref":
        assert cut is runs
    else:
        assert sum(len(d) for run in cut.values() for d in run.values()) < 4 * 5 * 40
    for _ in range(5):
        subset = {t: {d: g for d, g in docs.items() if rng.random() < 0.5}
                  for t, docs in qrels.items()}
        subset = {t: docs for t, docs in subset.items() if docs}
        assert mean_scores(cut, subset, measure, 5) == mean_scores(runs, subset, measure, 5)
