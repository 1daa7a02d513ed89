"""Pools equal the reference tools on the same runs, ties included, on SQLite and PostgreSQL.

* `--tie-order docid-asc` equals trectools' `TrecPoolMaker().make_pool(..., strategy="topX")`
  per topic, for K = 10 and 100.
* `--tie-order trec_eval` equals the union of each run's top K as trec_eval sorts a run
  (score descending, then document id descending), which is the order ir_measures evaluates.

Document ids mix `D`/`d` prefixes and lengths (`d9` vs `d10`) so that byte order, not a
locale's collation, is what must match.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_run_file

N_TOPICS = 6
N_DOCS = 400
N_RUNS = 7


def _doc(i: int) -> str:
    return f"{'D' if i % 5 == 0 else 'd'}{i}"


def _runs(rng: random.Random) -> dict[str, list[tuple[str, str, int, float]]]:
    """Runs with many equal scores, ranks that ignore the scores (one with gaps between
    ranks), and missing topics."""
    runs: dict[str, list[tuple[str, str, int, float]]] = {}
    for r in range(N_RUNS):
        rows = []
        topics = range(1, N_TOPICS + 1) if r % 3 else range(1, N_TOPICS)  # some skip one
        for topic in topics:
            depth = rng.choice([60, 150, 250])
            for rank, doc in enumerate(rng.sample(range(N_DOCS), depth), start=1):
                # odd runs: heavy ties; even runs: some ties
                score = float(rng.choice([1, 2, 3, 4])) if r % 2 else round(rng.uniform(0, 5), 1)
                written = rank * 7 if r == N_RUNS - 1 else rank  # gaps: few ranks ≤ k
                rows.append((str(topic), _doc(doc), written, score))
        runs[f"run{r}"] = rows
    return runs


@pytest.fixture
def runs(db: str, tmp_path: Path) -> dict[str, Path]:
    from tcdb.api import run_import

    rng = random.Random(2024)
    docs = {_doc(i): f"text of document {i}" for i in range(N_DOCS)}
    topics = {str(t): f"query {t}" for t in range(1, N_TOPICS + 1)}
    build_snapshot(tmp_path, "c", "s1", docs, topics)
    paths = {tag: write_run_file(tmp_path / "runs", tag, rows)
             for tag, rows in _runs(rng).items()}
    run_import("c", "s1", list(paths.values()))
    return paths


@pytest.mark.parametrize("k", [10, 100])
def test_docid_asc_equals_trectools_topx(runs: dict[str, Path], k: int) -> None:
    from trectools import TrecPoolMaker, TrecRun

    from tcdb.api import pool_build
    from tcdb.pools import pool_documents

    pool_build("c", "s1", f"p{k}", depth=k, all_runs=True, tie_order="docid-asc")
    ours = pool_documents(Database(), f"p{k}")
    reference = TrecPoolMaker().make_pool([TrecRun(str(p)) for p in runs.values()],
                                          strategy="topX", topX=k).pool
    expected = {str(t): set(docs) for t, docs in reference.items() if docs}
    assert set(ours) == set(expected)
    for topic in expected:
        assert ours[topic] == expected[topic], f"topic {topic}"


def _best_positions(k: int, order: Callable[[tuple[str, float]], Any], reverse: bool
                    ) -> dict[tuple[str, str], int]:
    """(topic, doc) → its best position in any run's top k, each topic sorted by `order`."""
    best: dict[tuple[str, str], int] = {}
    for rows in _runs(random.Random(2024)).values():
        by_topic: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for topic, doc, _, score in rows:
            by_topic[topic].append((doc, score))
        for topic, entries in by_topic.items():
            ranked = sorted(entries, key=order, reverse=reverse)[:k]
            for position, (doc, _) in enumerate(ranked, start=1):
                best[(topic, doc)] = min(best.get((topic, doc), position), position)
    return best


def _pool_of(best: dict[tuple[str, str], int]) -> dict[str, set[str]]:
    pool: dict[str, set[str]] = defaultdict(set)
    for topic, doc in best:
        pool[topic].add(doc)
    return dict(pool)


@pytest.mark.parametrize("k", [10, 100])
def test_trec_eval_order_equals_trec_eval_sorting(runs: dict[str, Path], k: int) -> None:
    """trec_eval: score descending, ties by document id descending (strcmp); each document's
    best rank is its best position so sorted."""
    from tcdb.api import pool_build
    from tcdb.pools import pool_documents
    from tests.builders import pool_entries

    pool_build("c", "s1", f"t{k}", depth=k, all_runs=True)
    best = _best_positions(k, lambda e: (e[1], e[0].encode()), reverse=True)
    assert pool_documents(Database(), f"t{k}") == _pool_of(best)
    assert {key: rank for key, (rank, _) in pool_entries(f"t{k}").items()} == best


@pytest.mark.parametrize("k", [10, 100])
def test_docid_asc_best_ranks_are_positions_in_trectools_order(runs: dict[str, Path],
                                                               k: int) -> None:
    """Not only the set: each document's best rank is its position with ties by id ascending."""
    from tcdb.api import pool_build
    from tests.builders import pool_entries

    pool_build("c", "s1", f"a{k}", depth=k, all_runs=True, tie_order="docid-asc")
    best = _best_positions(k, lambda e: (-e[1], e[0].encode()), reverse=False)
    assert {key: rank for key, (rank, _) in pool_entries(f"a{k}").items()} == best


def test_docid_asc_and_trec_eval_differ_on_these_ties(runs: dict[str, Path]) -> None:
    """The ties are real: the two orders give different pools at K = 10."""
    from tcdb.api import pool_build
    from tcdb.pools import pool_documents

    pool_build("c", "s1", "asc", depth=10, all_runs=True, tie_order="docid-asc")
    pool_build("c", "s1", "desc", depth=10, all_runs=True, tie_order="trec_eval")
    assert pool_documents(Database(), "asc") != pool_documents(Database(), "desc")
