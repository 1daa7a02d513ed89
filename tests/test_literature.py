"""Results reported in the literature: import (CSV, YAML, validated, atomic, idempotent), list,
and the report — per-year best and baseline, trends, gains, metric usage — on both databases."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from tcdb.operations import Database

HEADER = "publication,year,venue,model,category,role,metric,value,cross_validated,notes\n"
# A real-looking file: a quoted model name with a comma, UTF-8 names, metrics in other cases,
# a TREC-style measure name, a blank line in the middle and at the end, Windows line ends.
REAL = (HEADER
        + '"Lin, J. (2019) The neural hype and comparisons against weak baselines",2019,'
          'SIGIR Forum,"BM25+RM3, tuned",Probabilistic,baseline,ndcg@20,0.4514,no,\r\n'
        + "Yang et al. 2019,2019,SIGIR,BERT (MaxP),neural,best,NDCG@20,0.5020,yes,5-fold\r\n"
        + "\r\n"
        + "Dai & Callan,2019,SIGIR,BERT-FirstP,NEURAL,Best,nDCG@20,0.4900,TRUE,\r\n"
        + 'Müller & Sørensen,2020,ECIR,"CEDR, KNRM",neural,best,ndcg_cut_20,0.5381,1,'
          '"ausgewählt, séparément"\r\n'
        + "Nogueira 2020,2020,EMNLP,monoT5,neural,best,nDCG@20,0.5672,no,\r\n"
        + "Nogueira 2020,2020,EMNLP,BM25,probabilistic,baseline,nDCG@20,0.4240,no,\r\n"
        + "Nogueira 2020,2020,EMNLP,BM25,probabilistic,baseline,map,0.2531,0,\r\n"
        + "Sun 2023,2023,EMNLP,RankGPT,LLM,best,P@10,0.62,no,\r\n"
        + "\r\n")


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def _collection(name: str = "robust04") -> None:
    from tcdb.catalog.collections import add_collection

    add_collection(Database(), name)


def _count() -> int:
    from sqlalchemy import func
    from sqlmodel import select

    from tcdb.schema import ReportedResult

    with Database().session() as session:
        return int(session.exec(select(func.count()).select_from(ReportedResult)).one())


def _rows(*rows: tuple[object, ...]) -> str:
    return HEADER + "".join(",".join(str(v) for v in row) + "\n" for row in rows)


# ------------------------------------------------------------------------- import and list


def test_a_real_looking_csv_imports_once(db: str, tmp_path: Path) -> None:
    from tcdb import api

    _collection()
    path = _write(tmp_path / "robust04 results.csv", REAL)
    first = api.literature_import(path, "robust04")
    assert (first.status, first.n_added, first.n_unchanged) == ("added", 8, 0)
    again = api.literature_import(path, "robust04")
    assert (again.status, again.n_added, again.n_unchanged) == ("unchanged", 0, 8)
    assert _count() == 8
    frame = api.literature("robust04").to_frame()
    cedr = frame[frame["publication"] == "Müller & Sørensen"].iloc[0]
    assert (cedr["model"], cedr["metric"], cedr["value"], cedr["cross_validated"],
            cedr["notes"], cedr["venue"]) == ("CEDR, KNRM", "nDCG@20", 0.5381, True,
                                              "ausgewählt, séparément", "ECIR")
    assert sorted(set(frame["metric"])) == ["AP", "P@10", "nDCG@20"]
    assert set(frame["category"]) == {"probabilistic", "neural", "llm"}
    assert set(frame["role"]) == {"baseline", "best"}
    assert frame["year"].tolist() == sorted(frame["year"])
    lin = frame[frame["model"] == "BM25+RM3, tuned"].iloc[0]
    assert lin["publication"].startswith("Lin, J. (2019)") and not lin["cross_validated"]
    assert len(api.literature("robust04", metric="NDCG@20").to_frame()) == 6


def test_yaml_imports_with_item_lines(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    _collection()
    good = _write(tmp_path / "dl20.yaml", """\
