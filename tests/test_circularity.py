"""Circularity (issue 44, Build 4): a run whose ir_metadata names the model family of the LLM that
judged the qrels is flagged in every report that ranks it under those qrels — in the lineage
(JSON, paper tables' comments) and below the terminal table — and in none that ranks it under
people's qrels. Both databases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcdb.analysis.circularity import model_family, names_family
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C = "circ"
DOCS = {f"d{i}": f"text {i}" for i in range(10)}
TOPICS = {"1": "one", "2": "two"}
HUMAN = [("1", "d1", 1), ("1", "d2", 0), ("2", "d5", 1), ("2", "d6", 0)]
LLM = [("1", "d1", 1), ("1", "d2", 1), ("2", "d5", 0), ("2", "d6", 1)]


@pytest.mark.parametrize(("model", "family"), [
    ("gpt-4o", "gpt"), ("openai/gpt-4o-2024-08-06", "gpt"), ("o1-mini", "gpt"),
    ("meta-llama/Llama-3.1-70B-Instruct", "llama"), ("llama3.3:70b", "llama"),
    ("qwen2.5:72b", "qwen"), ("mixtral-8x7b-instruct", "mistral"), ("falcon-40b", "falcon"),
])
def test_a_model_family_by_its_name(model: str, family: str) -> None:
    assert model_family(model) == family


def test_what_names_a_family_and_what_does_not() -> None:
    assert names_family(["rerank BM25 top-100 with GPT-4o-mini (listwise)"], "gpt") == \
        "gpt-4o-mini"
    assert names_family(["ChatGPT query rewriting"], "gpt") == "chatgpt"
    assert names_family(["uses LlamaIndex and BM25"], "llama") is None  # a framework
    assert names_family(["BM25, RM3"], "gpt") is None
    assert names_family(["monoT5-3b reranker"], "t5") == "monot5-3b"


def _write_ir_metadata(run: Path, text: str) -> None:
    run.with_name(run.name.split(".", 1)[0] + ".yaml").write_text(text, encoding="utf-8")


@pytest.fixture
def judged(db: str, tmp_path: Path, cli) -> Path:
    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, HUMAN, qrels_name="human")
    sidecar = tmp_path / "llm.yaml"
    sidecar.write_text("judge_kind: llm\nmodel: gpt-4o\nmodel_revision: gpt-4o-2024-08-06\n"
                       "provider: openai\n", encoding="utf-8")
    code, _, err = cli("qrels", "import", C, "s1", "llm", write_qrels_file(tmp_path / "llm.txt",
                                                                          LLM),
                       "--provenance", sidecar)
    assert code == 0, err
    runs = tmp_path / "runs"
    gpt = write_run_file(runs, "gpt-rerank", [("1", "d2", 2.0), ("1", "d1", 1.0),
                                              ("2", "d6", 2.0)])
    _write_ir_metadata(gpt, "tag: gpt-rerank\nmethod:\n  retrieval:\n    - name: bm25\n"
                       "    - name: listwise reranking with gpt-4o-mini\n      reranks: bm25\n")
    bm25 = write_run_file(runs, "bm25", [("1", "d1", 2.0), ("2", "d5", 1.0)])
    _write_ir_metadata(bm25, "tag: bm25\nmethod:\n  retrieval:\n    - name: bm25\n")
    code, _, err = cli("run", "import", C, "s1", gpt, bm25)
    assert code == 0, err
    return tmp_path


def test_a_run_of_the_judges_family_is_flagged_under_its_qrels_only(judged: Path,
                                                                    cli) -> None:
    from tcdb import api

    under_llm = api.evaluate(C, "s1", qrels="llm", measures=["P@2"])
    assert under_llm.lineage is not None
    assert [(f.run, f.family, f.named_as, f.qrels) for f in under_llm.lineage.circular] == [
        ("gpt-rerank", "gpt", "gpt-4o-mini", "s1/llm")]
    assert any(line.startswith("circularity: run s1/gpt-rerank")
               for line in under_llm.lineage.lines())
    under_people = api.evaluate(C, "s1", qrels="human", measures=["P@2"])
    assert under_people.lineage is not None and under_people.lineage.circular == []

    code, out, _ = cli("evaluate", C, "s1", "--qrels", "llm", "-m", "P@2")
    assert code == 0
    assert "circularity: run s1/gpt-rerank names 'gpt-4o-mini' (gpt family)" in out
    assert "bm25 names" not in out
    code, out, _ = cli("evaluate", C, "s1", "--qrels", "human", "-m", "P@2")
    assert code == 0 and "circularity" not in out
    code, out, _ = cli("evaluate", C, "s1", "--qrels", "llm", "-m", "P@2", "--json")
    assert json.loads(out)["lineage"]["circular"][0]["run"] == "gpt-rerank"
    from tcdb.operations.paper import render

    assert "circularity: run s1/gpt-rerank" in render(under_llm.paper_table(), "latex")


def test_the_judge_agreement_report_flags_it_too(judged: Path, cli) -> None:
    code, out, err = cli("report", "judge-agreement", C, "s1", "--qrels", "human", "--vs", "llm",
                         "--measure", "P@2", "--compute", "--bootstrap", "50")
    assert code == 0, err
    assert "circularity: run s1/gpt-rerank" in out


def test_the_judges_page_rings_and_names_the_flagged_run(judged: Path) -> None:
    from tcdb.operations import Database
    from tcdb.scoring.evaluate import evaluate
    from tests.dashboard_pages import chart_with, clear_cache, open_page

    for name in ("human", "llm"):
        evaluate(Database(), C, "s1", name, ["P@2"])
    clear_cache()
    at = open_page("judges", collection=C, snapshot="s1", qrels="human", vs="llm",
                   measure="P@2", k="2")
    points = chart_with(at, "score_a", "score_b", "circular")
    assert dict(zip(points["run"], points["circular"], strict=True)) == {
        "gpt-rerank": True, "bm25": False}
    warnings = [w.value.replace("\\", "") for w in at.warning]  # plain() escapes Markdown
    assert any("circularity: run s1/gpt-rerank" in w for w in warnings), warnings
