"""The fast pool simulation equals the straightforward one, on SQLite and PostgreSQL.

`tests/pool_simulation_reference.py` keeps the straightforward simulation: each left-out
group's orders computed again from the reduced rankings, one ir_measures evaluation per
(runs, pooled qrels set), move-to-front and MaxMean with numpy over all runs at each step, the
round robin taken document by document. On a generated collection with real-data quirks —
tied scores, graded and unjudged documents, a topic without relevant documents, runs that skip
a topic or retrieve little, a run without a group — the rows and every run's means (all runs
and leave-one-group-out) must be equal, not close.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database
from tests import pool_simulation_reference as reference
from tests.builders import build_snapshot, write_run_file

pytestmark = pytest.mark.slow

N_TOPICS = 6
N_DOCS = 240
STRATEGIES = ["depth", "rrf", "rbp", "rbp:p=0.9,aggregate=max", "mtf",
              "maxmean:relevant_grade=2"]


@pytest.fixture
def collection(db: str, tmp_path: Path) -> str:
    """Eleven runs in four groups and one without a group; grades 0–2; topic 6 has no
    relevant document; scores rounded to one decimal, so many tie."""
    from tcdb.api import run_import

    rng = random.Random(24)
    topics = [str(t) for t in range(1, N_TOPICS + 1)]
    grade = {t: {f"d{i}": (0 if t == "6" else rng.choice([0, 0, 0, 0, 1, 1, 2]))
                 for i in rng.sample(range(N_DOCS), 150)} for t in topics}
    qrels = [(t, d, g) for t, docs in grade.items() for d, g in docs.items()]
    build_snapshot(tmp_path, "f", "s1", {f"d{i}": f"text {i}" for i in range(N_DOCS)},
                   {t: f"query {t}" for t in topics}, qrels)
    for r in range(11):
        quality = rng.uniform(0.0, 2.5)
        rows = []
        for t in topics:
            if r % 4 == 3 and t == "2":
                continue  # a run that skips a topic
            depth = 15 if r == 5 else rng.choice([60, 120, 200])
            scored = sorted(((round(quality * grade[t].get(f"d{i}", 0) + rng.gauss(0, 1), 1),
                              f"d{i}") for i in range(N_DOCS)), reverse=True)[:depth]
            rows += [(t, doc, score) for score, doc in scored]
        path = write_run_file(tmp_path / "runs", f"r{r:02d}", rows)
        run_import("f", "s1", [path], group=None if r == 10 else f"team{r % 4}")
    return "f"


def _both(monkeypatch: pytest.MonkeyPatch, **kwargs: Any
          ) -> tuple[Any, tuple[Any, ...], tuple[list[Any], dict[str, Any]]]:
    """The `pool_simulation` operation's result, the inputs it gave the simulation, and the
    fast simulation's own result on them."""
    import tcdb.pools.simulate as simulate
    from tcdb import api

    seen: dict[str, Any] = {}
    fast = simulate.simulate_in_processes

    def keep(*args: Any) -> tuple[list[Any], dict[str, Any]]:
        seen["args"], seen["result"] = args[:11], fast(*args)  # all but `workers`
        return seen["result"]

    monkeypatch.setattr(simulate, "simulate_in_processes", keep)
    report = api.pool_simulation("f", "s1", qrels="original", budgets=kwargs.pop("budgets"),
                                 strategies=STRATEGIES, **kwargs)
    return report, seen["args"], seen["result"]


