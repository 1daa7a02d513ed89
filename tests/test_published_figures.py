"""Published figures are checked, not taken on trust (issue 41, Build 6 and class 2).

`tcdb scores import` holds each `all` line of trec_eval output against the mean of the file's
per-topic lines: equal within the rounding of the printed figures, or `trec_eval -c`'s mean
over more judged topics (said, and reported as published), or a warning naming the file, line,
measure and both values. Each per-topic value is checked against its measure's range (refused
in one line), and topic ids are put in Unicode NFC (counted and said) or refused as the same
topic twice. The same on both databases.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from sqlalchemy import text

NFC = "caf\u00e9"
NFD = unicodedata.normalize("NFD", NFC)


@pytest.fixture
def snap(db: str, tmp_path: Path, cli) -> Path:
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(["q1", "q2", "q3", "q4", "q5", NFC]) + "\n", encoding="utf-8")
    assert cli("collection", "add", "pub")[0] == 0
    code, _out, err = cli("snapshot", "register", "pub", "s", "--topics", ids)
    assert code == 0, err
    return tmp_path


def _file(folder: Path, name: str, lines: list[str]) -> Path:
    path = folder / name
    path.write_text("".join(line.replace(" ", "\t") + "\n" for line in lines), encoding="utf-8")
    return path


def _import(cli, path: Path) -> tuple[int, dict, str]:
    code, out, err = cli("scores", "import", "pub", "s", path, "--json")
    return code, (json.loads(out) if code == 0 else {}), err


def _n_scores(url: str) -> int:
    from tcdb.storage.db import get_engine

    with get_engine(url).connect() as conn:
        return int(conn.execute(text("SELECT COUNT(*) FROM score")).scalar_one())


def test_an_all_line_that_contradicts_its_lines_is_a_warning(snap: Path, cli, db: str) -> None:
    path = _file(snap, "r1.te", ["runid all r1", "map q1 0.3000", "map q2 0.3363",
                                 "map q3 0.3454", "map q4 0.4000", "map all 0.3500"])
    code, out, err = cli("scores", "import", "pub", "s", path)
    assert code == 0, err
    mean = (0.3000 + 0.3363 + 0.3454 + 0.4000) / 4  # 0.3454
    assert err.strip() == (
        f"warning: {path}:6: AP: the published all line says 0.3500, but the mean of its 4 "
        f"per-topic lines is {mean:.4f}; nor a trec_eval -c mean over more judged topics: "
        "the per-topic values are stored, the all line is not")
    assert "1 contradicting them" in out
    assert _n_scores(db) == 4


def test_a_trec_eval_c_all_line_is_said_and_reported_as_published(snap: Path, cli) -> None:
    lines = ["map q1 0.2000", "map q2 0.3000", "map q3 0.2000", "map q4 0.3000"]
    with_num_q = _file(snap, "c.te", ["runid all r2", "num_q all 5", *lines, "map all 0.2000"])
    inferred = _file(snap, "c2.te", ["runid all r3", *lines, "map all 0.2000"])
    for path in (with_num_q, inferred):
        code, result, err = _import(cli, path)
        assert code == 0 and "warning" not in err, err
        (published,) = result["published_means"]
        assert published["semantics"] == "-c" and published["n_judged"] == 5
        assert published["reported"] == 0.2 and published["mean_of_lines"] == 0.25
        assert "trec_eval -c's, over 5 judged topics (1 without a line, counted 0)" in (
            published["note"])
        assert result["warnings"] == []
    assert "num_q" not in result["skipped"]  # read as the -c denominator, not skipped


def test_an_all_line_within_rounding_is_its_mean(snap: Path, cli) -> None:
    path = _file(snap, "ok.te", ["runid all r4", "P_10 q1 0.3333", "P_10 q2 0.6667",
                                 "P_10 q3 0.3333", "P_10 all 0.4444"])
    code, result, err = _import(cli, path)
    assert code == 0 and err == ""
    assert [(p["measure"], p["semantics"]) for p in result["published_means"]] == [
        ("P@10", "mean")]


@pytest.mark.parametrize(("row", "said"), [
    ("ndcg q1 1.2000", "nDCG 1.2 for topic 'q1' is outside its range, 0 to 1"),
    ("map q2 -0.1000", "AP -0.1 for topic 'q2' is outside its range, 0 to 1"),
    ("P_10 q3 1.0001", "P@10 1.0001 for topic 'q3' is outside its range, 0 to 1")])
def test_a_value_outside_its_measures_range_is_one_line(snap: Path, cli, db: str, row: str,
                                                        said: str) -> None:
    path = _file(snap, "bad.te", ["runid all r5", "map q4 0.5000", row])
    code, out, err = cli("scores", "import", "pub", "s", path)
    assert (code, out) == (1, "")
    assert err == f"error: {path}:3: {said}\n"
    assert _n_scores(db) == 0


def test_a_tidy_table_is_held_to_the_ranges_too(snap: Path, cli, db: str) -> None:
    path = snap / "tidy.csv"
    path.write_text("run,topic,measure,value\nr6,q1,nDCG@10,0.5\nr6,q2,nDCG@10,1.5\n")
    code, _out, err = cli("scores", "import", "pub", "s", path)
    assert code == 1 and err.startswith(f"error: {path}:3: nDCG@10 1.5 for topic 'q2'")
    assert _n_scores(db) == 0


def test_an_nfd_topic_id_is_put_in_nfc_and_said(snap: Path, cli, db: str) -> None:
    path = _file(snap, "nfd.te", ["runid all r7", f"map {NFD} 0.5000", "map q1 0.1000"])
    code, result, err = _import(cli, path)
    assert code == 0, err
    assert result["topics_normalised"] == [NFD]
    code, out, _err = cli("scores", "import", "pub", "s", path)
    assert "1 topic id put in Unicode normal form C" in out
    code, table, err = cli("scores", "per-topic", "pub", "s", "-m", "AP", "--qrels",
                           "published", "--json")
    assert code == 0, err
    rows = {r["topic"]: r["value"] for r in json.loads(table)["scores"]}
    assert rows[NFC] == 0.5 and NFD not in rows


def test_ids_that_differ_only_in_normalisation_are_one_topic_twice(snap: Path, cli,
                                                                   db: str) -> None:
    path = _file(snap, "dup.te", ["runid all r8", f"map {NFC} 0.5000", f"map {NFD} 0.1000"])
    code, _out, err = cli("scores", "import", "pub", "s", path)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"error: {path}:3: topic 'cafe\\u0301' and topic 'caf\\xe9' differ "
                          "only in Unicode normalisation")
    assert _n_scores(db) == 0


def test_an_all_line_without_per_topic_lines_is_not_a_contradiction(snap: Path, cli) -> None:
    path = _file(snap, "alone.te", ["runid all r9", "map q1 0.5000", "P_10 all 0.3000"])
    code, result, err = _import(cli, path)
    assert code == 0 and err == ""
    assert {p["measure"]: p["semantics"] for p in result["published_means"]} == {
        "P@10": "alone"}
    assert result["warnings"] == []
