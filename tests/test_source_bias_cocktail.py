"""Cocktail's own layout read as it is: one BEIR corpus per source under `corpus/`, ids mixed
as `<_id>-<source>`, qrels on the ids carried to every rewrite — on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import select

from tcdb.operations import Database
from tcdb.schema import SnapshotDocument
from tests.builders import write_run_file

LLM = "llama-2-7b-chat-tmp0.2"


def _dataset(folder: Path) -> Path:
    (folder / "corpus").mkdir(parents=True)
    (folder / "qrels").mkdir()
    human = [{"_id": "0", "title": "Cats", "text": "cats purr"},
             {"_id": "1", "title": "", "text": "dogs bark"},
             {"_id": "2", "text": "birds sing"}]
    llm = [{"_id": "0", "title": "Cats", "text": "felines purr softly"},
           {"_id": "1", "title": "", "text": "dogs bark"},  # a refused rewrite
           {"_id": "9", "text": "a rewrite of a document the human corpus lacks"}]
    for name, docs in (("human", human), (LLM, llm)):
        (folder / "corpus" / f"{name}.jsonl").write_text(
            "".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "cats"}\n'
                                          '{"_id": "q2", "text": "dogs"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t0\t1\n"
                                               "q2\t1\t2\nq2\t2\t0\n", encoding="utf-8")
    return folder


def test_a_cocktail_dataset_folder_ingests_and_reports(db: str, tmp_path: Path, cli) -> None:
    folder = _dataset(tmp_path / "nfcorpus")
    assert cli("collection", "add", "cocktail")[0] == 0
    code, out, err = cli("snapshot", "ingest", "cocktail", "nfcorpus", "--cocktail", folder,
                         "--json")
    assert code == 0, err
    ingest = json.loads(out)
    assert ingest["n_by_source"] == {"human": 3, "llm": 3} and ingest["n_judgments"] == 3
    with Database().engine().connect() as conn:
        rows = {e: (s, t) for e, s, t in conn.execute(select(
            SnapshotDocument.external_id, SnapshotDocument.source_label,
            SnapshotDocument.twin_of))}
    assert rows == {"0-human": ("human", None), "1-human": ("human", None),
                    "2-human": ("human", None), f"0-{LLM}": ("llm", "0-human"),
                    f"1-{LLM}": ("llm", "1-human"), f"9-{LLM}": ("llm", None)}
    # A run as Cocktail's code writes it: the rewrites first on q1, the originals on q2.
    run = write_run_file(tmp_path, "dense", [
        ("q1", f"0-{LLM}", 3.0), ("q1", "0-human", 2.0),
        ("q2", "1-human", 3.0), ("q2", f"1-{LLM}", 2.0)])
    assert cli("run", "import", "cocktail", "nfcorpus", run)[0] == 0
    code, out, err = cli("report", "source-bias", "cocktail", "nfcorpus", "-m", "nDCG@1",
                         "--bootstrap", "0", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["sets"]["llm"]["n_copied"] == 2  # 0 on q1 and 1 on q2; 2 has no rewrite
    [run_figures] = report["measures"]["nDCG@1"]["runs"]
    # human: q1 0, q2 1 → 0.5; llm: q1 1, q2 0 → 0.5; Relative Δ 0, per topic −200 and +200
    assert (run_figures["human"], run_figures["llm"], run_figures["relative_delta"]) == (
        0.5, 0.5, 0.0)
    assert [t["delta"] for t in run_figures["per_topic"]] == [-200.0, 200.0]
