"""Counts under `trec_eval -c` equal trec_eval 10's own output (issue 41, class 4).

trec_eval's test `-m all_trec -q -c qrels.test results.trunc` (`tests/data/trec_eval10`): the
run answers topics 301 and 303, the qrels judge 302 too. Under -c trec_eval still counts 302:
`num_rel 302 77`, `num_rel all 561` (not 484, the sum over the answered topics) and
`num_q all 3`. The expected values are read from trec_eval's `out.test.aqc`, on both databases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tcdb.operations import Database

DATA = Path(__file__).parent / "data" / "trec_eval10"
# trec_eval name in out.test.aqc → the ir_measures name tcdb evaluates
MEASURES = {"num_rel": "NumRel", "num_q": "NumQ", "num_ret": "NumRet",
            "num_rel_ret": "NumRet(rel=1)", "map": "AP", "P_10": "P@10"}


def _trec_eval(topic: str) -> dict[str, float]:
    """trec_eval's own figures for `topic` (or `all`) in out.test.aqc."""
    found = {}
    for line in (DATA / "out.test.aqc").read_text().splitlines():
        name, where, value = line.split()
        if where == topic and name in MEASURES:
            found[MEASURES[name]] = float(value)
    return found


@pytest.fixture
def loaded(db: str, cli, tmp_path: Path) -> str:
    from tests.builders import write_documents, write_topics

    ids = {line.split()[2] for line in (DATA / "qrels.test").read_text().splitlines()}
    ids |= {line.split()[2] for line in (DATA / "results.trunc").read_text().splitlines()}
    docs = write_documents(tmp_path / "docs.trec", dict.fromkeys(sorted(ids), "text"))
    topics = write_topics(tmp_path / "topics.tsv", {"301": "a", "302": "b", "303": "c"})
    code, _out, err = cli("collection", "add", "te")
    assert code == 0, err
    code, _out, err = cli("snapshot", "ingest", "te", "s1", "--docs", docs, "--topics", topics,
                          "--qrels", DATA / "qrels.test")
    assert code == 0, err
    code, _out, err = cli("run", "import", "te", "s1", DATA / "results.trunc")
    assert code == 0, err
    return db


def test_counts_under_c_equal_trec_eval_10(loaded: str) -> None:
    from tcdb import api

    result = api.evaluate("te", "s1", measures=list(MEASURES.values()))
    means = {m.measure: m.value for m in result.means}
    expected = _trec_eval("all")
    assert expected["NumRel"] == 561 and expected["NumQ"] == 3
    for measure, value in expected.items():
        assert means[measure] == pytest.approx(value, abs=5e-5), measure


def test_per_topic_num_rel_of_an_unanswered_topic_is_its_relevant_count(loaded: str) -> None:
    from tcdb.scoring.scores import score_table

    table = score_table(Database(), "te", "s1", "original", ["NumRel", "NumQ"], per_topic=True)
    got = {(r.topic, r.measure): (r.value, r.answered) for r in table.itertuples()}
    for topic in ("301", "302", "303"):
        assert got[(topic, "NumRel")][0] == _trec_eval(topic)["NumRel"]
    assert got[("302", "NumRel")] == (77.0, False)  # trec_eval: num_rel 302 77
    assert got[("302", "NumQ")] == (1.0, False)
    plain = score_table(Database(), "te", "s1", "original", ["NumRel"], intersection=True)
    assert plain["value"].tolist() == [474 + 10]  # without -c: the answered topics only


def test_reports_reading_one_measures_scores_sum_num_rel_as_trec_eval(loaded: str) -> None:
    """The reports built on one measure's per-topic matrix (leaderboard, compare, diff,
    subset: `tcdb.reports.run_scores`) fill an unanswered topic as score tables do."""
    from tcdb import api

    api.run_update("te", "s1", ["STANDARD"], submitted="2024-01-01")
    board = api.leaderboard("te", "s1", measure="NumRel")
    assert board.aggregate == "sum"
    assert [r.mean for r in board.runs] == [_trec_eval("all")["NumRel"]]


