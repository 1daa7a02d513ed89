"""Defaults that cannot mislead (issue 31), on SQLite and PostgreSQL:

* cross-snapshot persistence averages over the topics both snapshots have, and says how many
  were mapped of how many (the oracle: ir_measures on the files, the run carried over by hand);
* `tcdb db check` knows cross-snapshot and residual scores;
* counts (NumRet, NumRel, NumRet(rel=1)) are summed over topics, as ir_measures' calc_aggregate;
* one bootstrap default: the demo, the CLI and the dashboard give bm25 one interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest

from tcdb.operations import Database
from tests.longitudinal import COLLECTION, Web, build_web
from tests.test_longitudinal_depth import _measure, _old_run_in_new_names


@pytest.fixture
def web(db: str, tmp_path: Path) -> Web:
    return build_web(tmp_path)


def _mapped(web: Web, later: str) -> list[str]:
    """`later`'s judged topics (its ids) whose query s1 has: those s1's runs were asked."""
    return [t for t, q in web.topics[later].items() if q in web.topics["s1"].values()]


def test_cross_snapshot_arp_is_over_the_mapped_topics(web: Web, cli) -> None:
    from tcdb.api import persistence

    report = persistence(COLLECTION, snapshots=["s1", "s2", "s3"], pivot="steady",
                         measures=["AP"], cross_snapshot=True)
    # s2 adds "chess openings", s3 keeps it and drops "bread recipes": s1 never had chess
    assert report.topics.n_topics == {"s1": 4, "s2": 4, "s3": 3}
    assert report.topics.n_selected == {"s1": 4, "s2": 5, "s3": 4}
    records = {r.system: r for r in report.measures["AP"].systems}
    for system in ("noisy", "steady", "flip", "short"):
        for later in ("s2", "s3"):
            per_topic = _measure("AP", web.qrels[later],
                                 _old_run_in_new_names(web, system, "s1", later))
            mapped = _mapped(web, later)
            by_hand = sum(per_topic.get(t, 0.0) for t in mapped) / len(mapped)
            assert records[system].arp[later] == pytest.approx(by_hand, abs=1e-12)
            # the old default: the unmapped topic as a 0, a drop of 1/5 (s2) or 1/4 (s3)
            zeros = sum(per_topic.get(t, 0.0) for t in web.topics[later]) / len(
                web.topics[later])
            assert zeros == pytest.approx(by_hand * len(mapped) / len(web.topics[later]))
    frame = report.to_frame()
    assert frame.loc[frame["snapshot"] == "s2", ["n_topics", "n_selected"]].drop_duplicates(
        ).values.tolist() == [[4, 5]]
    code, out, err = cli("report", "persistence", COLLECTION, "--snapshots", "s1", "s2", "s3",
                         "--pivot", "steady", "--measure", "AP", "--cross-snapshot")
    assert code == 0, err
    assert "topics all (s1: 4, s2: 4 mapped of 5, s3: 3 mapped of 4)" in out
    code, out, err = cli("report", "persistence", COLLECTION, "--snapshots", "s1", "s3",
                         "--pivot", "steady", "--measure", "AP", "--cross-snapshot", "--json")
    assert code == 0, err
    assert json.loads(out)["topics"] == {"selection": "all", "n_topics": {"s1": 4, "s3": 3},
                                         "n_selected": {"s1": 4, "s3": 4}}
    own = persistence(COLLECTION, snapshots=["s1", "s3"], pivot="steady", measures=["AP"])
    assert "n_selected" not in own.to_data()["topics"]  # the usual report: as ever


def test_evaluate_run_from_means_over_the_mapped_topics(web: Web, cli) -> None:
    from tcdb.api import evaluate

    report = evaluate(COLLECTION, "s3", qrels="original", measures=["AP"], run_from="s1",
                      runs=["noisy-s1"])
    per_topic = _measure("AP", web.qrels["s3"], _old_run_in_new_names(web, "noisy", "s1", "s3"))
    mapped = _mapped(web, "s3")
    (mean,) = report.means
    assert mean.value == pytest.approx(sum(per_topic.get(t, 0.0) for t in mapped) / 3,
                                       abs=1e-12)
    assert mean.n_topics == 3
    assert report.unmapped["noisy-s1"].topics_new == [web.topic_of("s3", "chess openings")]
    code, out, err = cli("evaluate", COLLECTION, "s3", "--run-from", "s1", "--run", "noisy-s1",
                         "--measure", "AP")
    assert code == 0, err
    assert "mapped 3 of 4" in out


def test_db_check_knows_cross_snapshot_and_residual_scores(web: Web, cli, db: str) -> None:
    from tcdb.api import evaluate, persistence
    from tcdb.storage.consistency import check_database

    persistence(COLLECTION, snapshots=["s1", "s2", "s3"], pivot="steady", measures=["AP"],
                cross_snapshot=True)
    evaluate(COLLECTION, "s3", qrels="original", measures=["P@5"], run_from="s2")
    evaluate(COLLECTION, "s2", qrels="original", measures=["AP"], residual_of="s1/original")
    evaluate(COLLECTION, "s1", qrels="original", measures=["AP"], residual_of="original")
    assert check_database(db) == []
    code, out, err = cli("db", "check", "--database-url", db)
    assert code == 0 and out.strip().endswith("is consistent"), (out, err)


COUNTS = ["NumRet", "NumRel", "NumRet(rel=1)", "NumQ"]


def test_counts_are_summed_as_ir_measures_aggregates(web: Web, cli) -> None:
    """ir_measures' calc_aggregate on the files is the oracle: sums for counts, means else."""
    from tcdb.analysis.means import aggregate, sums_over_topics
    from tcdb.api import evaluate, scores

    assert [sums_over_topics(m) for m in [*COUNTS, "AP", "P@10"]] == [True] * 4 + [False] * 2
    assert aggregate("NumRet", [1.0, 2.0], 4) == 3.0 and aggregate("AP", [1.0, 2.0], 4) == 0.75
    measures = [*COUNTS, "AP", "P@10"]
    result = evaluate(COLLECTION, "s1", qrels="original", measures=measures)
    qrels = [ir_measures.Qrel(t, d, g) for t, d, g in web.qrels["s1"]]
    for system in ("noisy", "steady"):
        run = list(ir_measures.read_trec_run(str(web.runs[system]["s1"])))
        oracle = ir_measures.calc_aggregate([ir_measures.parse_measure(m) for m in measures],
                                            qrels, run)
        means = {m.measure: m.value for m in result.means if m.run == f"{system}-s1"}
        assert means == pytest.approx({m: oracle[ir_measures.parse_measure(m)]
                                       for m in measures}, abs=1e-9)
        assert means["NumRet"] == 4 * 20  # 4 topics × 20 documents: a sum, not 20
    table = scores(COLLECTION, "s1", qrels="original", measures=["NumRet"]).to_frame()
    assert set(table["value"]) == {80.0}  # every run answers 20 documents on each of 4 topics
    code, out, err = cli("scores", "table", COLLECTION, "s1", "--measure", "NumRet",
                         "--measure", "AP")
    assert code == 0, err
    assert "NumRet (sum)" in out and "AP (sum)" not in out