@pytest.mark.parametrize(("measure", "per_topic", "budgets"), [
    ("AP", False, [7, 40, 150, 600, 5000]),
    ("nDCG@10", False, [25, 300]),
    ("P@5", True, [3, 30]),
    ("Bpref", False, [40, 400]),
    ("RR", True, [10, 1000]),
])
def test_fast_simulation_equals_the_straightforward_one(
        collection: str, monkeypatch: pytest.MonkeyPatch, measure: str, per_topic: bool,
        budgets: list[int]) -> None:
    report, args, (rows, context) = _both(monkeypatch, budgets=budgets, measure=measure,
                                          per_topic=per_topic)
    expected_rows, expected = reference.simulate_strategies(*args)
    assert [r.model_dump() for r in report.rows] == [r.model_dump() for r in rows] == expected_rows
    assert context["full_means"] == expected["full_means"]
    assert context["means"] == expected["means"]
    assert context["logo_means"] == expected["logo_means"]
    assert report.n_groups == 5 and report.n_runs == 11
    # the generated case exercises what it should: leave-out changes some pools and scores
    assert any(context["logo_means"][k] != context["means"][k] for k in context["means"])
    assert len({r.relevant_found for r in rows}) > 3


def test_worker_processes_give_the_same_rows(
        collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Orders and pooled subsets made per strategy, runs scored per share of the topics, in
    two worker processes: the same rows and means as the straightforward simulation."""
    report, args, (rows, context) = _both(monkeypatch, budgets=[7, 40, 600], measure="AP",
                                          per_topic=False, workers=2)
    expected_rows, expected = reference.simulate_strategies(*args)
    assert [r.model_dump() for r in report.rows] == [r.model_dump() for r in rows] == expected_rows
    assert context["means"] == expected["means"]
    assert context["logo_means"] == expected["logo_means"]


def test_leave_out_orders_equal_orders_of_the_reduced_rankings(collection: str) -> None:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.pools.rankings import load_rankings
    from tcdb.pools.strategies import make_strategy
    from tcdb.pools.strategies.leave_out import orders_without
    from tcdb.queries.qrels import qrels_of
    from tcdb.runs import get_runs

    with Database().session() as session:
        snap = get_snapshot(session, "f", "s1")
        runs = get_runs(session, snap)
        rankings = load_rankings(session.connection(), snap.pk, [r.pk for r in runs],
                                 "trec_eval", False)
        qrels = qrels_of(session.connection(), get_qrels_set(session, snap, "original").pk)
    left_out = [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7], [10], [], list(range(11))]
    checked = 0
    for spec in STRATEGIES:
        strategy = make_strategy(spec)
        for topic, ranking in rankings.topics.items():
            grades = qrels.get(topic, {})

            def judge(doc: str, grades: dict[str, int] = grades) -> int:
                return grades.get(doc, 0)

            for limit in (None, 9, 70):
                fast = orders_without(strategy, ranking, left_out, judge, limit)
                for runs_out, got in zip(left_out, fast, strict=True):
                    keep = [i not in runs_out for i in range(len(ranking.runs))]
                    want = reference.order(strategy, ranking.without(keep), judge, limit)
                    assert list(got) == want, (spec, topic, runs_out, limit)
                    checked += len(want)
            assert list(strategy.order(ranking, judge, None)) == reference.order(
                strategy, ranking, judge, None)
    assert checked > 10_000


def test_rankings_and_runs_from_one_read_equal_two_reads(collection: str) -> None:
    """What the simulation reads once (trec_eval's order, whole runs) equals `load_rankings`
    and `read_runs` each reading the entries."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.pools.rankings import load_rankings, load_rankings_and_runs
    from tcdb.queries.runs import read_runs
    from tcdb.runs import get_runs

    with Database().session() as session:
        snap = get_snapshot(session, "f", "s1")
        run_ids = [r.pk for r in get_runs(session, snap)]
        conn = session.connection()
        rankings, runs = load_rankings_and_runs(conn, snap.pk, run_ids)
        expected = load_rankings(conn, snap.pk, run_ids, "trec_eval", False)
        expected_runs = dict(read_runs(conn, snap.pk, run_ids))
    assert runs == expected_runs
    assert (rankings.run_ids, rankings.topic_ids, rankings.doc_ids) == (
        expected.run_ids, expected.topic_ids, expected.doc_ids)
    assert rankings.topics.keys() == expected.topics.keys()
    for topic, ranking in rankings.topics.items():
        for got, want in zip(ranking.runs, expected.topics[topic].runs, strict=True):
            assert list(got.docs) == list(want.docs)
            assert list(got.ranks) == list(want.ranks)
    assert sum(len(r.docs) for t in rankings.topics.values() for r in t.runs) > 1000


def test_round_robin_lengths_equal_the_document_by_document_cut() -> None:
    from tcdb.pools.strategies import cut

    rng = random.Random(5)
    for _ in range(3000):
        topics = [f"t{i}" for i in range(rng.randint(0, 7))]
        orders = {t: [f"d{j}" for j in range(rng.choice([0, 1, 2, 3, 6, 11, 30]))]
                  for t in topics if rng.random() < 0.9}
        order = rng.sample(topics, len(topics))
        budget, per_topic = rng.randint(0, 80), rng.random() < 0.3
        assert cut(orders, budget, per_topic, order) == reference.cut(orders, budget,
                                                                       per_topic, order)


@pytest.mark.parametrize("measure", ["AP", "nDCG@10", "P@5", "RR", "Rprec", "R@20", "Bpref",
                                     "Judged@10", "nDCG(judged_only=True)@10", "AP(rel=2)",
                                     "RR@10"])
def test_pooled_scores_equal_one_evaluation_per_subset(measure: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Many pooled subsets scored together equal `mean_scores` on each subset alone; a small
    `ENTRIES_PER_CALL` makes them several evaluator calls."""
    from tcdb.pools import pooled_scores
    from tcdb.pools.pooled_scores import PooledScores
    from tcdb.pools.simulation import mean_scores

    monkeypatch.setattr(pooled_scores, "ENTRIES_PER_CALL", 150)
    rng = random.Random(8)
    qrels = {str(t): {f"d{i}": rng.choice([0, 0, 0, 1, 2]) for i in range(60)}
             for t in range(1, 6)}
    qrels["5"] = {d: 0 for d in qrels["5"]}  # judged, nothing relevant
    runs = {f"r{r}": {str(t): {f"d{i}": float(rng.choice(range(8)))
                               for i in rng.sample(range(80), rng.choice([3, 40]))}
                      for t in range(1, 7) if (r, t) != (2, 3)} for r in range(5)}
    scores = PooledScores(runs, qrels, measure, 5, workers=2 if measure in ("AP", "Bpref")
                          else 1)  # two measures also scored in shares of the topics
    wanted = []
    for _ in range(12):
        orders = {t: rng.sample(list(docs) + [f"x{i}" for i in range(5)], 40)
                  for t, docs in qrels.items() if rng.random() < 0.9}
        cuts = [{t: rng.choice([0, 1, 5, 20, 45]) for t in orders} for _ in range(3)]
        tags = rng.sample(sorted(runs), rng.randint(1, 5))
        handles = scores.add(orders, cuts, tags)
        for (handle, found), lengths in zip(handles, cuts, strict=True):
            subset = {t: {d: qrels[t][d] for d in orders[t][:n] if d in qrels[t]}
                      for t, n in lengths.items()}
            subset = {t: docs for t, docs in subset.items() if docs}
            assert found == sum(g >= 1 for docs in subset.values() for g in docs.values())
            wanted.append((handle, subset, tags))
    for handle, subset, tags in wanted:
        alone = mean_scores({t: runs[t] for t in tags}, subset, measure, 5)
        assert scores.means(handle) == alone


def test_score_order_is_score_descending_then_id_in_byte_order() -> None:
    """The run order `PooledScores` renames by: ties (many here) by document id as its UTF-8
    bytes compare, the order trec_eval's renaming relies on."""
    from tcdb.pools.pooled_scores import _score_order

    rng = random.Random(35)
    pool = [f"d{i}" for i in range(50)] + ["é", "Z", "a", "ä", "😀", "bé", "b", "~x"]
    for _ in range(500):
        docs = {d: rng.choice([0.0, -0.0, 1.0, 2.5, rng.random()])
                for d in rng.sample(pool, rng.randint(1, 40))}
        names, rising = _score_order(docs)
        assert names == sorted(docs, key=lambda d: (-docs[d], d.encode()))
        assert rising.tolist() == [-docs[d] for d in names]
