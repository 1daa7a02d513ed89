"""`tcdb results import COLLECTION FILE`: an organiser's results table into the stored results.

Atomic and idempotent, as every import: the whole table is read and checked first
(`tcdb.collections.results_tables.organisers`), its snapshots must exist, and nothing is written on
any
error. A results table needs no corpus: its snapshots may be registered without documents
(`tcdb snapshot register`), or on the way when the user asks (`register_snapshots`); otherwise
a snapshot the collection lacks is refused at the first line naming it, so a mistyped label
(2023-3 for 2023-03) never becomes a snapshot unasked. A figure already stored with the same
value is left alone (the same file twice is `unchanged`), one stored with another value is
refused unless `replace`. Each (team, run) is the collection's system (group, name), created
when new, so a published figure lines up with the same system's runs and two groups' `run1`
stay apart; each version of a resubmitted run is kept, and readers take the latest.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, select, tuple_
from sqlmodel import Session, col

from tcdb.collections.files.bad_lines import BadLines, keeps_going, rejects_target, write_rejects
from tcdb.collections.results_tables.organisers import PublishedTable, read_results_table
from tcdb.errors import ConflictError, InputError
from tcdb.operations import Database, Labels, Name, Request, Result, argument, operation, option
from tcdb.schema import PublishedResult, Snapshot, SnapshotStatus, System
from tcdb.schema.base import stored_id, utcnow
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.db import is_integrity_error
from tcdb.vocabulary import OnBadLines

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.schema import Collection

# A stored figure's key: (snapshot id, system id, measure, version)
Key = tuple[int, int, str, str]

FILE_HELP = ("CSV or TSV with a header: team, run and snapshot columns (found by their usual "
             "names: team/group, run/run_id/tag, snapshot), a version column when runs were "
             "resubmitted, and one column per measure (nDCG@10, P@10, AP, … in any case "
             "ir_measures reads).")


class ResultsImportRequest(Request):
    """Which results table to store for which collection, and how to read its columns."""

    collection: Name = argument(help="The collection the table reports on.")
    file: Path = argument(help=FILE_HELP)
    snapshot_column: str | None = option(None, metavar="NAME", help="The column naming the "
                                         "snapshot (default: snapshot, version, …).")
    team_column: str | None = option(None, metavar="NAME", help="The column naming the team "
                                     "(default: team, group, participant; none: no groups).")
    run_column: str | None = option(None, metavar="NAME", help="The column naming the run "
                                    "(default: run, run_id, tag, …).")
    version_column: str | None = option(None, metavar="NAME", help="The column naming a "
                                        "run's version (default: version beside a snapshot "
                                        "column, submission, timestamp; none: one version).")
    register_snapshots: bool = option(False, help="Register the table's snapshots the "
                                      "collection lacks, without documents (as `snapshot "
                                      "register`), instead of refusing them.")
    ignore_columns: Labels = option([], flag="--ignore-column", metavar="NAME",
                                    help="A column that is neither an identity nor a measure, "
                                    "left out (repeat).")
    replace: bool = option(False, help="Store the file's value where a stored figure of the "
                           "same snapshot, system and measure differs (otherwise refused).")
    on_bad_lines: OnBadLines = option(
        OnBadLines.error, help="A row that cannot be read (a bad value, a run given twice for "
        "a snapshot, a wrong number of fields): refuse the table (error), or set it aside in "
        "the rejects file and go on (warn, skip). A bad header is always refused.")
    rejects: Path | None = option(
        None, metavar="FILE", help="Where set-aside rows go (TSV: file, line, reason); "
        "default FILE.rejects.tsv in the current folder.")


class ResultsImportResult(Result):
    """What an import did: `added`, `replaced` or `unchanged`, with its counts."""

    collection: str
    file: str
    checksum: str  # sha256 of the file
    status: str
    n_rows: int  # lines of the table
    n_values: int  # figures read (empty cells not counted)
    n_missing: int  # empty cells: figures the table does not give
    n_added: int
    n_replaced: int
    n_unchanged: int
    n_new_systems: int
    n_resubmitted: int = 0  # runs (team, run) with more than one version in the table
    registered_snapshots: list[str] = []  # snapshots registered on the way
    snapshots: list[str]
    measures: list[str]
    ignored_columns: list[str]
    n_rejected: int = 0  # rows set aside (--on-bad-lines warn|skip)
    rejects_file: str | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row: the file, its status and counts."""
        import pandas as pd

        data = self.model_dump()
        for key in ("snapshots", "measures", "ignored_columns"):
            data[key] = ", ".join(data[key])
        return pd.DataFrame([data])


