"""Budgeted pools on SQLite and PostgreSQL: `pool build --strategy NAME --budget N
[--per-topic]` keeps the strategy's order, so an export can be cut at any smaller budget.

The collection: eight topics, twelve runs of growing quality in four groups, 60 relevant
documents per topic (`original` judges every document; `partial` only some).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.errors import ConflictError, FieldError
from tcdb.operations import Database
from tests.builders import build_snapshot, pool_entries, write_qrels_file, write_run_file

N_TOPICS = 6
N_DOCS = 200


@pytest.fixture
def coll(db: str, tmp_path: Path) -> dict[str, set[str]]:
    from tcdb.api import run_import
    from tcdb.judging.qrels import import_qrels

    rng = random.Random(3)
    relevant = {str(t): {f"d{i}" for i in rng.sample(range(N_DOCS), 30)}
                for t in range(1, N_TOPICS + 1)}
    qrels = [(t, f"d{i}", int(f"d{i}" in rel)) for t, rel in relevant.items()
             for i in range(N_DOCS)]
    build_snapshot(tmp_path, "b", "s1", {f"d{i}": f"text {i}" for i in range(N_DOCS)},
                   {t: f"query {t}" for t in relevant}, qrels)
    partial = [row for row in qrels if int(row[1][1:]) % 4 == 0]
    import_qrels(Database(),
                 "b", "s1", "partial", write_qrels_file(tmp_path / "partial.txt", partial))
    for r, quality in enumerate([0.3, 1.8, 0.9, 2.4, 0.6, 1.2]):
        rows = []
        for topic, rel in relevant.items():
            scored = sorted(((quality * (f"d{i}" in rel) + rng.gauss(0, 1), f"d{i}")
                             for i in range(N_DOCS)), reverse=True)[:80]
            rows += [(topic, doc, round(score, 6)) for score, doc in scored]
        run_import("b", "s1", [write_run_file(tmp_path / "runs", f"r{r}", rows)],
                   group=f"team{r % 3}")
    return relevant


def _positions(name: str) -> dict[str, list[str]]:
    """Topic → the pool's documents in their stored order."""
    with Database().session() as session:
        rows = session.connection().execute(text(
            "SELECT st.external_id, sd.external_id, pe.position, pe.round FROM pool_entry pe "
            "JOIN pool p ON p.id = pe.pool_id JOIN snapshot_topic st ON st.snapshot_id = "
            "p.snapshot_id AND st.topic_id = pe.topic_id JOIN snapshot_document sd ON "
            "sd.snapshot_id = p.snapshot_id AND sd.document_id = pe.document_id "
            "WHERE p.name = :n"), {"n": name}).tuples().all()
    assert {r for *_, r in rows} == {1}
    result: dict[str, list[tuple[int, str]]] = {}
    for topic, doc, position, _ in rows:
        result.setdefault(topic, []).append((position, doc))
    return {t: [d for _, d in sorted(v)] for t, v in result.items()}


