"""A collection whose names and texts are hostile: spreadsheet formulas, Markdown images and
links to a port nothing listens on (127.0.0.1:9), HTML with handlers.

A helper module (not a test module): `tests/test_hostile_output.py` (exports, AppTest pages)
and `tests/test_dashboard_browser.py` (the DOM, the requests) seed it and look for the texts.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tcdb.operations import Database

COLLECTION = "hostile"
PIXEL = "http://127.0.0.1:9/pixel.png"  # port 9 (discard): a fetch would be a tracking pixel
FORMULA = "=cmd|' /C calc'!A0"
AT_SUM = "@SUM(1+1)"
IMAGE = f"![x]({PIXEL})"
LINK = "[text](http://127.0.0.1:9/link)"
HTML = "<img src=x onerror=alert(1)>"
DESCRIPTION = f"{IMAGE} {LINK} {HTML} {FORMULA}"
# Run tags hold no whitespace (a TREC run's sixth column): the same attacks without spaces.
TAGS = {"pivot": "bm25", "formula": "=HYPERLINK(\"http://127.0.0.1:9\")", "at": AT_SUM,
        "image": IMAGE, "html": "<img/src=x/onerror=alert(1)>"}
QUERIES = {"1": FORMULA, "2": AT_SUM, "3": IMAGE, "4": HTML, "5": "-2+3", "6": LINK}
TEXTS = {"d1": FORMULA, "d2": AT_SUM, "d3": "+SUM(A1)", "d4": "-1", "d5": "\tTAB", "d6": IMAGE,
         "d7": HTML, "d8": "plain text", "@d9": "an id a spreadsheet would evaluate"}
POOL = "=pool"
LABELS = ["2024-01", "2024-02"]
PUBLICATION = f"{FORMULA} {IMAGE}"
EVERY_TEXT = [DESCRIPTION, *TAGS.values(), *QUERIES.values(), *TEXTS.values(), PUBLICATION]


def seed_hostile(tmp_path: Path) -> None:
    """Two snapshots of `COLLECTION` with the hostile queries and texts, the five runs (bm25
    the pivot) evaluated in both, a pool `=pool` of every document on the last, literature."""
    import json

    from tcdb import api
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tests.builders import write_qrels_file, write_run_file, write_topics

    add_collection(Database(), COLLECTION, description=DESCRIPTION)
    docs = list(TEXTS)
    # JSONL documents: a text starts where the file says (TREC's <TEXT> adds line breaks).
    tmp_path.mkdir(parents=True, exist_ok=True)
    documents = tmp_path / "docs.jsonl"
    documents.write_text("".join(json.dumps({"id": d, "text": t}) + "\n"
                                 for d, t in TEXTS.items()), encoding="utf-8")
    for j, label in enumerate(LABELS):
        qrels = [(t, d, (int(t) + i) % 3) for t in QUERIES for i, d in enumerate(docs)
                 if (int(t) + i) % 2 == 0]
        source = LocalSource(documents, write_topics(tmp_path / label / "topics.tsv", QUERIES),
                             write_qrels_file(tmp_path / label / "qrels.txt", qrels))
        ingest_snapshot(Database(), COLLECTION, label, source, date=dt.date(2024, j + 1, 1))
        paths = []
        for k, tag in enumerate(TAGS.values()):
            rows = [(t, d, float(len(docs) - ((i + k + j) % len(docs))))
                    for t in QUERIES for i, d in enumerate(docs)]
            paths.append(write_run_file(tmp_path / "runs" / label, tag, rows, name=f"r{k}.run"))
        api.run_import(COLLECTION, label, paths)
        api.evaluate(COLLECTION, label, measures=["nDCG@10", "AP", "P@5"])
    api.pool_build(COLLECTION, LABELS[-1], POOL, depth=len(TEXTS), all_runs=True,
                   description=DESCRIPTION)
    literature = tmp_path / "literature.csv"
    literature.write_text(
        "publication,year,venue,model,category,role,metric,value,cross_validated,notes\n"
        f"\"{PUBLICATION}\",2020,\"{HTML}\",\"{IMAGE}\",neural,best,nDCG@10,0.5,no,x\n"
        f"\"{PUBLICATION}\",2021,v,\"{AT_SUM}\",neural,best,nDCG@10,0.6,no,x\n"
        f"other,2022,v,\"{LINK}\",neural,best,nDCG@10,0.55,no,x\n", encoding="utf-8")
    api.literature_import(literature, COLLECTION)
