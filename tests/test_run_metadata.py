"""Run metadata: a round's runs imported in one call with the organisers' table; mistakes fixed
with `run update`, `run delete` and `--replace` without losing what was right."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from tcdb.errors import FieldError, InputError, NotFoundError
from tcdb.operations import Database
from tcdb.schema import PoolEntry, PoolRun, Run, RunEntry, Score, System
from tests.builders import build_snapshot, write_run_file

DOCS = {f"d{i}": f"text {i}" for i in range(1, 7)}
TOPICS = {"1": "one", "2": "two"}
QRELS = [("1", "d1", 1), ("1", "d2", 0), ("2", "d3", 2)]
ROWS = [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d4", 1.0), ("2", "d3", 1.5), ("2", "d5", 0.5)]
# TREC's own spelling of the table (runtype, judged as contributed), with quirks real tables
# carry: a BOM, a blank line, a row for a run that is not among the files.
TABLE = ("\ufefftag,group,runtype,contributed,category,submitted,description,first_stage\n"
         "alpha,GUIR_S2,automatic,yes,lexical,2020-05-01,BM25 baseline,\n"
         "\n"
         "beta,cuni,feedback,no,neural,2020-05-02,\"dense, with feedback\",alpha\n"
         "gamma,cuni,manual,yes,,,,\n"
         "not-here,elsewhere,automatic,no,,,,\n")


@pytest.fixture
def round1(db: str, tmp_path: Path) -> Path:
    """Collection `c`, snapshot `s`, the round's run files alpha, beta, gamma and its table."""
    build_snapshot(tmp_path, "c", "s", DOCS, TOPICS, QRELS)
    for tag in ("alpha", "beta", "gamma"):
        write_run_file(tmp_path / "runs", tag, ROWS)
    (tmp_path / "runs.csv").write_text(TABLE, encoding="utf-8")
    return tmp_path


def _runs() -> dict[str, dict[str, Any]]:
    from tcdb.runs import list_runs

    return {r["run"]: r for r in list_runs(Database(), "c", "s")}


def _count(table: Any) -> int:
    with Database().session() as session:
        return session.execute(select(func.count()).select_from(table)).scalar_one()


def _files(path: Path) -> list[Path]:
    return sorted((path / "runs").glob("*.run"))