def test_persistence_reads_num_rel_of_unanswered_topics_as_trec_eval(loaded: str, cli,
                                                                     tmp_path: Path) -> None:
    """Persistence and rankings across snapshots read per-topic values through
    `load_persistence_scores`: each snapshot's NumRel sums to trec_eval's 561."""
    from tcdb.reports.persistence_scores import load_persistence_scores

    _second_snapshot(cli, tmp_path)
    assert cli("run", "import", "te", "s2", DATA / "results.trunc")[0] == 0
    data = load_persistence_scores(Database(), "te", ["s1", "s2"], ["NumRel"])
    frame = data.frames["NumRel"]
    assert frame.groupby("snapshot")["value"].sum().to_dict() == {
        "s1": _trec_eval("all")["NumRel"], "s2": _trec_eval("all")["NumRel"]}


def test_runs_carried_to_another_snapshot_count_num_rel_as_trec_eval(loaded: str, cli,
                                                                    tmp_path: Path) -> None:
    """`evaluate --run-from`: s1's run on s2's qrels (the same files), NumRel 561."""
    from tcdb import api

    _second_snapshot(cli, tmp_path)
    result = api.evaluate("te", "s2", measures=["NumRel", "NumQ"], run_from="s1")
    means = {m.measure: m.value for m in result.means}
    assert means == {"NumRel": _trec_eval("all")["NumRel"], "NumQ": _trec_eval("all")["NumQ"]}


def _second_snapshot(cli, tmp_path: Path) -> None:
    """Snapshot s2: the same documents, topics and qrels as s1."""
    from tests.builders import write_documents, write_topics

    ids = {line.split()[2] for line in (DATA / "qrels.test").read_text().splitlines()}
    ids |= {line.split()[2] for line in (DATA / "results.trunc").read_text().splitlines()}
    docs = write_documents(tmp_path / "docs2.trec", dict.fromkeys(sorted(ids), "text"))
    topics = write_topics(tmp_path / "topics2.tsv", {"301": "a", "302": "b", "303": "c"})
    code, _out, err = cli("snapshot", "ingest", "te", "s2", "--docs", docs, "--topics", topics,
                          "--qrels", DATA / "qrels.test")
    assert code == 0, err


def test_reusability_reads_num_rel_of_unanswered_topics_as_trec_eval(loaded: str, cli,
                                                                    tmp_path: Path) -> None:
    """The reusability report's figures per run under both sets: NumRel 561 for the run
    that does not answer topic 302."""
    from tcdb import api

    full = tmp_path / "full.run"  # results.test under another tag: it answers every topic
    full.write_text("".join(" ".join([*line.split()[:5], "FULL"]) + "\n" for line in
                            (DATA / "results.trunc").read_text()
                            .splitlines()[:1]) + "302 Q0 FR940202-2-00150 1 2.0 FULL\n")
    assert cli("run", "import", "te", "s1", full)[0] == 0
    assert cli("qrels", "import", "te", "s1", "again", DATA / "qrels.test")[0] == 0
    report = api.reusability("te", "s1", vs="again", measures=["NumRel"])
    runs = {r.run: (r.score_a, r.score_b) for r in report.measures["NumRel"].runs}
    expected = _trec_eval("all")["NumRel"]
    assert runs["STANDARD"] == (expected, expected)


def test_cross_snapshot_persistence_reads_num_rel_as_trec_eval(loaded: str, cli,
                                                               tmp_path: Path) -> None:
    """s1's run on each snapshot's qrels (`cross_snapshot_scores`): NumRel 561 on each."""
    from tcdb.reports.cross_persistence import cross_snapshot_scores

    _second_snapshot(cli, tmp_path)
    frame = cross_snapshot_scores(Database(), "te", ["s1", "s2"], ["NumRel"]).frames["NumRel"]
    expected = _trec_eval("all")["NumRel"]
    assert frame.groupby("snapshot")["value"].sum().to_dict() == {"s1": expected,
                                                                  "s2": expected}
