"""Finding runs: by tag in a snapshot (for the core), and listed with their metadata (the
`runs` operation: `tcdb run list`, `tcdb.api.runs`) or with their versions (`run_versions`:
`tcdb run versions`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import FieldError, NotFoundError, some
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.queries import RUN_COLUMNS, run_rows
from tcdb.runs.versions import earlier_versions
from tcdb.schema import Run, Snapshot

if TYPE_CHECKING:
    import pandas as pd


def get_runs(session: Session, snapshot: Snapshot, tags: Sequence[str] | None = None) -> list[Run]:
    """The snapshot's runs (all, or those tags, in the order given); unknown tags are named."""
    rows = list(session.exec(
        select(Run).where(Run.snapshot_id == snapshot.pk).order_by(col(Run.tag))))
    if tags is None:
        return rows
    by_tag = {r.tag: r for r in rows}
    unknown = [t for t in tags if t not in by_tag]
    if unknown:
        known = some(by_tag) or "none imported yet"
        if len(by_tag) > 6:
            known += " (`tcdb run list` shows them)"
        raise NotFoundError(f"no run {some(map(repr, unknown))} in snapshot "
                            f"{snapshot.label!r} (runs: {known})")
    return [by_tag[t] for t in dict.fromkeys(tags)]


def list_runs(db: Database, collection: str | None = None,
              snapshot: str | None = None) -> list[dict[str, Any]]:
    """Every run (optionally of one collection / snapshot) with its metadata and sizes."""
    with db.session() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is None:
            raise FieldError("snapshot", "a snapshot needs its collection")
        if snapshot is not None:
            get_snapshot(session, collection or "", snapshot)
        return run_rows(session.connection(), collection_id=collection_id, snapshot=snapshot)


class RunsRequest(Request):
    """Which runs to list: all, a collection's, or one snapshot's."""

    collection: Name | None = argument(None, help="Only this collection.")
    snapshot: Name | None = argument(None, help="Only this snapshot (of the collection).")


class RunRow(BaseModel):
    """One stored run: where it is, what it is, and how big."""

    collection: str
    snapshot: str
    run: str  # the tag
    system: str
    group: str | None
    run_type: str | None
    contributed: bool | None
    category: str | None
    submitted: dt.date | None
    first_stage: str | None
    n_entries: int
    n_unresolved: int
    checksum: str | None
    source: str | None
    description: str | None
    platform: str | None  # from its ir_metadata: retrieval toolkit(s), else libraries
    ir_metadata: str | None  # its ir_metadata (PRIMAD) YAML, as given
    created_at: dt.datetime | None
    run_id: int
    snapshot_id: int
    version: str  # the version its entries are (`run versions` lists the earlier ones)


class RunsResult(Result):
    """The runs, in collection, snapshot and tag order."""

    runs: list[RunRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per run (`tcdb.queries.RUN_COLUMNS`)."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs], columns=RUN_COLUMNS)

    def to_data(self) -> list[dict[str, Any]]:
        """The list of runs, as `tcdb run list --json` has always printed it."""
        rows: list[dict[str, Any]] = super().to_data()["runs"]
        return rows


@operation("runs", command="run list")
def runs(request: RunsRequest, db: Database) -> RunsResult:
    """List runs with their system, metadata and sizes."""
    return RunsResult(runs=[RunRow(**row) for row in list_runs(db, request.collection,
                                                               request.snapshot)])


class RunVersionsRequest(Request):
    """Whose versions to list: a snapshot's runs (all, or these tags)."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    runs: Names | None = option(None, flag="--run", help="Run tag (repeat; default all).")


class RunVersionRow(BaseModel):
    """One version of a run: the current one (what reports use) or an earlier one."""

    run: str
    version: str
    current: bool
    checksum: str | None
    source: str | None
    n_entries: int
    n_unresolved: int
    imported_at: dt.datetime | None
    superseded_at: dt.datetime | None  # None for the current version


class RunVersionsResult(Result):
    """Each run's versions, the earlier ones first, the current one last."""

    collection: str
    snapshot: str
    versions: list[RunVersionRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per version."""
        import pandas as pd

        return pd.DataFrame([v.model_dump() for v in self.versions],
                            columns=list(RunVersionRow.model_fields))


@operation("run_versions", command="run versions")
def run_versions(request: RunVersionsRequest, db: Database) -> RunVersionsResult:
    """List the versions of runs: a resubmission (`run import --replace`) keeps the earlier."""
    rows: list[RunVersionRow] = []
    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        for run in get_runs(session, snap, request.runs or None):
            rows += [RunVersionRow(run=run.tag, version=v.version, current=False,
                                   checksum=v.checksum, source=v.source, n_entries=v.n_entries,
                                   n_unresolved=v.n_unresolved, imported_at=v.imported_at,
                                   superseded_at=v.superseded_at)
                     for v in earlier_versions(session, run.pk)]
            rows.append(RunVersionRow(run=run.tag, version=run.version, current=True,
                                      checksum=run.checksum, source=run.source,
                                      n_entries=run.n_entries, n_unresolved=run.n_unresolved,
                                      imported_at=run.created_at, superseded_at=None))
    return RunVersionsResult(collection=request.collection, snapshot=request.snapshot,
                             versions=rows)
