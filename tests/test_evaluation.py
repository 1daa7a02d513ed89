"""Evaluation fidelity and caching, on SQLite and PostgreSQL.

Every stored per-topic value and every mean must equal ir_measures (pytrec_eval) run directly
on the files — ties, topics a run did not answer, unjudged and unknown documents included.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tcdb.errors import InputError, NotFoundError
from tcdb.operations import Database
from tcdb.schema import Evaluation, Score
from tests.builders import build_snapshot, write_qrels_file, write_run_file

MEASURES = ["nDCG", "nDCG@10", "AP", "P@10", "P@20", "Bpref", "RR", "Judged@10"]
N_DOCS = 60
TOPICS = {str(t): f"query {t}" for t in range(1, 9)}  # topic 8 is never judged


def _qrels(rng: random.Random) -> list[tuple[str, str, int]]:
    rows = []
    for topic in range(1, 8):
        judged = rng.sample(range(N_DOCS), 18)
        for i, doc in enumerate(judged):
            # topic 7 has only non-relevant judgments; others are graded 0-2
            grade = 0 if topic == 7 else rng.choice([0, 0, 1, 2])
            if topic != 7 and i == 0:
                grade = 2
            rows.append((str(topic), f"d{doc}", grade))
    return rows


def _runs(rng: random.Random) -> dict[str, list[tuple[str, str, int, float]]]:
    """Runs with ties, ranks that disagree with scores, missing topics, unjudged documents."""
    runs: dict[str, list[tuple[str, str, int, float]]] = {}
    for tag, topics, depth in [("full", range(1, 9), 30), ("ties", range(1, 8), 25),
                               ("missing", [1, 2, 8], 15), ("shallow", range(1, 8), 5),
                               ("unknown", range(1, 8), 20)]:
        rows = []
        for topic in topics:
            docs = rng.sample(range(N_DOCS), depth)
            for rank, doc in enumerate(docs, start=1):
                score = float(depth - rank) + rng.random()
                if tag == "ties":
                    score = float(rng.choice([1, 2, 3]))  # many equal scores
                doc_id = f"d{doc}"
                if tag == "unknown" and rank % 3 == 1:
                    doc_id = f"x{topic}-{rank}"  # not in the snapshot: kept unresolved
                rank_written = rank if tag != "ties" else depth - rank + 1  # ranks ignored
                rows.append((str(topic), doc_id, rank_written, score))
        runs[tag] = rows
    runs["stranger"] = [("8", "d1", 1, 1.0), ("8", "d2", 2, 0.5)]  # no qrels topic at all
    return runs


@pytest.fixture
def collection(db: str, tmp_path: Path) -> dict[str, Path]:
    """Snapshot c/s1 with qrels and six imported runs; returns the files by name."""
    from tcdb.api import run_import

    rng = random.Random(7)
    docs = {f"d{i}": f"text of document {i}" for i in range(N_DOCS)}
    qrels = _qrels(rng)
    build_snapshot(tmp_path, "c", "s1", docs, TOPICS, qrels)
    files = {"qrels": write_qrels_file(tmp_path / "qrels.txt", qrels)}
    for tag, rows in _runs(rng).items():
        files[tag] = write_run_file(tmp_path / "runs", tag, rows)
        run_import("c", "s1", [files[tag]], allow_unknown_docs=tag == "unknown")
    return files


def _reference(files: dict[str, Path], tag: str) -> tuple[dict, dict]:
    """ir_measures on the files: per-topic values (qrels topics, 0 if unanswered) and means."""
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    qrels = list(ir_measures.read_trec_qrels(str(files["qrels"])))
    run = list(ir_measures.read_trec_run(str(files[tag])))
    per_topic = {(str(m.measure), m.query_id): m.value
                 for m in ir_measures.iter_calc(measures, qrels, run)}
    means = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    return per_topic, means


def test_scores_equal_ir_measures_on_the_files(collection: dict[str, Path]) -> None:
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import score_table

    report = evaluate(Database(), "c", "s1", "original", MEASURES)
    assert report.n_computed == 6 * len(MEASURES) and not report.skipped
    means = score_table(Database(), "c", "s1", "original", MEASURES, compute=False)
    per_topic = score_table(Database(),
                            "c", "s1", "original", MEASURES, per_topic=True, compute=False)
    inter = score_table(Database(),
                        "c", "s1", "original", MEASURES, intersection=True, compute=False)
    for tag in ["full", "ties", "missing", "shallow", "unknown", "stranger"]:
        ref_topic, ref_mean = _reference(collection, tag)
        rows = per_topic[per_topic["run"] == tag]
        got = {(m, t): v for m, t, v in zip(rows["measure"], rows["topic"], rows["value"],
                                            strict=True)}
        assert set(got) == set(ref_topic), tag
        for key, value in ref_topic.items():
            assert got[key] == pytest.approx(value, abs=1e-9), (tag, key)
        for measure in MEASURES:
            row = means[(means["run"] == tag) & (means["measure"] == measure)].iloc[0]
            assert row["value"] == pytest.approx(ref_mean[measure], abs=1e-9), (tag, measure)
            assert row["n_topics"] == 7
            # intersection: the mean over the qrels topics the run answered
            answered = rows[(rows["measure"] == measure) & rows["answered"]]["value"]
            irow = inter[(inter["run"] == tag) & (inter["measure"] == measure)].iloc[0]
            if len(answered):
                assert irow["value"] == pytest.approx(answered.mean(), abs=1e-9)
            else:
                assert math.isnan(irow["value"])
    missing = per_topic[(per_topic["run"] == "missing") & (per_topic["measure"] == "AP")]
    assert sorted(missing[missing["answered"]]["topic"]) == ["1", "2"]


def test_second_call_computes_nothing_even_without_shared_topics(
    collection: dict[str, Path]
) -> None:
    from tcdb.scoring.evaluate import evaluate

    first = evaluate(Database(),
                     "c", "s1", "original", ["AP", "nDCG@10"], runs=["stranger", "full"])
    assert first.n_computed == 4 and first.n_cached == 0
    with Database().session() as session:
        n_scores = session.execute(select(func.count()).select_from(Score)).scalar_one()
        marks = session.execute(select(Evaluation.n_topics).order_by(Evaluation.n_topics)
                                ).scalars().all()
    assert marks == [0, 0, 7, 7]  # "stranger" answered no qrels topic, still marked evaluated
    second = evaluate(Database(),
                      "c", "s1", "original", ["map", "ndcg_cut_10"], runs=["stranger", "full"])
    assert second.n_computed == 0 and second.n_cached == 4 and second.n_scores == 0
    with Database().session() as session:
        assert session.execute(select(func.count()).select_from(Score)).scalar_one() == n_scores
    third = evaluate(Database(), "c", "s1", "original", ["AP", "P@10"])  # only the missing pairs
    assert third.n_cached == 2 and third.n_computed == 6 * 2 - 2


def test_measure_names_are_canonical() -> None:
    from tcdb.scoring.measures import parse_measures

    assert parse_measures(["ndcg_cut_10", "map", "P_20", "recip_rank", "bpref", "ndcg",
                           "nDCG@10", "Judged@10"]) == ["nDCG@10", "AP", "P@20", "RR", "Bpref",
                                                        "nDCG", "Judged@10"]
    with pytest.raises(InputError, match="'nonsense' is not a measure"):
        parse_measures(["nonsense"])


def test_unknown_run_or_qrels_is_named(collection: dict[str, Path]) -> None:
    from tcdb.scoring.evaluate import evaluate

    with pytest.raises(NotFoundError, match=r"no run 'nope'.*full"):
        evaluate(Database(), "c", "s1", "original", ["AP"], runs=["nope"])
    with pytest.raises(NotFoundError, match=r"no qrels set 'later'.*original"):
        evaluate(Database(), "c", "s1", "later", ["AP"])


def test_cli_evaluate_and_scores_outputs(collection: dict[str, Path], cli) -> None:
    code, out, err = cli("evaluate", "c", "s1", "--qrels", "original", "--measure", "AP",
                         "--measure", "nDCG@10", "--run", "full", "--run", "missing", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["report"]["n_computed"] == 4
    assert {(r["run"], r["measure"]) for r in data["means"]} == {
        ("full", "AP"), ("full", "nDCG@10"), ("missing", "AP"), ("missing", "nDCG@10")}
    code, out, _ = cli("evaluate", "c", "s1", "-m", "AP", "--run", "full")
    assert code == 0 and "full" in out and "reused 1" in out
    code, out, _ = cli("scores", "c", "s1", "--measure", "AP", "--json")
    rows = json.loads(out)["means"]
    assert {r["run"] for r in rows} == {"full", "ties", "missing", "shallow", "unknown",
                                        "stranger"}
    _, ref = _reference(collection, "missing")
    got = next(r for r in rows if r["run"] == "missing")
    assert got["value"] == pytest.approx(ref["AP"], abs=1e-9) and got["n_topics"] == 7
    code, out, _ = cli("scores", "c", "s1", "--measure", "AP", "--per-topic", "--csv",
                       "--run", "missing", "--intersection")
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out)))
    assert sorted(r["topic"] for r in table) == ["1", "2"]
    code, out, _ = cli("scores", "c", "s1", "--measure", "AP", "--per-topic")
    assert code == 0 and "missing" in out
    code, out, _ = cli("scores", "table", "c", "s1", "-m", "P@10")
    assert code == 0 and "P@10" in out
    code, _, err = cli("scores", "c", "s1", "--measure", "AP", "--json", "--csv")
    assert code == 1 and "choose one" in err
    code, _, err = cli("evaluate", "c", "s1", "--measure", "bogus@@")
    assert code == 1 and "--measure" in err and "bogus@@" in err


def test_later_qrels_set_via_cli_is_evaluated_separately(
    collection: dict[str, Path], tmp_path: Path, cli
) -> None:
    later = write_qrels_file(tmp_path / "later.txt", [("1", "d0", 1), ("1", "d1", 2),
                                                       ("8", "d5", 1)])
    code, out, err = cli("qrels", "import", "c", "s1", "later", later, "--kind", "original",
                         "--description", "second round", "--json")
    assert code == 0, err
    assert json.loads(out)["n_judgments"] == 3
    code, out, _ = cli("qrels", "list", "c", "--json")
    sets = {r["name"]: r for r in json.loads(out)}
    assert set(sets) == {"original", "later"} and sets["later"]["n_topics"] == 2
    code, out, _ = cli("qrels", "list")
    assert code == 0 and "later" in out
    code, out, err = cli("scores", "c", "s1", "--qrels", "later", "-m", "P@10", "--json")
    assert code == 0, err
    rows = {r["run"]: r for r in json.loads(out)["means"]}
    assert all(r["n_topics"] == 2 for r in rows.values())
    import ir_measures

    ref = ir_measures.calc_aggregate([ir_measures.P @ 10], ir_measures.read_trec_qrels(
        str(later)), ir_measures.read_trec_run(str(collection["full"])))
    assert rows["full"]["value"] == pytest.approx(ref[ir_measures.P @ 10], abs=1e-9)
    bad = write_qrels_file(tmp_path / "bad.txt", [("1", "d0", 1), ("1", "nowhere", 1)])
    code, _, err = cli("qrels", "import", "c", "s1", "bad", bad)
    assert code == 1 and f"{bad}:2:" in err and "nowhere" in err
    code, out, _ = cli("qrels", "list", "c", "s1", "--json")
    assert {r["name"] for r in json.loads(out)} == {"original", "later"}


def test_tables_read_one_row_per_run_and_topics_in_natural_order(db: str, tmp_path: Path,
                                                                 cli) -> None:
    """Topic ids are numbers to people: 1, 2, 3, 10, not 1, 10, 2, 3."""
    from tcdb.api import run_import

    topics = {t: f"query {t}" for t in ("1", "10", "2", "3")}
    build_snapshot(tmp_path, "n", "s", {"a": "x", "b": "y"}, topics,
                   [(t, "a", 1) for t in topics])
    for tag in ("r1", "r2"):
        run_import("n", "s", [write_run_file(tmp_path / "runs", tag,
                                            [(t, "a", 2.0) for t in topics])])
    code, out, err = cli("evaluate", "n", "s", "-m", "AP", "-m", "P@1")
    assert code == 0, err
    lines = out.splitlines()
    rows = lines[lines.index(next(x for x in lines if x.startswith("---"))) + 1:-1]
    assert [line.split()[0] for line in rows] == ["r1", "r2"]
    code, out, _ = cli("scores", "n", "s", "-m", "AP", "--per-topic", "--run", "r1", "--json")
    assert [r["topic"] for r in json.loads(out)["scores"]] == ["1", "2", "3", "10"]
    second = write_qrels_file(tmp_path / "later.txt", [(t, "b", 1) for t in topics])
    assert cli("qrels", "import", "n", "s", "later", second)[0] == 0
    code, out, err = cli("report", "reusability", "n", "s", "--qrels", "original", "--vs",
                         "later", "-m", "AP", "--json")
    assert code == 0, err
    per_topic = json.loads(out)["measures"]["AP"]["tau_per_topic"]
    assert [t["topic"] for t in per_topic] == ["1", "2", "3", "10"]


CUTOFF_MEASURES = ["nDCG@10", "P@5", "AP@3", "R@7", "Success@2", "nDCG@1"]


def test_measures_with_cutoffs_read_only_that_deep_and_equal_ir_measures(
        collection: dict[str, Path]) -> None:
    """Cutoff-only measures score each ranking's top `eval_rank`s; on runs whose ties straddle
    the cutoff, with documents the snapshot lacks among the top, the values equal ir_measures
    on the whole files."""
    import ir_measures

    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.measures import ranking_depth
    from tcdb.scoring.scores import score_table

    assert ranking_depth(CUTOFF_MEASURES) == 10
    evaluate(Database(), "c", "s1", "original", CUTOFF_MEASURES)
    per_topic = score_table(Database(), "c", "s1", "original", CUTOFF_MEASURES, per_topic=True,
                            compute=False)
    measures = [ir_measures.parse_measure(m) for m in CUTOFF_MEASURES]
    qrels = list(ir_measures.read_trec_qrels(str(collection["qrels"])))
    for tag in ["full", "ties", "missing", "shallow", "unknown", "stranger"]:
        run = list(ir_measures.read_trec_run(str(collection[tag])))
        expected = {(str(m.measure), m.query_id): m.value
                    for m in ir_measures.iter_calc(measures, qrels, run)}
        rows = per_topic[per_topic["run"] == tag]
        keys = zip(rows["measure"], rows["topic"], strict=True)
        got = dict(zip(keys, rows["value"], strict=True))
        assert set(got) == set(expected), tag
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-12), (tag, key)


@pytest.mark.parametrize(("measures", "depth"), [
    (["nDCG@10", "P@20"], 20), (["nDCG@10", "AP"], None), (["RR@10"], None),
    (["Judged@10"], None), (["ERR@20"], None)])
def test_a_depth_only_where_every_measure_stops_at_a_cutoff_pytrec_eval_ranks(
        measures: list[str], depth: int | None) -> None:
    """RR@10 (msmarco provider), Judged@10 and ERR@20 may break ties otherwise: whole runs."""
    from tcdb.scoring.measures import ranking_depth

    assert ranking_depth(measures) == depth
