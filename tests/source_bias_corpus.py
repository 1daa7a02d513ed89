"""The source-bias test corpus (Cocktail-shaped BEIR files with real files' quirks) and its
ingest with three runs (`ingest_twins`, the `twins` fixture of conftest.py): shared by the
report's and the page's tests.

A helper module (not a test module): test modules import from here.
"""

from __future__ import annotations

import json
from pathlib import Path

from tcdb.catalog.collections import add_collection
from tcdb.collections.sources.snapshot import open_source
from tcdb.ingest import ingest_snapshot
from tcdb.operations import Database
from tests.builders import write_run_file

CORPUS = [
    {"_id": "h1", "title": "Cats", "text": "cats purr loudly", "source": "human",
     "metadata": {"url": "x"}},
    {"_id": "l1", "title": "Cats", "text": "felines emit a purring sound", "source": "llm",
     "twin_of": "h1"},
    {"_id": "h2", "text": "dogs bark", "source": "human"},
    {"_id": "l2", "text": "dogs  bark\n", "source": "llm", "twin_of": "h2"},  # refused rewrite
    {"_id": 7, "text": "birds sing", "source": "human"},
    {"_id": "7-llm", "text": "avians vocalise", "source": "llm", "twin_of": 7},
]
# BEIR qrels with their header: the originals judged, one twin with a judgment of its own.
QRELS = "query-id\tcorpus-id\tscore\n1\th1\t1\n1\t7\t0\n2\th2\t1\n1\t7-llm\t1\n"
RUNS = {
    "llm-first": {"1": ["l1", "h1", "7-llm", "7"], "2": ["l2", "h2"]},
    "human-first": {"1": ["h1", "l1", "7", "7-llm"], "2": ["h2", "l2"]},
    "indifferent": {"1": ["h1", "l1", "7", "7-llm"], "2": ["l2", "h2"]},
}
# What the per-source qrels must be, written out by hand.
HUMAN_QRELS = {"1": {"h1": 1, "7": 0}, "2": {"h2": 1}}
LLM_QRELS = {"1": {"l1": 1, "7-llm": 1}, "2": {"l2": 1}}  # l1, l2 copied; 7-llm its own


def write_corpus(folder: Path, corpus: list[dict[str, object]] = CORPUS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(d) for d in corpus]
    lines.insert(3, "")  # a blank line, skipped
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        '{"_id": "1", "text": "cats"}\n{"_id": "2", "text": "dogs"}\n', encoding="utf-8")
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text(QRELS, encoding="utf-8")
    return folder


def ingest_twins(tmp_path: Path) -> Path:
    """The corpus ingested as `cocktail/s1`, the three runs imported (`indifferent` with
    `llm-first` as its first stage)."""
    from tcdb.api import run_import

    folder = write_corpus(tmp_path / "beir")
    add_collection(Database(), "cocktail")
    ingest_snapshot(Database(), "cocktail", "s1", open_source(
        docs=folder / "corpus.jsonl", topics=folder / "queries.jsonl",
        qrels=folder / "qrels" / "test.tsv"))
    files = {tag: write_run_file(tmp_path / "runs", tag, [
        (topic, doc, 10.0 - rank) for topic, docs in ranking.items()
        for rank, doc in enumerate(docs)]) for tag, ranking in RUNS.items()}
    run_import("cocktail", "s1", [files["llm-first"], files["human-first"]])
    run_import("cocktail", "s1", [files["indifferent"]], first_stage="llm-first")
    return tmp_path
