"""The Literature page draws what `tcdb literature report` computes, on both databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcdb.operations import Database
from tests.dashboard_pages import chart_with, charts, clear_cache, open_page, table_with

PAPERS = """\
publication,year,venue,model,category,role,metric,value,cross_validated,notes
Lin 2019,2018,SIGIR Forum,"BM25+RM3, tuned",probabilistic,baseline,nDCG@10,0.38,no,
Lin 2019,2018,SIGIR Forum,"BM25+RM3, tuned",probabilistic,best,nDCG@10,0.40,yes,
Yang 2019,2019,SIGIR,BERT,neural,best,ndcg@10,0.45,yes,5-fold
Nogueira 2020,2020,EMNLP,monoT5,neural,best,nDCG@10,0.50,no,
Nogueira 2020,2020,EMNLP,monoT5,neural,best,AP,0.31,no,
Nogueira 2020,2020,EMNLP,BM25,probabilistic,baseline,nDCG@10,0.36,no,
Yang 2019,2019,SIGIR,BERT,neural,baseline,nDCG@10,0.41,no,
Sun 2023,2023,EMNLP,RankGPT,llm,best,nDCG@10,0.55,no,
"""


@pytest.fixture
def papers(db: str, tmp_path: Path) -> str:
    from tcdb import api
    from tcdb.catalog.collections import add_collection

    add_collection(Database(), "robust04")
    add_collection(Database(), "aaa-empty")
    path = tmp_path / "robust04.csv"
    path.write_text(PAPERS, encoding="utf-8")
    api.literature_import(path, "robust04")
    return "robust04"


def test_the_page_draws_points_trends_and_the_reference(papers: str) -> None:
    from tcdb import api

    clear_cache()
    at = open_page("literature", metric="nDCG@10", reference="0.4",
                   reference_name="best TREC run")
    assert at.title[0].value == "Literature"
    assert {s.label: s.value for s in at.selectbox} == {"Collection": "robust04",
                                                        "Metric": "nDCG@10"}
    points = chart_with(at, "year", "value", "category", "role", "validation")
    assert sorted(zip(points["year"], points["model"], points["role"], points["value"],
                      points["validation"], strict=True)) == [
        (2018, "BM25+RM3, tuned", "baseline", 0.38, "not cross-validated"),
        (2018, "BM25+RM3, tuned", "best", 0.40, "cross-validated"),
        (2019, "BERT", "baseline", 0.41, "not cross-validated"),
        (2019, "BERT", "best", 0.45, "cross-validated"),
        (2020, "BM25", "baseline", 0.36, "not cross-validated"),
        (2020, "monoT5", "best", 0.50, "not cross-validated"),
        (2023, "RankGPT", "best", 0.55, "not cross-validated")]
    # the trend needs three best figures: probabilistic and llm have one, neural two
    assert not any("trend" in f.columns for _, frames in charts(at) for f in frames)
    rule = chart_with(at, "reference", "name")
    assert rule.to_dict("records") == [{"reference": 0.4, "name": "best TREC run"}]
    spec = next(s for s, frames in charts(at) if any("validation" in f.columns for f in frames))
    encodings = [layer.get("encoding", {}) for layer in spec["layer"]]
    assert any(e.get("fillOpacity", {}).get("field") == "role" and
               e.get("shape", {}).get("field") == "validation" for e in encodings)
    per_year = table_with(at, "year", "category", "best", "baseline")
    report = api.literature_report("robust04", metric="nDCG@10", reference_value=0.4,
                                   reference_name="best TREC run")
    shown = per_year[["year", "category", "best", "baseline", "best_gain"]].astype(object)
    assert shown.where(shown.notna(), None).to_dict("records") == [
        {k: getattr(r, k) for k in ("year", "category", "best", "baseline", "best_gain")}
        for r in report.per_year]
    assert per_year.loc[per_year["category"] == "llm", "best_gain"].tolist() == \
        [pytest.approx(37.5)]
    usage = table_with(at, "metric", "n_publications")
    assert dict(zip(usage["metric"], usage["n_publications"], strict=True)) == {
        "nDCG@10": 4, "AP": 1}


def test_trend_lines_follow_the_report(papers: str, tmp_path: Path) -> None:
    from tcdb import api

    path = tmp_path / "more.csv"
    path.write_text(PAPERS.splitlines()[0] + "\nMacAvaney 2020,2020,SIGIR,CEDR,neural,best,"
                    "nDCG@10,0.55,yes,\n", encoding="utf-8")
    api.literature_import(path, "robust04")
    clear_cache()
    at = open_page("literature", collection="robust04", metric="nDCG@10")
    lines = chart_with(at, "category", "year", "trend")
    # neural best figures (2019, .45), (2020, .50), (2020, .55): slope .075 per year
    assert lines["category"].unique().tolist() == ["neural"]
    assert lines["year"].tolist() == [2019, 2020]
    assert lines["slope"].tolist() == [pytest.approx(0.075)] * 2
    assert lines["trend"].tolist() == [pytest.approx(0.45), pytest.approx(0.525)]
    assert not any("reference" in f.columns for _, frames in charts(at) for f in frames)


def test_a_collection_without_literature_says_how_to_import(papers: str) -> None:
    clear_cache()
    at = open_page("literature", collection="aaa-empty")
    assert any("tcdb literature import FILE aaa-empty" in i.value for i in at.info)