def test_one_call_imports_a_round_with_its_metadata(round1: Path, cli: Any) -> None:
    code, out, err = cli("run", "import", "c", "s", *_files(round1), "--metadata",
                         round1 / "runs.csv", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert [r["status"] for r in result["runs"]] == ["imported"] * 3
    assert result["metadata_unmatched"] == ["not-here"]
    runs = _runs()
    assert {t: (r["group"], r["run_type"], r["contributed"], r["category"]) for t, r in
            runs.items()} == {"alpha": ("GUIR_S2", "automatic", True, "lexical"),
                              "beta": ("cuni", "feedback", False, "neural"),
                              "gamma": ("cuni", "manual", True, None)}
    assert str(runs["alpha"]["submitted"]) == "2020-05-01"
    assert runs["beta"]["description"] == "dense, with feedback"
    assert runs["beta"]["first_stage"] == "alpha" and runs["alpha"]["first_stage"] is None
    with Database().session() as session:
        systems = {(s.group_name, s.name) for s in session.exec(select(System)).scalars()}
    assert systems == {("GUIR_S2", "alpha"), ("cuni", "beta"), ("cuni", "gamma")}
    code, out, _ = cli("run", "import", "c", "s", *_files(round1), "--metadata",
                       round1 / "runs.csv")
    assert code == 0 and "1 row(s) of" in out and "not-here" in out


@pytest.mark.parametrize("name, text", [
    ("runs.tsv", "run\tteam\ttype\tjudged\nalpha\tGUIR_S2\tautomatic\ttrue\n"
                 "beta\tcuni\tfeedback\tfalse\n"),
    ("runs.json", json.dumps([{"tag": "alpha", "group": "GUIR_S2", "runtype": "automatic",
                               "contributed": True},
                              {"tag": "beta", "group": "cuni", "runtype": "feedback",
                               "contributed": False}])),
    ("runs.json", json.dumps({"alpha": {"group": "GUIR_S2", "contributed": "yes"},
                              "beta": {"group": "cuni", "runtype": "feedback"}})),
])
def test_tsv_and_json_tables(name: str, text: str, tmp_path: Path) -> None:
    from tcdb.runs import read_run_metadata

    (tmp_path / name).write_text(text, encoding="utf-8")
    table = read_run_metadata(tmp_path / name)
    assert (table["alpha"].group, table["alpha"].contributed) == ("GUIR_S2", True)
    assert (table["beta"].group, table["beta"].run_type) == ("cuni", "feedback")


@pytest.mark.parametrize("text, where, reason", [
    ("tag,group,colour\nalpha,g,red\n", 1, "unknown column 'colour'"),
    ("group,runtype\ng,automatic\n", 1, "no 'tag' column"),
    ("tag,runtype\nalpha,automatic\nbeta,interactive\n", 3,
     "run type 'interactive' is not one of automatic, manual, feedback"),
    ("tag,contributed\nalpha,maybe\n", 2, "contributed 'maybe' is not yes/no"),
    ("tag,submitted\nalpha,01/05/2020\n", 2, "submitted '01/05/2020' is not a date"),
    ("tag,group\nalpha,g\nalpha,h\n", 3, "run 'alpha' is described twice (first on line 2)"),
    ("tag,group\nalpha,g,extra\n", 2, "3 field(s), the header has 2"),
    ("tag,group\n,g\n", 2, "no run tag"),
    ("tag,run,group\nalpha,alpha,g\n", 1, "column 'run' repeats 'tag'"),
])
def test_a_bad_table_names_file_line_and_reason_and_writes_nothing(
        round1: Path, cli: Any, text: str, where: int, reason: str) -> None:
    table = round1 / "bad.csv"
    table.write_text(text, encoding="utf-8")
    code, _, err = cli("run", "import", "c", "s", *_files(round1), "--metadata", table)
    assert code == 1
    assert f"bad.csv:{where}: {reason}" in err
    assert _count(Run) == 0 and _count(RunEntry) == 0


def test_broken_encoding_and_json_are_refused(round1: Path) -> None:
    from tcdb.api import run_import

    latin = round1 / "latin.csv"
    latin.write_bytes("tag,group\nalpha,Universit\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="latin.csv: not UTF-8"):
        run_import("c", "s", _files(round1), metadata=latin)
    broken = round1 / "broken.json"
    broken.write_text('[{"tag": "alpha",\n "group": }]', encoding="utf-8")
    with pytest.raises(InputError, match="broken.json:2: not JSON"):
        run_import("c", "s", _files(round1), metadata=broken)
    assert _count(Run) == 0


def test_the_same_file_again_updates_the_metadata_it_is_given(round1: Path, cli: Any) -> None:
    alpha = round1 / "runs" / "alpha.run"
    assert cli("run", "import", "c", "s", alpha, "--group", "GUIR")[0] == 0
    code, out, _ = cli("run", "import", "c", "s", alpha, "--json")
    assert json.loads(out)["runs"][0]["status"] == "unchanged"
    code, out, _ = cli("run", "import", "c", "s", alpha, "--group", "GUIR_S2", "--contributed",
                       "--run-type", "feedback", "--json")
    assert code == 0 and json.loads(out)["runs"][0]["status"] == "updated"
    run = _runs()["alpha"]
    assert (run["group"], run["contributed"], run["run_type"]) == ("GUIR_S2", True, "feedback")
    # the run moved to its group's system; the old one is gone
    with Database().session() as session:
        assert [(s.group_name, s.name) for s in session.exec(select(System)).scalars()] == [
            ("GUIR_S2", "alpha")]


def test_replace_keeps_the_metadata_not_given_again(round1: Path) -> None:
    from tcdb.api import run_import

    alpha = round1 / "runs" / "alpha.run"
    run_import("c", "s", [alpha], metadata=round1 / "runs.csv")
    other = write_run_file(round1 / "v2", "alpha", ROWS[:3])
    report = run_import("c", "s", [other], replace=True, description="fixed run").runs[0]
    assert report.status == "replaced" and report.n_entries == 3
    run = _runs()["alpha"]
    assert (run["group"], run["contributed"], run["category"]) == ("GUIR_S2", True, "lexical")
    assert run["description"] == "fixed run" and str(run["submitted"]) == "2020-05-01"


def test_run_update_fixes_metadata_and_keeps_entries_and_scores(round1: Path, cli: Any) -> None:
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import evaluate

    run_import("c", "s", _files(round1), metadata=round1 / "runs.csv")
    evaluate(Database(), "c", "s", "original", ["AP"])
    before = (_count(RunEntry), _count(Score))
    code, out, err = cli("run", "update", "c", "s", "beta", "gamma", "--group", "CUNI",
                         "--not-contributed", "--json")
    assert code == 0, err
    assert [(c["run"], c["status"], c["changed"]) for c in json.loads(out)] == [
        ("beta", "updated", ["group", "system"]),
        ("gamma", "updated", ["group", "contributed", "system"])]
    assert {t: (r["group"], r["contributed"]) for t, r in _runs().items()} == {
        "alpha": ("GUIR_S2", True), "beta": ("CUNI", False), "gamma": ("CUNI", False)}
    assert (_count(RunEntry), _count(Score)) == before
    code, out, _ = cli("run", "update", "c", "s", "beta", "--group", "CUNI")
    assert code == 0 and "as stored already" in out
    fixes = round1 / "fixes.csv"
    fixes.write_text("tag,system\nbeta,dense\ngamma,dense\n", encoding="utf-8")
    assert cli("run", "update", "c", "s", "--metadata", fixes)[0] == 0
    assert {r["system"] for t, r in _runs().items() if t != "alpha"} == {"dense"}


def test_run_update_refuses_typos_and_empty_updates(round1: Path) -> None:
    from tcdb.api import run_import, run_update

    run_import("c", "s", _files(round1), metadata=round1 / "runs.csv")
    with pytest.raises(NotFoundError, match="no run 'bta'"):
        run_update("c", "s", ["alpha", "bta"], group="x")
    assert _runs()["alpha"]["group"] == "GUIR_S2"  # nothing was written
    with pytest.raises(FieldError, match="nothing to update"):
        run_update("c", "s", ["alpha"])


def test_run_delete_takes_entries_scores_and_pool_membership(round1: Path, cli: Any) -> None:
    from tcdb.api import pool_build, run_import
    from tcdb.scoring.evaluate import evaluate

    run_import("c", "s", _files(round1), metadata=round1 / "runs.csv")
    evaluate(Database(), "c", "s", "original", ["AP"])
    pool_build("c", "s", "p", depth=2, all_runs=True)
    pooled = _count(PoolEntry)
    code, out, err = cli("run", "delete", "c", "s", "gamma", "--yes", "--json")
    assert code == 0, err
    (change,) = json.loads(out)
    assert change["status"] == "deleted" and change["n_entries"] == 5
    assert change["n_scores"] == 2 and change["pools"] == ["p"]
    assert set(_runs()) == {"alpha", "beta"}
    assert _count(RunEntry) == 10 and _count(Score) == 4 and _count(PoolRun) == 2
    assert _count(PoolEntry) == pooled  # the assessors may hold the pool already
    with Database().session() as session:
        assert "gamma" not in {s.name for s in session.exec(select(System)).scalars()}
    code, _, err = cli("run", "delete", "c", "s", "alpha", "nope", "--yes")
    assert code == 1 and "no run 'nope'" in err and "alpha" in _runs()
