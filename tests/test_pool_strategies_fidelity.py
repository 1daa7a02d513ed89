"""Pooling strategies equal the reference tools on the same runs, on SQLite and PostgreSQL.

* `depth` cut after a depth-k pool's size is that pool (`build_pool`), in trec_eval's and
  trectools' tie orders, and trectools' `topX` pool.
* `rrf` and `rbp` (sum and max, two p) equal `TrecPoolMaker().make_pool(strategy=…)`, which
  reads the runs' rank column: the runs here rank 1, 2, … in file order, with scores that
  disagree and tie, and tcdb reads them with `--tie-order file-rank`.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_run_file

N_TOPICS = 5
N_DOCS = 300
N_RUNS = 6


def _doc(i: int) -> str:
    return f"{'D' if i % 5 == 0 else 'd'}{i}"


@pytest.fixture
def runs(db: str, tmp_path: Path) -> dict[str, Path]:
    from tcdb.api import run_import

    rng = random.Random(11)
    build_snapshot(tmp_path, "c", "s1", {_doc(i): f"text {i}" for i in range(N_DOCS)},
                   {str(t): f"query {t}" for t in range(1, N_TOPICS + 1)})
    paths = {}
    for r in range(N_RUNS):
        rows = []
        for topic in range(1, N_TOPICS + 1 if r % 3 else N_TOPICS):  # some skip a topic
            for doc in rng.sample(range(N_DOCS), rng.choice([40, 90, 150])):
                rows.append((str(topic), _doc(doc), float(rng.choice([1, 2, 3]))))
        paths[f"run{r}"] = write_run_file(tmp_path / "runs", f"run{r}", rows)
    run_import("c", "s1", list(paths.values()))
    return paths


def _orders(spec: str, tie_order: str) -> dict[str, list[str]]:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.pools.rankings import load_rankings
    from tcdb.pools.strategies import make_strategy
    from tcdb.runs import get_runs

    strategy = make_strategy(spec)
    with Database().session() as session:
        snap = get_snapshot(session, "c", "s1")
        ids = [r.pk for r in get_runs(session, snap)]  # by tag: trectools' order below
        rankings = load_rankings(session.connection(), snap.pk, ids, tie_order, False)
    return {t: strategy.order(r, lambda d: None) for t, r in rankings.topics.items()}


def _trectools(paths: dict[str, Path], **kwargs: object) -> dict[str, set[str]]:
    from trectools import TrecPoolMaker, TrecRun

    pool = TrecPoolMaker().make_pool([TrecRun(str(paths[t])) for t in sorted(paths)],
                                     **kwargs).pool
    return {str(t): set(docs) for t, docs in pool.items() if docs}


@pytest.mark.parametrize("tie_order", ["trec_eval", "docid-asc"])
@pytest.mark.parametrize("k", [3, 10, 40])
def test_depth_order_starts_with_the_depth_k_pool(runs: dict[str, Path], tie_order: str,
                                                  k: int) -> None:
    from tcdb.api import pool_build
    from tcdb.pools import pool_documents

    pool_build("c", "s1", "p", depth=k, all_runs=True, tie_order=tie_order)
    pool = pool_documents(Database(), "p")
    orders = _orders("depth", tie_order)
    assert set(orders) == set(pool)
    for topic, docs in pool.items():
        assert set(orders[topic][:len(docs)]) == docs, topic
        assert len(orders[topic]) > len(docs)  # the order goes on below depth k
    if tie_order == "docid-asc":
        reference = _trectools(runs, strategy="topX", topX=k)
        assert {t: set(o[:len(pool[t])]) for t, o in orders.items()} == reference


@pytest.mark.parametrize(("spec", "kwargs"), [
    ("rrf", {"strategy": "rrf"}),
    ("rrf:k=10", {"strategy": "rrf", "rrf_den": 10}),
    ("rbp", {"strategy": "rbp"}),
    ("rbp:p=0.95", {"strategy": "rbp", "rbp_p": 0.95}),
    ("rbp:p=0.5,aggregate=max", {"strategy": "rbp", "rbp_p": 0.5, "rbp_strategy": "max"}),
])
@pytest.mark.parametrize("top", [5, 25, 100])
def test_rrf_and_rbp_equal_trectools(runs: dict[str, Path], spec: str,
                                     kwargs: dict[str, object], top: int) -> None:
    orders = _orders(spec, "file-rank")
    reference = _trectools(runs, topX=top, **kwargs)
    assert {t: set(o[:top]) for t, o in orders.items()} == reference