@operation("results_import", command="results import", writes=True)
def results_import(request: ResultsImportRequest, db: Database) -> ResultsImportResult:
    """Import an organiser's results table (one row per team × run × snapshot, one column per
    measure): every row checked first, nothing written on any error; the same file again adds
    nothing.

    Why: LongEval and TIRA publish each run's aggregates per snapshot, without run files or
    per-topic scores; with them stored, ARP over snapshots, RΔ and the system rankings across
    snapshots need no run at all.
    """
    path = Path(request.file)
    keep_going = keeps_going(request.on_bad_lines)
    rejects = rejects_target(request.on_bad_lines, request.rejects, f"{path.name}.rejects.tsv")
    written: str | None = None
    table = read_results_table(path, snapshot_column=request.snapshot_column,
                               team_column=request.team_column, run_column=request.run_column,
                               version_column=request.version_column,
                               ignore_columns=request.ignore_columns,
                               bad=BadLines(keep_going))
    try:
        with db.session() as session:
            from tcdb.catalog.collections import get_collection

            coll = get_collection(session, request.collection)
            conn = session.connection()
            registered = _register(session, coll, table) if request.register_snapshots else []
            snapshot_ids = _snapshot_ids(conn, coll.pk, request.collection, table)
            systems, n_new = _system_ids(conn, coll.pk, table)
            wanted = {(snapshot_ids[r.snapshot], systems[(r.team, r.run)], m, r.version): v
                      for r in table.rows for m, v in r.values.items()}
            stored = _stored(conn, coll.pk, set(snapshot_ids.values()))
            new = [k for k in wanted if k not in stored]
            changed = [k for k in wanted if k in stored and stored[k] != wanted[k]]
            if changed and not request.replace:
                raise ConflictError(_conflict(path, table, snapshot_ids, systems, changed,
                                              stored, wanted))
            table_c = PublishedResult.__table__.c  # type: ignore[attr-defined]
            for start in range(0, len(changed), 500):
                conn.execute(delete(PublishedResult).where(
                    tuple_(table_c.snapshot_id, table_c.system_id, table_c.measure,
                           table_c.version).in_(changed[start:start + 500])))
            now = utcnow()
            bulk_insert(conn, "published_result",
                        ["collection_id", "snapshot_id", "system_id", "measure", "version",
                         "value", "source", "checksum", "imported_at"],
                        ((coll.pk, s, system, m, v, wanted[(s, system, m, v)], path.name,
                          table.checksum, now) for s, system, m, v in [*new, *changed]))
            if table.rejected and rejects is not None:  # before the commit: all or nothing
                written = write_rejects(rejects, table.rejected)
    except Exception as exc:
        if is_integrity_error(exc):
            raise ConflictError(f"{path}: another import stored some of these results at the "
                                "same time; run the import again") from None
        raise
    status = "replaced" if changed else "added" if new else "unchanged"
    return ResultsImportResult(
        collection=request.collection, file=str(path), checksum=table.checksum, status=status,
        n_rows=len(table.rows), n_values=table.n_values, n_missing=table.n_missing,
        n_added=len(new), n_replaced=len(changed),
        n_unchanged=len(wanted) - len(new) - len(changed), n_new_systems=n_new,
        n_resubmitted=_resubmitted(table), registered_snapshots=registered,
        snapshots=list(dict.fromkeys(r.snapshot for r in table.rows)),
        measures=table.measures, ignored_columns=table.ignored,
        n_rejected=len(table.rejected),
        rejects_file=written)


