"""The chain after a new snapshot: ingest → import runs → evaluate → report.

Each step is the flow of its own (a subflow here), so each leaves its own artifact; this flow
adds a summary of the collection as it now stands. The first failing step stops the chain with
its message.
"""

from __future__ import annotations

from typing import Any

from prefect import flow

from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch
from tcdb.flows.evaluate import evaluate
from tcdb.flows.ingest import ingest_new_snapshots
from tcdb.flows.runs import DEFAULT_DROP_FOLDER, import_runs
from tcdb.operations.database import Database


def collection_summary(db: Database, collection: str) -> list[dict[str, Any]]:
    """Per complete snapshot: documents, topics, judgments and runs (for the report)."""
    from tcdb.catalog.collections import list_snapshots
    from tcdb.runs import list_runs

    runs: dict[str, int] = {}
    for run in list_runs(db, collection):
        runs[run["snapshot"]] = runs.get(run["snapshot"], 0) + 1
    return [{"snapshot": s["label"], "date": s["date"], "documents": s["documents"],
             "topics": s["topics"], "judgments": s["judgments"], "runs": runs.get(s["label"], 0)}
            for s in list_snapshots(db, collection) if s["status"] == "complete"]


@flow(name="refresh", log_prints=True)
def refresh(spec_path: str, drop_folder: str = DEFAULT_DROP_FOLDER,
            measures: list[str] | None = None, with_text: bool = True) -> dict[str, Any]:
    """Bring one collection up to date: new snapshots, new runs, missing scores, a report."""
    watch = Stopwatch()
    with watch.step("ingest"):
        ingested = ingest_new_snapshots(spec_path, with_text=with_text)
    collection = ingested["collection"]
    with watch.step("import runs"):
        imported = import_runs(collection=collection, drop_folder=drop_folder)
    with watch.step("evaluate"):
        evaluated = evaluate(collection=collection, measures=measures)
    with watch.step("report"):
        summary = collection_summary(Database(), collection)
    columns = ["snapshot", "date", "documents", "topics", "judgments", "runs"]
    publish(f"refresh-{collection}", render(f"{collection} refreshed", [
        f"**{len(ingested['ingested'])}** snapshot(s) ingested, "
        f"**{len(ingested['skipped'])}** waiting for their source; "
        f"**{len(imported['imported'])}** run(s) imported; "
        f"**{len(evaluated['targets'])}** (snapshot, qrels) pair(s) evaluated",
        markdown_table(columns, [[row[c] for c in columns] for row in summary]),
        timings_section(watch),
    ]), f"refresh of {collection}")
    return {"collection": collection, "ingest": ingested, "runs": imported,
            "evaluate": evaluated, "summary": summary, "seconds": round(watch.total, 3)}
