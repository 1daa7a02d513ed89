"""The run operations that write: `run_import`, `run_update`, `run_delete`.

Each is a request and a typed result (`tcdb.runs.requests`) and one function here over the core
writers (`tcdb.runs.importing`, `tcdb.runs.editing`, imported when called: `tcdb run --help`
needs neither), so the CLI (`tcdb run import|update|delete`), `tcdb.api` and the flows import
and fix runs the same way.
"""

from __future__ import annotations

from tcdb.operations import Database, operation
from tcdb.runs.requests import (
    RunChangesResult,
    RunDeleteRequest,
    RunImportRequest,
    RunImportResult,
    RunUpdateRequest,
)


@operation("run_import", command="run import", writes=True)
def run_import(request: RunImportRequest, db: Database) -> RunImportResult:
    """Import run files: one transaction for all of them.

    The same file again is a no-op, or updates the metadata it is given.
    """
    from tcdb.runs.importing import import_run_files
    from tcdb.runs.metadata import read_run_metadata

    table = read_run_metadata(request.metadata) if request.metadata is not None else {}
    runs = import_run_files(db, request, table, progress=True)
    return RunImportResult(runs=runs,
                           metadata_unmatched=sorted(set(table) - {r.run for r in runs}))


@operation("run_update", command="run update", writes=True)
def run_update(request: RunUpdateRequest, db: Database) -> RunChangesResult:
    """Fix runs' metadata; entries, scores and pools stay."""
    from tcdb.runs.editing import update_runs

    return RunChangesResult(changes=update_runs(db, request))


@operation("run_delete", command="run delete", writes=True)
def run_delete(request: RunDeleteRequest, db: Database) -> RunChangesResult:
    """Delete runs with their entries, scores and pool memberships (one transaction)."""
    from tcdb.runs.editing import delete_runs

    return RunChangesResult(changes=delete_runs(db, request))