results:
  - publication: "Pradeep et al. 2023: RankZephyr"
    year: 2023
    venue: arXiv
    model: RankZephyr
    category: LLM
    role: best
    metric: ndcg@10
    value: 0.7412
    cross_validated: false
  - publication: "Pradeep et al. 2023: RankZephyr"
    year: 2023
    model: BM25
    category: probabilistic
    role: baseline
    metric: nDCG@10
    value: .4796
    notes: Pyserini defaults
""")
    assert api.literature_import(good, "robust04").n_added == 2
    frame = api.literature("robust04").to_frame()
    assert frame[["model", "category", "metric", "value"]].values.tolist() == [
        ["BM25", "probabilistic", "nDCG@10", 0.4796], ["RankZephyr", "llm", "nDCG@10", 0.7412]]
    assert api.literature_import(good, "robust04").status == "unchanged"
    bad = _write(tmp_path / "bad.yaml", "- publication: A\n  year: 2019\n  model: M\n"
                 "  category: neural\n  role: best\n  metric: AP\n  value: 0.3\n"
                 "- publication: B\n  year: 2019\n  model: M\n  category: neural\n"
                 "  role: best\n  metric: AP\n  value: high\n")
    with pytest.raises(InputError) as caught:
        api.literature_import(bad, "robust04")
    assert str(caught.value) == f"{bad}:14: item 2 → value: must be a number, not the text 'high'"
    assert _count() == 2


@pytest.mark.parametrize(("row", "line", "reason"), [
    (("A", 2019, "", "M", "neural", "best", "nDCG@10", "0,452", "no", ""), 3,  # decimal comma
     "11 fields, the header has 10 (a field with a ',' inside needs double quotes)"),
    (("A", 2019, "", "M", "neural", "best", "nDCG@10", "n/a", "no", ""), 3,
     "value 'n/a' is not a number"),
    (("A", 2019, "", "M", "symbolic", "best", "nDCG@10", "0.4", "no", ""), 3,
     "unknown category 'symbolic': one of probabilistic / neural / llm"),
    (("A", 2999, "", "M", "neural", "best", "nDCG@10", "0.4", "no", ""), 3,
     f"year 2999 is in the future (it is {dt.datetime.now(dt.UTC).year})"),
    (("A", 1899, "", "M", "neural", "best", "nDCG@10", "0.4", "no", ""), 3,
     "year 1899 is implausible (before 1950)"),
    (("A", 2019, "", "M", "neural", "winner", "nDCG@10", "0.4", "no", ""), 3,
     "unknown role 'winner': one of baseline / best / other"),
    (("A", 2019, "", "", "neural", "best", "nDCG@10", "0.4", "no", ""), 3, "missing model"),
    (("A", 2019, "", "M", "neural", "best", "nDCG@10", "45.2", "no", ""), 3,
     "value 45.2 of nDCG@10 is outside [0, 1] (a percentage? write 0.452)"),
    (("A", 2019, "", "M", "neural", "best", "nDCG@10", "0.4", "maybe", ""), 3,
     "cross_validated 'maybe' is not one of true / false / yes / no / 1 / 0"),
    (("Yang et al. 2019", 2019, "", "BERT (MaxP)", "neural", "best", "ndcg@20", "0.5", "", ""),
     3, "duplicated row: 'Yang et al. 2019' reports the best nDCG@20 of 'BERT (MaxP)' already "
     "at line 2"),
])
def test_bad_rows_name_file_and_line_and_write_nothing(
        db: str, tmp_path: Path, cli, row: tuple[object, ...], line: int, reason: str) -> None:
    _collection()
    good = ("Yang et al. 2019", 2019, "SIGIR", "BERT (MaxP)", "neural", "best", "nDCG@20",
            "0.502", "yes", "")
    path = _write(tmp_path / "papers.csv", _rows(good, row))
    code, out, err = cli("literature", "import", path, "robust04")
    assert code == 1 and out == ""
    assert err.strip() == f"error: {path}:{line}: {reason}"
    assert len(err.strip().splitlines()) == 1
    assert _count() == 0


def test_header_problems_and_conflicts(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import ConflictError, InputError

    _collection()
    semicolons = _write(tmp_path / "excel.csv", "publication;year;model;category;role;metric;"
                        "value\nA;2019;M;neural;best;AP;0.3\n")
    with pytest.raises(InputError, match=r"excel.csv:1: unknown column .*separated by commas"):
        api.literature_import(semicolons, "robust04")
    missing = _write(tmp_path / "short.csv", "publication,year,model,role,metric,value\n")
    with pytest.raises(InputError, match="short.csv:1: missing column.s. category"):
        api.literature_import(missing, "robust04")
    path = _write(tmp_path / "a.csv", _rows(
        ("A", 2019, "", "M", "neural", "best", "AP", "0.30", "", ""),
        ("A", 2019, "", "B", "probabilistic", "baseline", "AP", "0.25", "", "")))
    api.literature_import(path, "robust04")
    corrected = _write(tmp_path / "b.csv", _rows(
        ("A", 2019, "", "M", "neural", "best", "AP", "0.31", "", ""),
        ("A", 2019, "", "B", "probabilistic", "baseline", "AP", "0.25", "", ""),
        ("C", 2020, "", "M", "neural", "best", "AP", "0.33", "", "")))
    with pytest.raises(ConflictError, match=r"b.csv:2: .* stored with value 0.3, the file says "
                       r"0.31 .*--replace"):
        api.literature_import(corrected, "robust04")
    assert _count() == 2
    result = api.literature_import(corrected, "robust04", replace=True)
    assert (result.status, result.n_added, result.n_replaced,
            result.n_unchanged) == ("replaced", 1, 1, 1)
    assert sorted(api.literature("robust04").to_frame()["value"]) == [0.25, 0.31, 0.33]


# -------------------------------------------------------------------------- the analysis


def _frame(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["publication", "year", "model", "category", "role",
                                       "metric", "value", "cross_validated"])


def test_trend_slope_and_interval_by_hand() -> None:
    from tcdb.analysis.literature import trend, trends

    years, values = pd.Series([2018, 2019, 2020]), pd.Series([0.40, 0.45, 0.50])
    exact = trend(years, values)
    assert exact["slope"] == pytest.approx(0.05) and exact["r"] == pytest.approx(1.0)
    assert exact["intercept"] == pytest.approx(0.40 - 0.05 * 2018)
    # (2018, .40), (2019, .47), (2020, .50): Sxx = 2, Sxy = .1, slope .05; residuals
    # −1/150, 2/150, −1/150: SSE = 6/150², s² = SSE / (n − 2), stderr = √(s² / Sxx) = √3/150
    noisy = trend(years, pd.Series([0.40, 0.47, 0.50]))
    stderr = math.sqrt(3) / 150
    assert noisy["slope"] == pytest.approx(0.05)
    half = 12.7062047361747 * stderr  # Student's t(.975) with n − 2 = 1 degree of freedom
    assert noisy["ci_low"] == pytest.approx(0.05 - half) and noisy["ci_high"] == \
        pytest.approx(0.05 + half)
    assert stderr == pytest.approx(stats.linregress(years, [0.40, 0.47, 0.50]).stderr)
    assert trend(pd.Series([2018, 2019]), pd.Series([0.4, 0.5]))["slope"] is None
    assert trend(pd.Series([2019] * 3), pd.Series([0.4, 0.5, 0.6]))["slope"] is None
    frame = _frame([("P1", 2018, "m", "neural", "best", "AP", 0.40, False),
                    ("P2", 2019, "m", "neural", "best", "AP", 0.45, True),
                    ("P3", 2020, "m", "neural", "best", "AP", 0.50, False),
                    ("P3", 2020, "b", "neural", "baseline", "AP", 0.10, False),
                    ("P4", 2020, "l", "llm", "best", "AP", 0.55, False)])
    by_category = trends(frame).set_index("category")
    assert by_category.loc["neural", "slope"] == pytest.approx(0.05)  # baselines left out
    assert by_category.loc["neural", "n"] == 3
    assert pd.isna(by_category.loc["llm", "slope"]) and by_category.loc["llm", "n"] == 1


def test_gains_per_year_and_metric_usage_by_hand() -> None:
    from tcdb.analysis.literature import gain, literature_summary

    assert gain(0.5, 0.4) == pytest.approx(25.0)
    assert gain(0.3, 0.4) == pytest.approx(-25.0)
    assert gain(0.5, None) is None and gain(0.5, 0.0) is None
    frame = _frame([("P1", 2019, "BERT", "neural", "best", "nDCG@10", 0.50, True),
                    ("P1", 2019, "BM25", "probabilistic", "baseline", "nDCG@10", 0.40, False),
                    ("P1", 2019, "BERT", "neural", "best", "AP", 0.30, True),
                    ("P2", 2019, "T5", "neural", "best", "nDCG@10", 0.44, False),
                    ("P2", 2019, "BM25", "probabilistic", "baseline", "nDCG@10", 0.38, False),
                    ("P3", 2020, "GPT", "llm", "best", "nDCG@10", 0.60, False),
                    ("P3", 2020, "GPT", "llm", "best", "P@10", 0.70, False)])
    summary = literature_summary(frame, "nDCG@10", reference=0.4)
    assert summary["per_year"] == [
        {"year": 2019, "category": "probabilistic", "best": None, "n_best": 0,
         "baseline": 0.40, "n_baseline": 2, "best_gain": None},
        {"year": 2019, "category": "neural", "best": 0.50, "n_best": 2, "baseline": None,
         "n_baseline": 0, "best_gain": pytest.approx(25.0)},
        {"year": 2020, "category": "llm", "best": 0.60, "n_best": 1, "baseline": None,
         "n_baseline": 0, "best_gain": pytest.approx(50.0)}]
    assert [(g["publication"], g["gain"]) for g in summary["gains"]] == [
        ("P1", pytest.approx(25.0)), ("P2", pytest.approx(10.0)), ("P3", pytest.approx(50.0))]
    assert summary["metric_usage"] == [
        {"metric": "nDCG@10", "n_publications": 3, "n_results": 5},
        {"metric": "AP", "n_publications": 1, "n_results": 1},
        {"metric": "P@10", "n_publications": 1, "n_results": 1}]
    assert (summary["n_results"], summary["n_publications"]) == (5, 3)


# -------------------------------------------------------------------- the report, CLI, API


def test_report_json_over_a_named_reference(db: str, tmp_path: Path, cli) -> None:
    _collection()
    path = _write(tmp_path / "lit.csv", _rows(
        ("P1", 2018, "", "m1", "neural", "best", "ndcg@10", 0.40, "no", ""),
        ("P2", 2019, "", "m2", "neural", "best", "nDCG@10", 0.45, "yes", ""),
        ("P3", 2020, "", "m3", "neural", "best", "NDCG@10", 0.50, "no", ""),
        ("P3", 2020, "", "BM25", "probabilistic", "baseline", "nDCG@10", 0.38, "no", ""),
        ("P3", 2020, "", "m3", "neural", "best", "map", 0.31, "no", "")))
    code, out, _ = cli("literature", "import", path, "robust04", "--json")
    assert code == 0 and json.loads(out)["n_added"] == 5
    code, out, _ = cli("literature", "import", path, "robust04")
    assert code == 0 and "unchanged" in out
    code, out, err = cli("literature", "report", "robust04", "--metric", "ndcg@10",
                         "--reference-value", "0.4", "--reference-name", "best TREC run",
                         "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["metric"] == "nDCG@10"
    assert report["reference"] == {"name": "best TREC run", "value": 0.4, "source": "value"}
    neural = next(t for t in report["trends"] if t["category"] == "neural")
    assert neural["slope"] == pytest.approx(0.05) and neural["n"] == 3
    assert (neural["first_year"], neural["last_year"]) == (2018, 2020)
    probabilistic = next(t for t in report["trends"] if t["category"] == "probabilistic")
    assert probabilistic["slope"] is None and probabilistic["ci_low"] is None
    assert [g["gain"] for g in report["gains"]] == [pytest.approx(0.0), pytest.approx(12.5),
                                                    pytest.approx(25.0)]
    assert {u["metric"]: u["n_publications"] for u in report["metric_usage"]} == {
        "nDCG@10": 3, "AP": 1}
    code, out, _ = cli("literature", "report", "robust04", "--metric", "nDCG@10",
                       "--reference-value", "0.4")
    assert code == 0
    assert "+25.0" in out and "–" in out and "0.0500" in out
    code, out, _ = cli("literature", "list", "robust04", "--metric", "MAP", "--json")
    assert code == 0
    assert [(r["model"], r["metric"], r["value"]) for r in json.loads(out)["results"]] == [
        ("m3", "AP", 0.31)]
    code, _, err = cli("literature", "report", "robust04", "--metric", "P@10")
    assert code == 1 and "has no reported P@10 (reported: AP, nDCG@10)" in err


def test_gain_over_a_stored_runs_score(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.api import run_import
    from tcdb.errors import FieldError
    from tcdb.scoring.scores import score_table
    from tests.builders import build_snapshot, write_run_file

    build_snapshot(tmp_path, "robust04", "2004", {f"d{i}": f"text {i}" for i in range(1, 5)},
                   {"301": "international organized crime", "302": "poliomyelitis"},
                   [("301", "d1", 1), ("302", "d2", 1)])
    # P@1: topic 301 finds d1 first (1), topic 302 puts d3 first (0): mean 0.5
    run_import("robust04", "2004", [write_run_file(tmp_path / "runs", "pircRB04t3", [
        ("301", "d1", 2.0), ("301", "d2", 1.0), ("302", "d3", 2.0), ("302", "d2", 1.0)])])
    path = _write(tmp_path / "lit.csv", _rows(
        ("P1", 2019, "", "m1", "neural", "best", "p@1", 0.6, "no", "")))
    api.literature_import(path, "robust04")
    report = api.literature_report("robust04", metric="P@1", reference_run="2004/pircRB04t3")
    mean = score_table(Database(),
                       "robust04", "2004", "original", ["P@1"], ["pircRB04t3"])["value"][0]
    assert report.reference.value == pytest.approx(mean) == pytest.approx(0.5)
    assert report.reference.model_dump() | {"value": 0.5} == {
        "name": "pircRB04t3", "value": 0.5, "source": "run", "snapshot": "2004",
        "run": "pircRB04t3", "qrels": "original", "n_topics": 2}
    assert report.gains[0].gain == pytest.approx(20.0)
    assert api.literature("robust04").to_frame()["metric"].tolist() == ["P@1"]
    with pytest.raises(FieldError, match="^reference_value/reference_run: give one"):
        api.literature_report("robust04", metric="P@1", reference_value=0.4,
                              reference_run="2004/pircRB04t3")
    with pytest.raises(FieldError, match="^metric: 'robust04' has no reported AP"):
        api.literature_report("robust04", metric="AP")


def test_metric_names_normalise_in_any_case() -> None:
    from tcdb.collections.results_tables.literature import normalise_metric

    assert [normalise_metric(n) for n in ["ndcg@10", "NDCG@10", " nDCG@10 ", "map", "MAP",
                                          "ndcg_cut_20", "mrr@10", "p@20", "recall@1000",
                                          "bpref", "Success@5 (dev)", "latency ms"]] == [
        "nDCG@10", "nDCG@10", "nDCG@10", "AP", "AP", "nDCG@20", "RR@10", "P@20", "R@1000",
        "Bpref", "Success@5 (dev)", "latency ms"]
