"""Measures at their edges and providers at their limits (issue 41, Build 4 and class 4).

A measure is validated where it is parsed (`tcdb.scoring.measures`): a cutoff is a rank from 1
to the largest stored, `rel` a grade, every other parameter of the type ir_measures declares.
A provider's own limits are checked before it runs: ir_measures' gdeval (ERR@k,
nDCG(dcg='exp-log2')@k) is a Perl script that reads whole-number topic ids and grades up to 4,
and needs perl. Each refusal is one line naming the measure, the provider, the reason and what
works instead, and writes nothing, on both databases.
"""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest
from sqlalchemy import text

from tcdb.errors import FieldError
from tcdb.scoring.measures import parse_measures


@pytest.mark.parametrize("name", ["P@0", "Judged@0", "Success@0", "nDCG@0",
                                  "P@99999999999999999999", "P@2147483648", "P@1.5",
                                  "RBP(p=2)", "nDCG(judged_only=1)@10", "P(rel=40000)@5",
                                  "SDCG@10"])
def test_a_measure_beyond_its_edges_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(FieldError) as caught:
        parse_measures([name])
    assert caught.value.field == "measures"
    assert name in str(caught.value) and "\n" not in str(caught.value)


def test_the_edges_themselves_are_measures() -> None:
    assert parse_measures(["P@1", "P@2147483647", "P(rel=2)@5", "AP(rel=32767)"]) == [
        "P@1", "P@2147483647", "P(rel=2)@5", "AP(rel=32767)"]


def _collection(cli, tmp_path: Path, name: str, topics: list[str], grade: int = 1) -> None:
    from tests.builders import write_documents, write_qrels_file, write_topics

    write_documents(tmp_path / f"{name}.trec", {f"d{i}": f"text {i}" for i in range(6)})
    write_topics(tmp_path / f"{name}.tsv", {t: f"query {t}" for t in topics})
    write_qrels_file(tmp_path / f"{name}.qrels",
                     [(t, f"d{i}", grade if i % 2 else 0) for t in topics for i in range(4)])
    run = tmp_path / f"{name}.run"
    run.write_text("".join(f"{t} Q0 d{i} {i + 1} {10 - i} r1\n" for t in topics
                           for i in range(5)))
    assert cli("collection", "add", name)[0] == 0
    code, _out, err = cli("snapshot", "ingest", name, "s1", "--docs", tmp_path / f"{name}.trec",
                          "--topics", tmp_path / f"{name}.tsv",
                          "--qrels", tmp_path / f"{name}.qrels")
    assert code == 0, err
    code, _out, err = cli("run", "import", name, "s1", run)
    assert code == 0, err


def _scores(url: str) -> int:
    from tcdb.storage.db import get_engine

    with get_engine(url).connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM score")).scalar_one())


@pytest.mark.parametrize("measure", ["ERR@20", "nDCG(dcg='exp-log2')@10"])
def test_gdeval_on_topic_ids_that_are_not_numbers_is_one_line(db: str, cli, tmp_path: Path,
                                                             measure: str) -> None:
    _collection(cli, tmp_path, "demo", ["q06225923", "q06225924"])
    code, out, err = cli("evaluate", "demo", "s1", "--measure", measure)
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    line = err.strip()
    assert line.startswith(f"error: --measure: {measure} is computed by ir_measures' gdeval "
                           "provider")
    assert "whole-number topic ids" in line and "'q06225923'" in line and "use " in line
    assert _scores(db) == 0


def test_gdeval_on_numbered_topics_equals_ir_measures(db: str, cli, tmp_path: Path) -> None:
    _collection(cli, tmp_path, "numbered", ["301", "302"])
    code, out, err = cli("evaluate", "numbered", "s1", "--measure", "ERR@20", "--json")
    assert code == 0, err
    import json

    (mean,) = json.loads(out)["means"]
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "numbered.qrels")))
    run = list(ir_measures.read_trec_run(str(tmp_path / "numbered.run")))
    expected = ir_measures.calc_aggregate([ir_measures.parse_measure("ERR@20")], qrels, run)
    assert mean["value"] == pytest.approx(float(next(iter(expected.values()))), abs=1e-9)


def test_gdeval_grades_beyond_four_are_one_line(db: str, cli, tmp_path: Path) -> None:
    _collection(cli, tmp_path, "graded", ["301", "302"], grade=5)
    code, _out, err = cli("evaluate", "graded", "s1", "--measure", "ERR@10")
    assert code == 1 and err.count("\n") == 1
    assert "grades up to 4 only, and these judgments go up to 5" in err
    assert _scores(db) == 0


def test_gdeval_without_perl_is_one_line(db: str, cli, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _collection(cli, tmp_path, "noperl", ["301", "302"])
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without perl
    code, _out, err = cli("evaluate", "noperl", "s1", "--measure", "ERR@10")
    assert code == 1 and err.count("\n") == 1
    assert "perl is not installed" in err and "ERR@10" in err and "gdeval" in err


@pytest.mark.parametrize("measure", ["P@0", "P@99999999999999999999"])
def test_cutoffs_beyond_the_edges_on_the_command_line(db: str, cli, tmp_path: Path,
                                                      measure: str) -> None:
    _collection(cli, tmp_path, "edges", ["q1", "q2"])
    code, _out, err = cli("evaluate", "edges", "s1", "--measure", measure)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"error: --measure: '{measure}': cutoff=") and "from 1 to" in err
    assert _scores(db) == 0


def test_a_pool_simulation_ranking_by_gdeval_is_checked_first(db: str, cli,
                                                              tmp_path: Path) -> None:
    _collection(cli, tmp_path, "sim", ["q06225923", "q06225924"])
    second = tmp_path / "second.run"
    second.write_text("".join(f"{t} Q0 d{5 - i} {i + 1} {10 - i} r2\n"
                              for t in ["q06225923", "q06225924"] for i in range(5)))
    assert cli("run", "import", "sim", "s1", second)[0] == 0
    code, _out, err = cli("pool", "simulate", "sim", "s1", "--budgets", "4",
                          "--measure", "ERR@20")
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith("error: --measure: ERR@20 is computed by ir_measures' gdeval")
