"""A resubmitted run keeps its versions (issue 43, Build 1): `run import --replace` of a changed
file makes it the run's latest version and keeps the one it replaced, entries and all; `run
versions` lists both; every report reads the latest; `evaluate --version` scores an earlier one
from its kept entries; the lineage names the version used. Both databases.

Expected means come from ir_measures run on the run files and the qrels file themselves
(`trec_eval -c`: an unanswered qrels topic counts 0), never from tcdb.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C = "resub"
DOCS = {f"d{i}": f"text {i}" for i in range(12)}
TOPICS = {"1": "one", "2": "two", "3": "three"}
QRELS = [("1", "d1", 1), ("1", "d2", 2), ("2", "d5", 1), ("2", "d6", 0), ("3", "d9", 1)]
FIRST = [("1", "d3", 3.0), ("1", "d1", 2.0), ("2", "d6", 2.0), ("2", "d5", 1.0)]
SECOND = [("1", "d2", 3.0), ("1", "d1", 2.0), ("2", "d5", 2.0), ("3", "d9", 1.0)]
MEASURES = ["AP", "nDCG@10"]


def _ir_measures_means(qrels_path: Path, run_path: Path) -> dict[str, float]:
    """trec_eval -c means by ir_measures on the files: unanswered qrels topics count 0."""
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    topics = {q.query_id for q in qrels}
    means = {}
    for name in MEASURES:
        values = {m.query_id: m.value for m in
                  ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, run)}
        means[name] = sum(values.get(t, 0.0) for t in topics) / len(topics)
    return means


@pytest.fixture
def files(db: str, tmp_path: Path) -> dict[str, Path]:
    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, QRELS)
    return {"qrels": write_qrels_file(tmp_path / "qrels.txt", QRELS),
            "first": write_run_file(tmp_path / "v1", "team-a", FIRST),
            "second": write_run_file(tmp_path / "v2", "team-a", SECOND)}


def test_a_resubmission_keeps_the_earlier_version_and_reports_use_the_latest(
        cli, files: dict[str, Path]) -> None:
    from tcdb import api

    assert cli("run", "import", C, "s1", files["first"])[0] == 0
    code, out, err = cli("run", "import", C, "s1", files["second"], "--replace",
                         "--version", "2025-05-20-23-07-55")
    assert code == 0, err
    assert "version 1 kept" in out

    listed = api.run_versions(C, "s1")
    assert [(v.run, v.version, v.current, v.n_entries) for v in listed.versions] == [
        ("team-a", "1", False, 4), ("team-a", "2025-05-20-23-07-55", True, 4)]
    code, out, _ = cli("run", "versions", C, "s1", "--json")
    assert code == 0
    assert [v["version"] for v in json.loads(out)["versions"]] == ["1", "2025-05-20-23-07-55"]

    latest = _ir_measures_means(files["qrels"], files["second"])
    result = api.evaluate(C, "s1", qrels="original", measures=MEASURES)
    assert {m.measure: m.value for m in result.means} == pytest.approx(latest, abs=1e-12)
    assert result.lineage is not None
    (run,) = result.lineage.runs
    assert run.version == "2025-05-20-23-07-55"
    assert run.checksum == _sha256(files["second"])
    assert any("version 2025-05-20-23-07-55" in line for line in result.lineage.lines())

    # another report reads the same latest scores
    scores = api.scores(C, "s1", qrels="original", measures=MEASURES)
    assert {m.measure: m.value for m in scores.means} == pytest.approx(latest, abs=1e-12)


def test_an_earlier_version_is_scored_from_its_kept_entries(cli, files: dict[str, Path]) -> None:
    from tcdb import api

    assert cli("run", "import", C, "s1", files["first"])[0] == 0
    assert cli("run", "import", C, "s1", files["second"], "--replace")[0] == 0
    earlier = api.evaluate(C, "s1", qrels="original", measures=MEASURES, version="1")
    want = _ir_measures_means(files["qrels"], files["first"])
    assert {m.measure: m.value for m in earlier.means} == pytest.approx(want, abs=1e-12)
    assert earlier.version == "1"
    assert earlier.lineage is not None
    assert [(r.version, r.checksum) for r in earlier.lineage.runs] == [
        ("1", _sha256(files["first"]))]
    # nothing of the earlier version was stored: the scores reports read are the latest's
    with Database().session() as session:
        assert session.execute(text("SELECT COUNT(*) FROM score")).scalar_one() == 0
    latest = api.evaluate(C, "s1", qrels="original", measures=MEASURES)
    assert latest.report.n_computed == len(MEASURES)
    assert {m.measure: m.value for m in latest.means} == pytest.approx(
        _ir_measures_means(files["qrels"], files["second"]), abs=1e-12)


def test_numbered_versions_and_labels_that_exist_already(cli, files: dict[str, Path],
                                                         tmp_path: Path) -> None:
    from tcdb import api

    assert cli("run", "import", C, "s1", files["first"])[0] == 0
    assert cli("run", "import", C, "s1", files["second"], "--replace")[0] == 0
    third = write_run_file(tmp_path / "v3", "team-a", FIRST[:2])
    code, _, err = cli("run", "import", C, "s1", third, "--replace", "--version", "1")
    assert code != 0
    assert err.strip().count("\n") == 0 and "already has a version '1'" in err
    assert cli("run", "import", C, "s1", third, "--replace")[0] == 0
    assert [v.version for v in api.run_versions(C, "s1").versions] == ["1", "2", "3"]
    code, out, _ = cli("run", "list", C, "s1", "--json")
    assert json.loads(out)[0]["version"] == "3"
    unknown = cli("evaluate", C, "s1", "-m", "AP", "--version", "7")
    assert unknown[0] != 0 and "no version '7'" in unknown[2] and "'1', '2', '3'" in unknown[2]


def test_a_metadata_table_gives_each_run_its_version(cli, files: dict[str, Path],
                                                     tmp_path: Path) -> None:
    from tcdb import api

    table = tmp_path / "round.csv"
    table.write_text("run,team,version\nteam-a,A,2025-04-30\n", encoding="utf-8")
    assert cli("run", "import", C, "s1", files["first"], "--metadata", table)[0] == 0
    table.write_text("run,team,version\nteam-a,A,2025-05-20\n", encoding="utf-8")
    assert cli("run", "import", C, "s1", files["second"], "--replace", "--metadata",
               table)[0] == 0
    assert [v.version for v in api.run_versions(C, "s1").versions] == ["2025-04-30",
                                                                       "2025-05-20"]
    code, _, err = cli("run", "update", C, "s1", "--metadata", table)
    assert code != 0 and "version" in err and err.strip().count("\n") == 0


def test_deleting_the_run_deletes_its_versions(cli, files: dict[str, Path]) -> None:
    from tcdb.storage.consistency import check_database

    assert cli("run", "import", C, "s1", files["first"])[0] == 0
    assert cli("run", "import", C, "s1", files["second"], "--replace")[0] == 0
    with Database().session() as session:
        kept = session.execute(text("SELECT COUNT(*) FROM run_version_entry")).scalar_one()
    assert kept == len(FIRST)
    assert cli("run", "delete", C, "s1", "team-a", "--yes")[0] == 0
    with Database().session() as session:
        for table in ("run_version", "run_version_entry", "run_version_unresolved"):
            assert session.execute(text(f"SELECT COUNT(*) FROM {table}")).scalar_one() == 0
    assert check_database(Database().url) == []


def test_a_version_label_is_checked_alike_on_both_databases(cli, files: dict[str, Path]) -> None:
    code, _, err = cli("run", "import", C, "s1", files["first"], "--version", "x" * 101)
    assert code != 0 and "--version" in err and "at most 100" in err
    code, _, err = cli("run", "import", C, "s1", files["first"], "--version", "a\x1bb")
    assert code != 0 and "--version" in err


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