def test_one_bootstrap_interval_for_the_demo_cli_and_dashboard(db: str, tmp_path: Path,
                                                               cli) -> None:
    from tcdb.dashboard import bias_data
    from tcdb.demo.bias import BIAS_COLLECTION, BIAS_MEASURE, BIAS_SNAPSHOT, run_source_bias_demo
    from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

    summary = run_source_bias_demo(Database(),
                                   tmp_path, seed=42)  # the generator's seed, not the bootstrap's
    assert (summary["n_samples"], summary["seed"]) == (BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED)
    demo = {r["run"]: (r["ci_low"], r["ci_high"]) for r in summary["recovered"]}
    code, out, err = cli("report", "source-bias", BIAS_COLLECTION, BIAS_SNAPSHOT, "--measure",
                         BIAS_MEASURE, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["bootstrap"], data["seed"]) == (BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED)
    said = f"{BOOTSTRAP_SAMPLES:,} resamples, seed {BOOTSTRAP_SEED}"
    assert said in data["tests"]["ci_low/ci_high"]
    from_cli = {r["run"]: (r["ci_low"], r["ci_high"])
                for r in data["measures"][BIAS_MEASURE]["runs"]}
    page = bias_data.source_bias.__wrapped__(db, BIAS_COLLECTION, BIAS_SNAPSHOT, BIAS_MEASURE)
    dashboard = {r.run: (r.ci_low, r.ci_high) for r in page.measures[BIAS_MEASURE].runs}
    assert (page.bootstrap, page.seed) == (BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED)
    assert demo["bm25"] == from_cli["bm25"] == dashboard["bm25"]
    assert demo == from_cli == dashboard
    code, out, err = cli("report", "source-bias", BIAS_COLLECTION, BIAS_SNAPSHOT, "--measure",
                         BIAS_MEASURE)
    assert code == 0 and said in out, err
