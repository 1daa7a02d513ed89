"""Run import: TREC run files → `run` + `run_entry`, validated, atomic and idempotent.

A run is identified by its tag within a snapshot and by the checksum of its file: the same file
again is a no-op (also from two processes at once: `tcdb.storage.locks` makes the second wait), a
different file under the same tag is refused unless `replace`: a resubmission, which keeps the
run's id (and its place in pools), moves the version it replaces with its entries to
`run_version` (`tcdb.runs.versions`) and drops the old scores. Topics and documents
are resolved to ids with pandas indexes built once per call; entries are ranked and written by
`tcdb.runs.entries`.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Mapping
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, select

from tcdb.catalog.collections import get_snapshot
from tcdb.collections.files.bad_lines import BadLines, keeps_going, rejects_target, write_rejects
from tcdb.collections.ir_metadata.description import (
    IrMetadata,
    read_header,
    read_side_file,
    side_files,
)
from tcdb.collections.sources.records import Rejected
from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError
from tcdb.ingest.readahead import read_ahead
from tcdb.names import BadName, check_name
from tcdb.operations.database import Database
from tcdb.progress import Progress
from tcdb.queries import document_ids, document_ids_of, topic_ids
from tcdb.runs.editing import NEW_RUN, apply_metadata, metadata_columns
from tcdb.runs.entries import PreparedRun, prepare_run, write_entries
from tcdb.runs.id_index import IdIndex
from tcdb.runs.metadata import RunMetadata
from tcdb.runs.requests import ImportedRun, RunImportRequest
from tcdb.runs.systems import get_system, system_name
from tcdb.runs.versions import archive_version, next_version, version_labels
from tcdb.schema import Run, RunCategory, RunType
from tcdb.schema.base import utcnow
from tcdb.storage.housekeeping import clear_run

if TYPE_CHECKING:
    from tcdb.collections.runs.trec import RunFile


def import_run_files(db: Database, request: RunImportRequest,
                     table: Mapping[str, RunMetadata], *,
                     progress: bool = False) -> list[ImportedRun]:
    """Import the request's run files in one transaction: all of them, or (on any error) none.

    The request's metadata (`system`, `group`, …) applies to every file; `table` (the round's
    table, `tcdb.runs.metadata`, read from `request.metadata`) gives each run its own, and wins
    over the request. What is not given keeps what is stored: the same file again with new
    metadata updates it, and `replace` keeps the metadata it is not given anew. `system` names
    the system (default: the run's tag); a system is its group and its name, so a run joins an
    existing system only when both agree — or when `system` names it explicitly
    (`tcdb.runs.systems.get_system`).

    Each run's ir_metadata (`tcdb.collections.ir_metadata.description`: its file's header block, a
    side file
    `RUN.yaml`, or the file `request.ir_metadata` for a single run) is kept with the run and
    gives what the request and the table leave open: group (its team), run type, category,
    description.

    `on_bad_lines` warn or skip sets a run file's bad lines aside
    (`tcdb.collections.files.bad_lines`):
    all files' go to `rejects` (default runs.rejects.tsv), written before the commit.
    """
    from tcdb.collections.files.opening import check_input
    from tcdb.collections.runs.trec import checksum_file, read_run

    collection, snapshot = request.collection, request.snapshot
    files = list(request.files)
    if not files:
        raise FieldError("files", "no run files given")
    keep_going = keeps_going(request.on_bad_lines)
    rejects_path = rejects_target(request.on_bad_lines, request.rejects, "runs.rejects.tsv")
    rejected: list[Rejected] = []
    for file in files:
        if not file.exists():
            raise NotFoundError(f"run file not found: {file}")
        check_input(file, pipe=False)  # a directory, a pipe: one line each
    options = replace(request.given_metadata(), version=request.version)  # a table row wins
    described = dict(zip(files, _ir_metadata(files, request.ir_metadata), strict=True))
    reports: list[ImportedRun] = []
    # One import per collection at a time (its systems are shared by its snapshots): a second
    # waits, then finds the runs the first stored, so the same file twice is one run.
    waiting = (f"waiting for another process importing runs into {collection!r} to finish "
               "…")
    with db.write_session(f"runs\x00{collection}", waiting=waiting) as session:
        snap = get_snapshot(session, collection, snapshot)
        label = snap.label
        seen_tags: dict[str, Path] = {}
        existing = _existing_runs(session, snap.pk)
        known = {r.checksum for r in existing.values()}
        # sha256 runs at ~1 GB/s: it decides up front which files need parsing at all.
        checksums = [checksum_file(file) for file in files]

        todo = [f for f, c in zip(files, checksums, strict=True) if c not in known]
        topic_index = IdIndex(topic_ids(session, snap.pk)) if todo else None
        # Many runs load the snapshot's document index once; a few runs into a big snapshot
        # look up just the ids they name (5,000 lines need not read a million-row index).
        doc_index = IdIndex(document_ids(session, snap.pk)) \
            if todo and _names_much_of(todo, snap.n_documents) else None

        def resolve(run_file: RunFile) -> PreparedRun:
            assert topic_index is not None
            docs = doc_index if doc_index is not None else IdIndex(
                document_ids_of(session, snap.pk, run_file.docs))
            return prepare_run(run_file, label, topic_index, docs, request.allow_unknown_docs)

        def load(item: tuple[Path, str]) -> tuple[Path, str, RunFile | PreparedRun | None]:
            # A no-op needs no parse: the same bytes as a stored run. Ids are resolved here
            # only from the whole index; a lookup needs the session, in the main thread.
            file, checksum = item
            if checksum in known:
                return file, checksum, None
            run_file = read_run(file, checksum, BadLines(keep_going))
            return file, checksum, run_file if doc_index is None else resolve(run_file)

        # Parsing, resolving and ranking the next run overlap this one's COPY. A thread, not a
        # process: pyarrow's parser releases the GIL, and a reader process measured no faster.
        loaded = read_ahead(lambda: map(load, zip(files, checksums, strict=True)),
                            mode="thread", name="tcdb-run-reader")
        bar = Progress("importing runs", total=len(files), enabled=progress and len(files) > 1)
        with closing(loaded), bar:
            for file, checksum, prepared in loaded:
                started = time.perf_counter()
                same = next((r for r in existing.values() if r.checksum == checksum), None)
                if same is not None:
                    if same.tag in seen_tags:
                        raise ConflictError(f"{file} and {seen_tags[same.tag]} hold the same run "
                                            f"{same.tag!r}")
                    seen_tags[same.tag] = file
                    ir = _checked_tag(described[file], file, same.tag)
                    new_ir = ir is not None and _stored_ir(same) != ir.text
                    given = _given(table, same.tag, options).over(
                        _ir_given(ir) if new_ir else RunMetadata())
                    changed = apply_metadata(session, same, snap.collection_id, given)
                    changed += _store_ir(same, ir) if new_ir else []
                    changed += _relabel(session, same, given.version)
                    reports.append(_report(session, collection, snapshot, same, file,
                                           "updated" if changed else "unchanged", started))
                    bar.advance()
                    continue
                if prepared is None:  # its checksum belonged to a run this call has replaced
                    prepared = read_run(file, checksum, BadLines(keep_going))
                if not isinstance(prepared, PreparedRun):
                    prepared = resolve(prepared)
                tag = prepared.tag
                if tag in seen_tags:
                    raise ConflictError(f"{file} and {seen_tags[tag]} both hold run {tag!r}: "
                                        "import them separately")
                seen_tags[tag] = file
                old = existing.get(tag)
                if old is not None and not request.replace:
                    raise ConflictError(
                        f"{file}: snapshot {snapshot!r} of {collection!r} already has run "
                        f"{tag!r} from a different file "
                        f"({old.source or 'unknown source'}, sha256 {str(old.checksum)[:12]}…): "
                        "pass --replace to replace it")
                n_missing = len(prepared.missing)
                rejected += prepared.rejected
                files_values: dict[str, Any] = dict(
                    checksum=prepared.checksum, source=str(file.resolve()),
                    n_entries=prepared.n_rows - n_missing, n_unresolved=n_missing,
                    n_rejected=len(prepared.rejected))
                ir = _checked_tag(described[file], file, tag)
                given = _given(table, tag, options).over(_ir_given(ir))
                replaced = None
                if old is not None:
                    # a resubmission: the version it replaces is kept, entries and all
                    label = next_version(session, old, given.version)
                    replaced = archive_version(session, old).version
                    clear_run(session, old.pk)
                    for key, value in files_values.items():
                        setattr(old, key, value)
                    old.version, old.created_at = label, utcnow()
                    apply_metadata(session, old, snap.collection_id, given)
                    _store_ir(old, ir)
                    run, status = old, "replaced"
                else:
                    system_row = get_system(session, snap.collection_id, given.system or tag,
                                            given.group, explicit=given.system is not None)
                    run = Run(snapshot_id=snap.pk, tag=tag, system_id=system_row.pk,
                              version=given.version or "1",
                              **files_values, **metadata_columns(given.over(NEW_RUN)))
                    _store_ir(run, ir)
                    status = "imported"
                session.add(run)
                session.flush()
                write_entries(session, run.pk, prepared)
                existing[run.tag] = run
                reports.append(_report(session, collection, snapshot, run, file, status,
                                       started, replaced))
                bar.advance()
        if rejected and rejects_path is not None:  # before the commit: all or nothing
            written = write_rejects(rejects_path, rejected)
            for report in reports:
                report.rejects_file = written
    return reports


def _names_much_of(files: list[Path], n_documents: int) -> bool:
    """Whether these run files name a good share of a snapshot's documents (then loading its
    whole id index is cheaper than looking up what they name): ~40 bytes a line, gzip ~4×."""
    lines = sum(f.stat().st_size * (4 if f.suffix == ".gz" else 1) for f in files) // 40
    return lines * 4 >= n_documents


def _ir_metadata(files: list[Path], explicit: Path | str | None) -> list[IrMetadata | None]:
    """Each run file's ir_metadata: the file `explicit` (one run file only), else a side file
    beside it, else its header block; a side file and a header that disagree are refused."""
    if explicit is not None:
        if len(files) != 1:
            raise FieldError("ir_metadata", f"one ir_metadata file for {len(files)} run files: "
                             "give each run a side file (RUN.yaml) or a header block instead")
        return [read_side_file(explicit)]
    found: list[IrMetadata | None] = []
    for file in files:
        header = read_header(file)
        sides = side_files(file)
        if len(sides) > 1:
            raise InputError(file, None, "more than one ir_metadata side file: "
                             + ", ".join(p.name for p in sides))
        side = read_side_file(sides[0]) if sides else None
        if side is not None and header is not None and side.text != header.text:
            raise InputError(sides[0], None, f"differs from the ir_metadata block in the header "
                             f"of {file.name}: keep one of them")
        found.append(side or header)
    return found


def _checked_tag(ir: IrMetadata | None, file: Path, tag: str) -> IrMetadata | None:
    """The ir_metadata, if its `tag` (when given) is the run's and its team is a name by the
    rule every name follows (`tcdb.names`: it becomes the run's group)."""
    if ir is None:
        return ir
    where = file if ir.source == "header" else Path(ir.source)
    if ir.tag is not None and unicodedata.normalize("NFC", ir.tag) != tag:
        raise InputError(where, ir.tag_line, f"ir_metadata tag {ir.tag!r} is not the run's tag "
                         f"{tag!r}")
    if ir.team is not None:
        try:
            check_name(ir.team)
        except BadName as exc:
            raise InputError(where, None, f"ir_metadata team: {exc}") from None
    return ir


def _ir_given(ir: IrMetadata | None) -> RunMetadata:
    """What the ir_metadata says of the fields tcdb keeps as columns."""
    if ir is None:
        return RunMetadata()
    automatic = ir.automatic
    return RunMetadata(
        group=check_name(ir.team) if ir.team is not None else None,
        description=ir.description,
        category=RunCategory(ir.category) if ir.category else None,
        run_type=None if automatic is None else
        (RunType.automatic if automatic else RunType.manual))


def _stored_ir(run: Run) -> str | None:
    stored = (run.meta or {}).get("ir_metadata") or {}
    return stored.get("yaml") if isinstance(stored, dict) else None


def _store_ir(run: Run, ir: IrMetadata | None) -> list[str]:
    """Keep the ir_metadata with the run (its text for export, parsed for queries)."""
    if ir is None:
        return []
    run.meta = {**(run.meta or {}), "ir_metadata": ir.to_data()}
    run.platform = ir.platform
    return ["ir_metadata"]


def _given(table: Mapping[str, RunMetadata], tag: str, options: RunMetadata) -> RunMetadata:
    row = table.get(tag)
    return options if row is None else row.over(options)


def _relabel(session: Session, run: Run, label: str | None) -> list[str]:
    """The same file given a new version label: the label changes (no new version: the
    entries are the same); a label an earlier version has is refused."""
    if label is None or label == run.version:
        return []
    if label in version_labels(session, run):
        raise ConflictError(f"run {run.tag!r}: version {label!r} is an earlier version, from "
                            "another file")
    run.version = label
    session.add(run)
    return ["version"]


def _report(session: Session, collection: str, snapshot: str, run: Run, file: Path,
            status: str, started: float, replaced: str | None = None) -> ImportedRun:
    return ImportedRun(collection=collection, snapshot=snapshot, run=run.tag, path=str(file),
                       status=status, version=run.version, replaced_version=replaced,
                       run_id=run.pk,
                       system=system_name(session, run.system_id), n_entries=run.n_entries,
                       n_unresolved=run.n_unresolved, n_rejected=run.n_rejected,
                       rejects_file=None, seconds=time.perf_counter() - started)


def _existing_runs(session: Session, snapshot_id: int) -> dict[str, Run]:
    rows = session.exec(select(Run).where(Run.snapshot_id == snapshot_id))
    return {run.tag: run for run in rows}