def _expected(spec: str) -> dict[str, list[str]]:
    """The strategy's order computed apart from the build, judge knowing nothing."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.pools.rankings import load_rankings
    from tcdb.pools.strategies import make_strategy
    from tcdb.runs import get_runs

    with Database().session() as session:
        snap = get_snapshot(session, "b", "s1")
        ids = [r.pk for r in get_runs(session, snap)]
        rankings = load_rankings(session.connection(), snap.pk, ids, "trec_eval", False)
    strategy = make_strategy(spec)
    return {t: strategy.order(r, lambda d: None) for t, r in rankings.topics.items()}


def test_budget_in_total_is_a_round_robin_prefix(coll: dict[str, set[str]]) -> None:
    from tcdb.api import pool_build

    report = pool_build("b", "s1", "rrf100", depth=None, all_runs=True, strategy="rrf", budget=100)
    assert report.n_documents == 100 and report.strategy == "rrf:k=60.0"
    assert report.budget == 100 and report.budget_per_topic is False
    stored = _positions("rrf100")
    assert sorted(len(d) for d in stored.values()) == [16, 16, 17, 17, 17, 17]
    expected = _expected("rrf")
    for topic, docs in stored.items():
        assert docs == expected[topic][:len(docs)]
    entries = pool_entries("rrf100")
    assert all(rank >= 1 and 1 <= n <= 6 for rank, n in entries.values())


def test_budget_per_topic_and_export_cut(coll: dict[str, set[str]], tmp_path: Path,
                                         cli) -> None:
    code, out, err = cli("pool", "build", "b", "s1", "rbp10", "--all-runs", "--strategy",
                         "rbp:p=0.9", "--budget", "10", "--per-topic", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_documents"] == 10 * N_TOPICS and report["size"]["min"] == 10
    expected = _expected("rbp:p=0.9")
    assert _positions("rbp10") == {t: o[:10] for t, o in expected.items()}
    code, out, err = cli("pool", "export", "rbp10", "--format", "trec", "--out",
                         str(tmp_path / "cut.txt"), "--budget", "4", "--json")
    assert code == 0, err
    assert json.loads(out)["n_documents"] == 4 * N_TOPICS
    lines = [line.split() for line in (tmp_path / "cut.txt").read_text().splitlines()]
    exported: dict[str, set[str]] = {}
    for topic, _, doc, *_ in lines:
        exported.setdefault(topic, set()).add(doc)
    assert exported == {t: set(o[:4]) for t, o in expected.items()}


def test_adaptive_remainder_pool_learns_from_the_base(coll: dict[str, set[str]]) -> None:
    """mtf over a remainder: nothing `partial` judged is pooled; what it judged steers it, so
    the pool differs from mtf knowing nothing and finds more relevant documents."""
    from tcdb.api import pool_build
    from tcdb.pools import pool_documents

    pool_build("b", "s1", "rest", depth=None, all_runs=True, strategy="mtf", budget=60,
               exclude_judged="partial")
    rest = pool_documents(Database(), "rest")
    assert sum(map(len, rest.values())) == 60
    assert all(int(d[1:]) % 4 for docs in rest.values() for d in docs)
    blind = _expected("mtf")
    blind_cut = {t: [d for d in o if int(d[1:]) % 4][:10] for t, o in blind.items()}
    found = sum(len(docs & coll[t]) for t, docs in rest.items())
    found_blind = sum(len(set(docs) & coll[t]) for t, docs in blind_cut.items())
    assert rest != {t: set(d) for t, d in blind_cut.items()}
    assert found > found_blind


def test_same_build_is_unchanged_and_other_budget_conflicts(coll: dict[str, set[str]]) -> None:
    from tcdb.api import pool_build

    first = pool_build("b", "s1", "m", depth=None, all_runs=True, strategy="maxmean", budget=30)
    again = pool_build("b", "s1", "m", depth=None, all_runs=True, strategy="maxmean", budget=30)
    assert (first.status, again.status) == ("built", "unchanged")
    assert again.n_documents == 30
    with pytest.raises(ConflictError):
        pool_build("b", "s1", "m", depth=None, all_runs=True, strategy="maxmean", budget=31)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"strategy": "rrf"}, "^budget: .* need a budget"),
    ({"budget": 0, "strategy": "rrf"}, "^budget: budget must be at least 1"),
    ({"budget": 5, "max_per_topic": 3}, "^max_per_topic: .*not by a maximum per topic"),
    ({"budget": 5, "strategy": "bandit"}, "^strategy: no pooling strategy 'bandit'"),
    ({}, "^depth: give a depth K"),
])
def test_budget_errors_write_nothing(coll: dict[str, set[str]], kwargs: dict,
                                     match: str) -> None:
    from tcdb.api import pool_build, pools

    with pytest.raises(FieldError, match=match):
        pool_build("b", "s1", "bad", depth=None, all_runs=True, **kwargs)
    assert pools().pools == []


def test_export_budget_needs_a_budgeted_pool(coll: dict[str, set[str]], tmp_path: Path) -> None:
    from tcdb.api import pool_build, pool_export

    pool_build("b", "s1", "d5", depth=5, all_runs=True)
    with pytest.raises(FieldError, match="^budget: .*keeps no judging order"):
        pool_export("d5", format="trec", out=tmp_path / "x.txt", budget=3)


def _judge_round(name: str, round_number: int, relevant: dict[str, set[str]],
                 folder: Path) -> int:
    """Export one round, judge it from the known relevance, import the judgments."""
    from tcdb.api import pool_export, pool_import_judgments

    batch = folder / f"{name}-r{round_number}.txt"
    pool_export(name, format="trec", out=batch, round=round_number)
    rows = [line.split()[:3] for line in batch.read_text().splitlines()]
    write_qrels_file(folder / f"{name}-j{round_number}.txt",
                     [(t, d, int(d in relevant[t])) for t, _, d in rows])
    pool_import_judgments(name, folder / f"{name}-j{round_number}.txt", assessor="alice")
    return len(rows)


def test_rounds_learn_until_the_budget_is_spent(coll: dict[str, set[str]],
                                                tmp_path: Path, cli) -> None:
    from tcdb.api import pool_build, pool_next_round
    from tcdb.pools import pool_documents

    pool_build("b", "s1", "r", depth=None, all_runs=True, strategy="mtf", budget=60, batch=12)
    assert _judge_round("r", 1, coll, tmp_path) == 12
    for round_number in range(2, 6):
        report = pool_next_round("r", batch=12)
        assert report.round == round_number and report.n_added == 12
        with pytest.raises(ConflictError, match="not judged yet"):
            pool_next_round("r", batch=12)
        assert _judge_round("r", round_number, coll, tmp_path) == 12
    with pytest.raises(ConflictError, match="spent its budget of 60"):
        pool_next_round("r", batch=12)
    pooled = pool_documents(Database(), "r")
    assert sum(map(len, pooled.values())) == 60
    # judged in rounds, the strategy finds more than blind (nothing known) at the same budget
    blind = {t: o[:10] for t, o in _expected("mtf").items()}
    found = sum(len(docs & coll[t]) for t, docs in pooled.items())
    assert found > sum(len(set(docs) & coll[t]) for t, docs in blind.items())
    # one qrels file with every round's judgments, each with its round as the iteration
    code, _, err = cli("qrels", "export", "b", "s1", "r", "--out", str(tmp_path / "r.qrels"))
    assert code == 0, err
    lines = [line.split() for line in (tmp_path / "r.qrels").read_text().splitlines()]
    assert len(lines) == 60
    assert sorted({int(it) for _, it, _, _ in lines}) == [1, 2, 3, 4, 5]
    positions = _positions_rounds("r")
    for topic, rows in positions.items():
        assert [p for p, _ in rows] == list(range(1, len(rows) + 1)), topic
        assert [r for _, r in rows] == sorted(r for _, r in rows)


def _positions_rounds(name: str) -> dict[str, list[tuple[int, int]]]:
    with Database().session() as session:
        rows = session.connection().execute(text(
            "SELECT pe.topic_id, pe.position, pe.round FROM pool_entry pe JOIN pool p ON "
            "p.id = pe.pool_id WHERE p.name = :n ORDER BY pe.topic_id, pe.position"),
            {"n": name}).tuples().all()
    result: dict[str, list[tuple[int, int]]] = {}
    for topic, position, round_number in rows:
        result.setdefault(str(topic), []).append((position, round_number))
    return result


def test_next_round_needs_a_budgeted_pool(coll: dict[str, set[str]]) -> None:
    from tcdb.api import pool_build, pool_next_round

    pool_build("b", "s1", "d3", depth=3, all_runs=True)
    with pytest.raises(FieldError, match="depth-k pool"):
        pool_next_round("d3", batch=5)
    with pytest.raises(FieldError, match="^batch: batch must be at least 1"):
        pool_next_round("d3", batch=0)


def test_show_names_the_strategy_and_budget(coll: dict[str, set[str]], cli) -> None:
    from tcdb.api import pool_build

    pool_build("b", "s1", "rb", depth=None, all_runs=True, strategy="rbp:aggregate=max", budget=25)
    code, out, err = cli("pool", "show", "rb")
    assert code == 0, err
    assert "rbp:p=0.8,aggregate=max, budget 25" in " ".join(out.split())
    code, out, err = cli("pool", "show", "rb", "--json")
    shown = json.loads(out)
    assert (shown["strategy"], shown["budget"], shown["budget_per_topic"]) == (
        "rbp:p=0.8,aggregate=max", 25, False)
    assert shown["n_documents"] == 25


def test_rounds_from_the_command_line(coll: dict[str, set[str]], tmp_path: Path, cli) -> None:
    code, out, err = cli("pool", "build", "b", "s1", "cr", "--all-runs", "--strategy",
                         "maxmean", "--budget", "4", "--per-topic", "--batch", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["n_documents"] == 2 * N_TOPICS
    code, _, err = cli("pool", "next-round", "cr", "--batch", "2")
    assert code != 0 and "not judged yet" in err
    _judge_round("cr", 1, coll, tmp_path)
    code, out, err = cli("pool", "next-round", "cr", "--batch", "5", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["round"], report["n_added"], report["n_documents"]) == (
        2, 2 * N_TOPICS, 4 * N_TOPICS)  # per topic, the budget of 4 caps the batch of 5
    code, out, err = cli("pool", "export", "cr", "--round", "2", "--format", "trec", "--out",
                         str(tmp_path / "r2.txt"), "--json")
    assert code == 0, err
    assert json.loads(out)["n_documents"] == 2 * N_TOPICS
    code, _, err = cli("pool", "export", "cr", "--round", "3", "--format", "trec", "--out",
                       str(tmp_path / "r3.txt"))
    assert code != 0 and "no round 3" in err


def test_per_topic_rounds_stop_at_the_budget(coll: dict[str, set[str]], tmp_path: Path) -> None:
    from tcdb.api import pool_build, pool_next_round

    pool_build("b", "s1", "pt", depth=None, all_runs=True, strategy="mtf", budget=3, per_topic=True,
               batch=2)
    _judge_round("pt", 1, coll, tmp_path)
    assert pool_next_round("pt", batch=2).n_added == N_TOPICS  # one more each: 3 per topic
    _judge_round("pt", 2, coll, tmp_path)
    with pytest.raises(ConflictError, match="spent its budget of 3"):
        pool_next_round("pt", batch=2)


def test_an_adaptive_budget_without_rounds_says_it_learns_nothing(coll: dict[str, set[str]],
                                                                  cli) -> None:
    code, _, err = cli("pool", "build", "b", "s1", "mtf-once", "--all-runs", "--strategy", "mtf",
                       "--budget", "4", "--per-topic")
    assert code == 0, err
    assert "note: mtf learns from judgments as it goes; without --batch" in err
    code, _, err = cli("pool", "build", "b", "s1", "rrf-once", "--all-runs", "--strategy", "rrf",
                       "--budget", "4", "--per-topic")
    assert code == 0 and "note:" not in err, err
