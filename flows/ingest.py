"""Ingest flows: one snapshot now, or every declared snapshot of a spec that is new and ready.

`ingest_new_snapshots` is what the nightly deployment runs: it reads a collection spec, finds
the snapshots it declares that are not `complete` yet, ingests those whose source is there and
skips — with the reason, logged and in the artifact — those whose source is not there yet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from tcdb.errors import TcdbError
from tcdb.flows.artifacts import drift_section, markdown_table, publish, render, timings_section
from tcdb.flows.common import SOURCE_RETRIES, SOURCE_RETRY_DELAYS, Stopwatch, retry_transient
from tcdb.flows.state import snapshot_drift

if TYPE_CHECKING:
    from tcdb.collections.sources import SnapshotSource
    from tcdb.ingest import IngestReport


@task(name="ingest-snapshot", retries=SOURCE_RETRIES, retry_delay_seconds=SOURCE_RETRY_DELAYS,
      retry_condition_fn=retry_transient, cache_policy=NO_CACHE)
def ingest_task(
    collection: str,
    label: str,
    open_source: Callable[[], SnapshotSource],
    date: dt.date | None = None,
    qrels_name: str = "original",
    with_text: bool = True,
    replace: bool = False,
) -> IngestReport:
    """Open the source and ingest it; a retry opens the source afresh (the ingest is atomic)."""
    from tcdb.ingest import ingest_snapshot as ingest_core

    return ingest_core(collection, label, open_source(), date=date, qrels_name=qrels_name,
                       with_text=with_text, replace=replace)


@task(name="pending-snapshots", cache_policy=NO_CACHE)
def pending_task(spec_path: str) -> tuple[Any, list[tuple[Any, str | None]]]:
    """Sync the spec's collection and list its declared, not yet complete snapshots."""
    from tcdb.collections.spec import load_spec
    from tcdb.ingest import pending_snapshots

    pending = pending_snapshots(spec_path)
    return load_spec(spec_path), pending


def _report_row(report: IngestReport) -> dict[str, Any]:
    return {"label": report.label, "status": report.status, "documents": report.n_documents,
            "new_contents": report.n_new_contents, "topics": report.n_topics,
            "judgments": report.n_judgments, "seconds": round(report.seconds, 3),
            "reason": None}


@flow(name="ingest-snapshot", log_prints=True)
def ingest_snapshot(
    collection: str,
    label: str,
    docs: str | None = None,
    topics: str | None = None,
    qrels: str | None = None,
    irds: str | None = None,
    date: dt.date | None = None,
    qrels_name: str = "original",
    with_text: bool = True,
    replace: bool = False,
) -> dict[str, Any]:
    """Ingest one snapshot from an ir_datasets id or local files (as `tcdb snapshot ingest`)."""
    from tcdb.collections.sources import open_source

    watch = Stopwatch()

    def source() -> SnapshotSource:
        return open_source(irds, docs, topics, qrels)

    with watch.step(f"ingest {label}"):
        report = ingest_task(collection, label, source, date, qrels_name, with_text, replace)
    drift = {label: snapshot_drift(collection, label)}
    row = _report_row(report)
    markdown = render(f"Ingest {collection} / {label}: {report.status}", [
        markdown_table(list(row), [list(row.values())]),
        drift_section(drift),
        timings_section(watch),
    ])
    publish(f"ingest-{collection}-{label}", markdown, f"ingest of {collection}/{label}")
    return {"collection": collection, "snapshots": [row], "drift": drift,
            "seconds": round(watch.total, 3)}


@flow(name="ingest-new-snapshots", log_prints=True)
def ingest_new_snapshots(spec_path: str, with_text: bool = True) -> dict[str, Any]:
    """Ingest every declared snapshot of a spec that is not complete and whose source is there.

    Snapshots already complete are left alone (idempotent: a second run ingests nothing);
    those whose source is missing are skipped with the reason and picked up by a later run.
    Bad input fails the flow at once with the core's message; a transient read error retries.
    """
    logger = get_run_logger()
    watch = Stopwatch()
    with watch.step("read spec"):
        spec, pending = pending_task(str(spec_path))
    pending_labels = {snap.label for snap, _ in pending}
    rows: list[dict[str, Any]] = [
        {"label": snap.label, "status": "present", "documents": None, "new_contents": None,
         "topics": None, "judgments": None, "seconds": None, "reason": None}
        for snap in spec.snapshots if snap.label not in pending_labels
    ]
    drift: dict[str, Any] = {}
    failure: BaseException | None = None
    for snap, reason in pending:
        if reason is not None:
            logger.warning("skipping %s/%s: %s", spec.name, snap.label, reason)
            rows.append({"label": snap.label, "status": "skipped", "documents": None,
                         "new_contents": None, "topics": None, "judgments": None,
                         "seconds": None, "reason": reason})
            continue
        try:
            with watch.step(f"ingest {snap.label}"):
                report = ingest_task(spec.name, snap.label, snap.open_source, snap.date,
                                     with_text=with_text)
        except TcdbError as exc:
            rows.append({"label": snap.label, "status": "failed", "documents": None,
                         "new_contents": None, "topics": None, "judgments": None,
                         "seconds": None, "reason": str(exc)})
            failure = exc
            break
        logger.info("%s/%s %s: %d documents, %d topics, %d judgments in %.1f s", spec.name,
                    snap.label, report.status, report.n_documents, report.n_topics,
                    report.n_judgments, report.seconds)
        rows.append(_report_row(report))
        drift[snap.label] = snapshot_drift(spec.name, snap.label)
    order = {snap.label: i for i, snap in enumerate(spec.snapshots)}
    rows.sort(key=lambda r: order[r["label"]])
    result = {
        "collection": spec.name,
        "spec": str(spec.path),
        "ingested": [r["label"] for r in rows if r["status"] == "ingested"],
        "skipped": {r["label"]: r["reason"] for r in rows if r["status"] == "skipped"},
        "present": [r["label"] for r in rows if r["status"] in ("present", "unchanged")],
        "failed": {r["label"]: r["reason"] for r in rows if r["status"] == "failed"},
        "snapshots": rows,
        "drift": drift,
        "seconds": round(watch.total, 3),
    }
    publish(f"ingest-{spec.name}", _new_snapshots_markdown(result, watch),
            f"new snapshots of {spec.name} from {Path(spec.path).name}")
    if failure is not None:
        raise failure
    return result


def _new_snapshots_markdown(result: dict[str, Any], watch: Stopwatch) -> str:
    counts = (f"**{len(result['ingested'])}** ingested, **{len(result['skipped'])}** skipped "
              f"(source not there yet), **{len(result['present'])}** already present"
              + (f", **{len(result['failed'])}** failed" if result["failed"] else ""))
    columns = ["snapshot", "status", "documents", "new contents", "topics", "judgments",
               "seconds", "reason"]
    table = markdown_table(columns, [list(r.values()) for r in result["snapshots"]])
    return render(f"New snapshots of {result['collection']}", [
        counts, table, drift_section(result["drift"]) if result["drift"] else "",
        timings_section(watch),
    ])
