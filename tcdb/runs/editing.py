"""Fixing what was imported: a run's metadata updated, a run deleted.

Organisers make mistakes in a round of a hundred runs (a group misspelt, a run not marked as
judged); the fix must not need the run files again, and must keep the run's entries, scores
and place in pools. Deleting takes the run's entries, scores and pool memberships with it, in
one transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select
from sqlmodel import Session, col

from tcdb.catalog.collections import get_snapshot
from tcdb.errors import FieldError
from tcdb.operations.database import Database
from tcdb.runs.listing import get_runs
from tcdb.runs.metadata import RunMetadata, read_run_metadata
from tcdb.runs.requests import RunChangeRow, RunDeleteRequest, RunUpdateRequest
from tcdb.runs.systems import get_system
from tcdb.schema import Pool, PoolRun, Run, RunEntry, RunType, Score, System
from tcdb.storage.housekeeping import delete_run

# What a new run is when nothing says otherwise.
NEW_RUN = RunMetadata(run_type=RunType.automatic, contributed=False)
# RunMetadata's fields that are columns of `run` (the system is a reference, see apply_metadata).
RUN_COLUMNS = {"group": "group_name", "run_type": "run_type", "contributed": "contributed",
               "category": "category", "submitted": "submitted",
               "description": "description", "first_stage": "first_stage"}


def metadata_columns(meta: RunMetadata) -> dict[str, Any]:
    """The given fields as `run` columns."""
    return {RUN_COLUMNS[key]: value for key, value in meta.given().items() if key in RUN_COLUMNS}


def apply_metadata(session: Session, run: Run, collection_id: int, meta: RunMetadata) -> list[str]:
    """Set the given fields on a stored run; the names of those that changed.

    A new group or system name moves the run to that system (created on first use); a system
    left without runs is deleted, so reports never list a system that lost its only run.
    """
    changed = []
    names = {column: name for name, column in RUN_COLUMNS.items()}
    for column, value in metadata_columns(meta).items():
        if getattr(run, column) != value:
            setattr(run, column, value)
            changed.append(names[column])
    if meta.system is not None or meta.group is not None:
        current = session.get(System, run.system_id)
        assert current is not None
        target = get_system(session, collection_id, meta.system or current.name,
                            meta.group if meta.group is not None else current.group_name,
                            explicit=meta.system is not None)
        if target.pk != current.pk:
            run.system_id = target.pk
            session.add(run)
            session.flush()
            _drop_if_orphan(session, current)
            changed.append("system")
    session.add(run)
    return changed


def _drop_if_orphan(session: Session, system: System) -> None:
    used = session.execute(select(func.count()).select_from(Run).where(
        col(Run.system_id) == system.pk)).scalar_one()
    if not used:
        session.delete(system)
        session.flush()


def update_runs(db: Database, request: RunUpdateRequest) -> list[RunChangeRow]:
    """Set the request's metadata on stored runs, in one transaction.

    The request's fields apply to every run in `tags`; its `metadata` table gives runs their
    own, and wins over the fields. Without `tags`, the runs the table names. Every tag must be
    a run of the snapshot: a typo is an error, not a silent no-op.
    """
    table = read_run_metadata(request.metadata) if request.metadata is not None else {}
    versioned = [tag for tag, row in table.items() if row.version is not None]
    if versioned:  # a version is a file's: it comes with the file (`run import --replace`)
        raise FieldError("metadata", f"the table gives a version ({versioned[0]!r}): a run's "
                         "version is set when its file is imported (run import --version)")
    meta = request.given_metadata()
    chosen = list(dict.fromkeys([*request.tags, *table]))
    if not chosen:
        raise FieldError("tags/metadata", "name the runs to update, or give a metadata table")
    if not meta.given() and not any(row.given() for row in table.values()):
        raise FieldError("system/group/run_type/contributed/category/submitted/description/"
                         "first_stage", "nothing to update: give a field to change")
    changes = []
    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        for run in get_runs(session, snap, chosen):
            row = table.get(run.tag)
            changed = apply_metadata(session, run, snap.collection_id,
                                     meta if row is None else row.over(meta))
            changes.append(RunChangeRow(
                collection=request.collection, snapshot=snap.label, run=run.tag,
                status="updated" if changed else "unchanged", changed=changed))
    return changes


def delete_runs(db: Database, request: RunDeleteRequest) -> list[RunChangeRow]:
    """Delete runs with their entries, scores and pool memberships, in one transaction.

    A pool keeps the documents a deleted run put in it: assessors may already hold them.
    """
    if not request.tags:
        raise FieldError("tags", "name the runs to delete")
    changes = []
    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        for run in get_runs(session, snap, list(dict.fromkeys(request.tags))):
            n_entries = _count(session, RunEntry, run.pk)
            n_scores = _count(session, Score, run.pk)
            pools = list(session.execute(
                select(col(Pool.name)).join(PoolRun, col(PoolRun.pool_id) == col(Pool.id))
                .where(col(PoolRun.run_id) == run.pk).order_by(col(Pool.name))).scalars())
            system = session.get(System, run.system_id)
            session.execute(delete(PoolRun).where(col(PoolRun.run_id) == run.pk))
            delete_run(session, run.pk)
            session.expunge(run)
            if system is not None:
                _drop_if_orphan(session, system)
            changes.append(RunChangeRow(
                collection=request.collection, snapshot=snap.label, run=run.tag,
                status="deleted", n_entries=n_entries + run.n_unresolved, n_scores=n_scores,
                pools=pools))
    return changes


def _count(session: Session, table: type[RunEntry] | type[Score], run_id: int) -> int:
    return session.execute(select(func.count()).select_from(table).where(
        col(table.run_id) == run_id)).scalar_one()
