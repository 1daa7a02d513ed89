"""Ingest flows: one snapshot now, or every declared snapshot of a spec that is new and ready.

`ingest_new_snapshots` is what the nightly deployment runs: it reads a collection spec, finds
the snapshots it declares that are not `complete` yet, ingests those whose source is there and
skips — with the reason, logged and in the artifact — those whose source is not there yet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prefect import flow, get_run_logger

from tcdb.errors import TcdbError
from tcdb.flows.artifacts import drift_section, markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch
from tcdb.flows.state import snapshot_drift
from tcdb.ingest.snapshot import SnapshotIngestRequest
from tcdb.operations.database import Database

if TYPE_CHECKING:
    from tcdb.ingest.report import SnapshotIngestResult


def _ingest(request: SnapshotIngestRequest) -> SnapshotIngestResult:
    """The `snapshot_ingest` task: retried on transient read errors only, each retry opening
    the source afresh (the ingest is atomic)."""
    from tcdb.flows.tasks import TASKS
    from tcdb.ingest.report import SnapshotIngestResult

    result = TASKS["snapshot_ingest"](request)
    assert isinstance(result, SnapshotIngestResult)
    return result


def _report_row(report: SnapshotIngestResult) -> dict[str, Any]:
    return {"label": report.label, "status": report.status, "documents": report.n_documents,
            "new_contents": report.n_new_contents, "topics": report.n_topics,
            "judgments": report.n_judgments, "seconds": round(report.seconds, 3),
            "reason": None}


@flow(name="ingest-snapshot", log_prints=True)
def ingest_snapshot(request: SnapshotIngestRequest) -> dict[str, Any]:
    """Ingest one snapshot from an ir_datasets id or local files (as `tcdb snapshot ingest`)."""
    db = Database()  # the worker's database (`TCDB_DATABASE_URL` of its deployment)
    collection, label = request.collection, request.snapshot
    watch = Stopwatch()
    with watch.step(f"ingest {label}"):
        report = _ingest(request)
    drift = {label: snapshot_drift(db, collection, label)}
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
    db = Database()  # the worker's database (`TCDB_DATABASE_URL` of its deployment)
    from tcdb.catalog.sync import CollectionSyncRequest, CollectionSyncResult, ingest_request
    from tcdb.collections.specs.spec import load_spec
    from tcdb.flows.tasks import TASKS

    logger = get_run_logger()
    watch = Stopwatch()
    with watch.step("read spec"):
        # collection_sync without ingest: the collection created or updated, and the declared
        # snapshots not complete yet, each with why its source cannot be read (None: it can)
        state = TASKS["collection_sync"](CollectionSyncRequest.of(spec=spec_path))
        assert isinstance(state, CollectionSyncResult)
        spec = load_spec(spec_path)
    declared = {snap.label: snap for snap in spec.snapshots}
    pending = [(declared[p.label], p.unavailable) for p in state.pending]
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
                report = _ingest(ingest_request(spec.name, snap, text=with_text))
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
        drift[snap.label] = snapshot_drift(db, spec.name, snap.label)
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
            ingest_summary(result))
    if failure is not None:
        raise failure
    return result


def ingest_summary(result: dict[str, Any]) -> str:
    """One line of what a run of `ingest-new-snapshots` did (the artifact's description, which
    `tcdb flows status` shows as the last run's outcome)."""
    docs = {r["label"]: r["documents"] for r in result["snapshots"]}
    parts = [("ingested " + ", ".join(f"{label} ({docs[label]:,} documents)"
                                      for label in result["ingested"]))
             if result["ingested"] else "nothing new ingested"]
    if result["skipped"]:
        parts.append(f"{len(result['skipped'])} skipped (source not there yet)")
    if result["failed"]:
        parts.append(f"{len(result['failed'])} failed")
    parts.append(f"{len(result['present'])} already present")
    return f"{result['collection']}: " + "; ".join(parts)


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
