"""Pick up run files dropped into `runs/<collection>/<snapshot>/` and import each one once.

A file whose checksum the snapshot already holds is skipped without reading it again (so the
same file dropped twice, or copied under another name, is imported once). A folder whose
snapshot is not ingested yet is left for a later run. Each file is imported in its own
transaction by the `run_import` operation: a bad file fails alone, with the core's message, and the
flow fails after the good files are in — so it shows up, and the next run tries it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from tcdb.errors import InputError, NotFoundError, TcdbError
from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import SOURCE_RETRIES, SOURCE_RETRY_DELAYS, Stopwatch, retry_transient
from tcdb.flows.state import complete_snapshots, known_run_checksums
from tcdb.operations.database import Database

if TYPE_CHECKING:
    from tcdb.runs.requests import ImportedRun

DEFAULT_DROP_FOLDER = "runs"
# Files still being written or not meant for import.
_SKIP_SUFFIXES = (".part", ".tmp", ".partial", ".crdownload", "~", ".md", ".json", ".yaml")


def dropped_files(folder: Path) -> list[Path]:
    """The run files in one snapshot's drop folder, in name order (hidden and partial skipped)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not p.name.startswith(".")
                  and not p.name.lower().endswith(_SKIP_SUFFIXES))


def drop_targets(drop_folder: Path, collection: str | None, snapshot: str | None
                 ) -> list[tuple[str, str]]:
    """(collection, snapshot) folders to look at under the drop folder."""
    if collection is not None and snapshot is not None:
        return [(collection, snapshot)]
    if collection is not None:
        collections = [collection]
    elif drop_folder.is_dir():
        collections = sorted(p.name for p in drop_folder.iterdir()
                             if p.is_dir() and not p.name.startswith("."))
    else:
        collections = []
    targets = []
    for name in collections:
        folder = drop_folder / name
        if folder.is_dir():
            targets += [(name, p.name) for p in sorted(folder.iterdir())
                        if p.is_dir() and not p.name.startswith(".")]
    return [t for t in targets if snapshot is None or t[1] == snapshot]


def check_drop_folder(drop_folder: str) -> Path:
    """The drop folder, resolved; a missing one is an error, not "nothing new".

    Why: a mistyped or unmounted folder would otherwise report success every hour while no run
    is ever imported.
    """
    root = Path(drop_folder).expanduser().resolve()
    if not root.exists():
        raise NotFoundError(f"drop folder {root} does not exist: create it, or pass another "
                            "drop_folder")
    if not root.is_dir():
        raise InputError(root, None, "the drop folder is a file, not a folder")
    return root


def import_run_file(collection: str, snapshot: str, path: str) -> ImportedRun:
    """Import one dropped run file with the `run_import` task (idempotent by checksum in the
    core as well; retried on transient errors only)."""
    from tcdb.flows.tasks import TASKS
    from tcdb.runs.requests import RunImportRequest, RunImportResult

    result = TASKS["run_import"](RunImportRequest.of(collection=collection, snapshot=snapshot,
                                                     files=[path]))
    assert isinstance(result, RunImportResult)
    return result.runs[0]


@task(name="checksum", retries=SOURCE_RETRIES, retry_delay_seconds=SOURCE_RETRY_DELAYS,
      retry_condition_fn=retry_transient, cache_policy=NO_CACHE)
def checksum_task(path: str) -> str:
    from tcdb.collections.runs.trec import checksum_file

    return checksum_file(Path(path))


@flow(name="import-runs", log_prints=True)
def import_runs(
    collection: str | None = None,
    snapshot: str | None = None,
    drop_folder: str = DEFAULT_DROP_FOLDER,
) -> dict[str, Any]:
    """Import the new run files under `<drop_folder>/<collection>/<snapshot>/`.

    Without `collection` every collection folder is scanned; without `snapshot` every snapshot
    folder of the collection. Relative `drop_folder`s are resolved against the working folder;
    a drop folder that does not exist fails the flow (NotFoundError naming it).
    """
    db = Database()  # the worker's database (`TCDB_DATABASE_URL` of its deployment)
    logger = get_run_logger()
    watch = Stopwatch()
    root = check_drop_folder(drop_folder)
    rows: list[dict[str, Any]] = []
    failures: list[TcdbError] = []
    complete: dict[str, set[str]] = {}
    for coll, snap in drop_targets(root, collection, snapshot):
        files = dropped_files(root / coll / snap)
        if not files:
            continue
        if coll not in complete:
            complete[coll] = complete_snapshots(db, coll)
        if snap not in complete[coll]:
            reason = f"snapshot {snap!r} of {coll!r} is not ingested yet"
            logger.warning("leaving %d file(s) in %s: %s", len(files), root / coll / snap, reason)
            rows += [_row(coll, snap, f, "waiting", reason=reason) for f in files]
            continue
        with watch.step(f"{coll}/{snap}"):
            known = known_run_checksums(db, coll, snap)
            for file in files:
                if checksum_task(str(file)) in known:
                    rows.append(_row(coll, snap, file, "seen"))
                    continue
                try:
                    report = import_run_file(coll, snap, str(file))
                except TcdbError as exc:  # the message names the file (and line) itself
                    logger.error("%s", exc if str(file) in str(exc) else f"{file}: {exc}")
                    rows.append(_row(coll, snap, file, "failed", reason=str(exc)))
                    failures.append(exc)
                    continue
                logger.info("%s: run %s %s (%d entries)", file.name, report.run, report.status,
                            report.n_entries)
                rows.append(_row(coll, snap, file, report.status, report.run, report.n_entries))
                known = known_run_checksums(db, coll, snap)
    result: dict[str, Any] = {
        "drop_folder": str(root),
        "imported": [r["file"] for r in rows if r["status"] in ("imported", "replaced")],
        "seen": [r["file"] for r in rows if r["status"] in ("seen", "unchanged")],
        "waiting": [r["file"] for r in rows if r["status"] == "waiting"],
        "failed": {r["file"]: r["reason"] for r in rows if r["status"] == "failed"},
        "files": rows,
        "seconds": round(watch.total, 3),
    }
    counts = (f"**{len(result['imported'])}** imported, **{len(result['seen'])}** seen before, "
              f"**{len(result['waiting'])}** waiting for their snapshot, "
              f"**{len(result['failed'])}** failed")
    columns = ["collection", "snapshot", "file", "status", "run", "entries", "reason"]
    publish("import-runs", render(f"Run drops in {root}", [
        counts, markdown_table(columns, [list(r.values()) for r in rows]),
        timings_section(watch),
    ]), f"run files dropped under {root}")
    if failures:
        raise failures[0]
    return result


def _row(collection: str, snapshot: str, file: Path, status: str, tag: str | None = None,
         entries: int | None = None, reason: str | None = None) -> dict[str, Any]:
    return {"collection": collection, "snapshot": snapshot, "file": str(file), "status": status,
            "run": tag, "entries": entries, "reason": reason}