def _snapshot_ids(conn: Connection, collection_id: int, collection: str,
                  table: PublishedTable) -> dict[str, int]:
    """label → id of every snapshot the table names; a missing one is refused at its first
    line, saying how to add it."""
    rows = conn.execute(select(col(Snapshot.label), col(Snapshot.id), col(Snapshot.status))
                        .where(col(Snapshot.collection_id) == collection_id)).all()
    found = {label: (stored_id(sid), status) for label, sid, status in rows}
    out: dict[str, int] = {}
    for row in table.rows:
        if row.snapshot in out:
            continue
        known = found.get(row.snapshot)
        status = getattr(known[1], "value", known[1]) if known else None
        if known is None or status != SnapshotStatus.complete.value:
            listed = ", ".join(sorted(label for label, (_, s) in found.items()
                                      if getattr(s, "value", s) == "complete")) or "none yet"
            state = f" (status {status})" if known else ""
            raise InputError(table.path, row.line, f"snapshot {row.snapshot!r} is not a "
                             f"complete snapshot of {collection!r}{state} (complete: {listed}); "
                             "register the table's snapshots on the way with "
                             "--register-snapshots, or first, one by one, with `tcdb snapshot "
                             f"register {collection} {row.snapshot}`")
        out[row.snapshot] = known[0]
    return out


def _system_ids(conn: Connection, collection_id: int, table: PublishedTable
                ) -> tuple[dict[tuple[str, str], int], int]:
    """(team, run) → system id, the missing systems inserted in one bulk write."""
    wanted = list(dict.fromkeys((r.team, r.run) for r in table.rows))

    def read() -> dict[tuple[str, str], int]:
        rows = conn.execute(select(col(System.group_name), col(System.name), col(System.id))
                            .where(col(System.collection_id) == collection_id)).all()
        return {(group, name): stored_id(sid) for group, name, sid in rows}

    known = read()
    missing = [key for key in wanted if key not in known]
    if missing:
        bulk_insert(conn, "system", ["collection_id", "group_name", "name"],
                    ((collection_id, group, name) for group, name in missing))
        known = read()
    return {key: known[key] for key in wanted}, len(missing)


def _stored(conn: Connection, collection_id: int, snapshots: set[int]
            ) -> dict[Key, float]:
    c = PublishedResult.__table__.c  # type: ignore[attr-defined]
    rows = conn.execute(select(c.snapshot_id, c.system_id, c.measure, c.version, c.value)
                        .where(c.collection_id == collection_id)).all()
    return {(int(s), int(system), m, version): float(v)
            for s, system, m, version, v in rows if s in snapshots}


def _register(session: Session, coll: Collection, table: PublishedTable) -> list[str]:
    """Register the table's snapshots the collection lacks, without documents, in the import's
    transaction (an error later registers nothing); their labels, in the table's order."""
    from tcdb.ingest.register import check_topics_given, register_snapshot

    have = set(session.connection().execute(
        select(col(Snapshot.label)).where(col(Snapshot.collection_id) == coll.pk)).scalars())
    missing = [s for s in dict.fromkeys(r.snapshot for r in table.rows) if s not in have]
    if missing:
        check_topics_given(coll, False)  # a results table gives no topic texts
    for label in missing:
        register_snapshot(session, coll, label)
    return missing


def _resubmitted(table: PublishedTable) -> int:
    """Runs (team, run) the table gives in more than one version."""
    versions: dict[tuple[str, str], set[str]] = {}
    for row in table.rows:
        versions.setdefault((row.team, row.run), set()).add(row.version)
    return sum(len(v) > 1 for v in versions.values())


def _conflict(path: Path, table: PublishedTable, snapshot_ids: dict[str, int],
              systems: dict[tuple[str, str], int], changed: list[Key],
              stored: dict[Key, float], wanted: dict[Key, float]) -> str:
    """`file:line: … is stored with value X, the file says Y (n differ): pass --replace`."""
    first = changed[0]
    row = next(r for r in table.rows if snapshot_ids[r.snapshot] == first[0]
               and systems[(r.team, r.run)] == first[1] and first[2] in r.values
               and r.version == first[3])
    who = f"{row.team}/{row.run}" if row.team else row.run
    return (f"{path}:{row.line}: {first[2]} of {who!r} on {row.snapshot!r} is stored with "
            f"value {stored[first]:g}, the file says {wanted[first]:g} ({len(changed)} "
            "figure(s) differ): pass --replace to store the file's values")
