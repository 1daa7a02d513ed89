"""Run import: TREC run files → `run` + `run_entry`, validated, atomic and idempotent.

A run is identified by its tag within a snapshot and by the checksum of its file: the same file
again is a no-op, a different file under the same tag is refused unless `replace`, which keeps
the run's id (and its place in pools) but drops its old entries and scores. Topics and documents
are resolved to ids with pandas indexes built once per call; entries go through
`bulk_insert_columns`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlmodel import Session

from tcdb.db import bulk_insert, bulk_insert_columns, session_scope
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.readahead import read_ahead
from tcdb.schema import Run, RunCategory, Snapshot, System

if TYPE_CHECKING:
    from tcdb.collections.runs import RunFile

UNRESOLVED_COLUMNS = ["run_id", "topic_id", "external_doc_id", "rank", "eval_rank", "score"]


@dataclass
class RunImportReport:
    """What importing one run file did."""

    collection: str
    snapshot: str
    tag: str
    path: str
    status: str  # "imported" | "unchanged" | "replaced"
    run_id: int
    system: str
    n_entries: int = 0
    n_unresolved: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_run(
    collection: str,
    snapshot: str,
    path: Path | str,
    *,
    system: str | None = None,
    group: str | None = None,
    manual: bool = False,
    contributed: bool = False,
    category: RunCategory | str | None = None,
    submitted: dt.date | None = None,
    description: str | None = None,
    replace: bool = False,
    allow_unknown_docs: bool = False,
) -> RunImportReport:
    """Import one TREC run file into a snapshot (see the module docstring)."""
    return import_runs(
        collection, snapshot, [path], system=system, group=group, manual=manual,
        contributed=contributed, category=category, submitted=submitted,
        description=description, replace=replace, allow_unknown_docs=allow_unknown_docs,
    )[0]


def import_runs(
    collection: str,
    snapshot: str,
    paths: Sequence[Path | str],
    *,
    system: str | None = None,
    group: str | None = None,
    manual: bool = False,
    contributed: bool = False,
    category: RunCategory | str | None = None,
    submitted: dt.date | None = None,
    description: str | None = None,
    replace: bool = False,
    allow_unknown_docs: bool = False,
    progress: bool = False,
) -> list[RunImportReport]:
    """Import several run files in one transaction: all of them, or (on any error) none.

    `system` names the system of every file (default: each run's tag).
    """
    from tcdb.catalog import get_snapshot
    from tcdb.collections.runs import checksum_file, read_run
    from tcdb.lookups import document_ids, topic_ids

    files = [Path(p) for p in paths]
    if not files:
        raise InputError(None, None, "no run files given")
    for file in files:
        if not file.is_file():
            raise NotFoundError(f"run file not found: {file}")
    run_category = _category(category)
    reports: list[RunImportReport] = []
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        assert snap.id is not None
        label = snap.label
        seen_tags: dict[str, Path] = {}
        existing = _existing_runs(session, snap.id)
        known = {r.checksum for r in existing.values()}
        # sha256 runs at ~1 GB/s: it decides up front which files need parsing at all.
        checksums = [checksum_file(file) for file in files]

        def id_indexes() -> tuple[_IdIndex, _IdIndex]:
            return _IdIndex(topic_ids(session, snap.id)), _IdIndex(document_ids(session, snap.id))

        ids = id_indexes() if any(checksum not in known for checksum in checksums) else None

        def prepare(file: Path, checksum: str) -> _PreparedRun:
            assert ids is not None
            return _prepare(read_run(file, checksum), label, *ids, allow_unknown_docs)

        def load(item: tuple[Path, str]) -> tuple[Path, str, _PreparedRun | None]:
            # A no-op needs no parse: the same bytes as a stored run.
            file, checksum = item
            return file, checksum, None if checksum in known else prepare(file, checksum)

        # Parsing, resolving and ranking the next run overlap this one's COPY. A thread, not a
        # process: pyarrow's parser releases the GIL, and a reader process measured no faster.
        loaded = read_ahead(lambda: map(load, zip(files, checksums, strict=True)),
                            mode="thread", name="tcdb-run-reader")
        with closing(loaded), TaskProgress(progress, len(files), "importing runs") as bar:
            for file, checksum, prepared in loaded:
                started = time.perf_counter()
                same = next((r for r in existing.values() if r.checksum == checksum), None)
                if same is not None:
                    if same.tag in seen_tags:
                        raise ConflictError(f"{file} and {seen_tags[same.tag]} hold the same run "
                                            f"{same.tag!r}")
                    seen_tags[same.tag] = file
                    reports.append(RunImportReport(
                        collection, snapshot, same.tag, str(file), "unchanged", same.id or 0,
                        _system_name(session, same.system_id), same.n_entries, same.n_unresolved,
                        time.perf_counter() - started))
                    bar.advance()
                    continue
                if prepared is None:  # its checksum belonged to a run this call has replaced
                    ids = ids or id_indexes()
                    prepared = prepare(file, checksum)
                tag = prepared.tag
                if tag in seen_tags:
                    raise ConflictError(f"{file} and {seen_tags[tag]} both hold run {tag!r}: "
                                        "import them separately")
                seen_tags[tag] = file
                old = existing.get(tag)
                if old is not None and not replace:
                    raise ConflictError(
                        f"{file}: snapshot {snapshot!r} of {collection!r} already has run "
                        f"{tag!r} from a different file "
                        f"({old.source or 'unknown source'}, sha256 {str(old.checksum)[:12]}…): "
                        "pass --replace to replace it")
                n_missing = len(prepared.missing)
                system_row = _get_system(session, snap.collection_id, system or tag)
                values = dict(
                    system_id=system_row.id, group_name=group, is_manual=manual,
                    contributed=contributed, category=run_category, submitted=submitted,
                    checksum=prepared.checksum, source=str(file.resolve()),
                    description=description, n_entries=prepared.n_rows - n_missing,
                    n_unresolved=n_missing,
                )
                if old is not None:
                    from tcdb.housekeeping import clear_run

                    clear_run(session, old.id or 0)
                    for key, value in values.items():
                        setattr(old, key, value)
                    run = old
                    status = "replaced"
                else:
                    run = Run(snapshot_id=snap.id, tag=tag, **values)
                    status = "imported"
                session.add(run)
                session.flush()
                assert run.id is not None
                _write_entries(session, run.id, prepared)
                existing[run.tag] = run
                reports.append(RunImportReport(
                    collection, snapshot, tag, str(file), status, run.id, system_row.name,
                    prepared.n_rows - n_missing, n_missing, time.perf_counter() - started))
                bar.advance()
    return reports


def _category(category: RunCategory | str | None) -> RunCategory | None:
    if category is None:
        return None
    try:
        return RunCategory(category)
    except ValueError:
        choices = ", ".join(c.value for c in RunCategory)
        raise InputError(None, None, f"category {category!r} is not one of {choices}") from None


def _existing_runs(session: Session, snapshot_id: int) -> dict[str, Run]:
    rows = session.execute(select(Run).where(Run.snapshot_id == snapshot_id)).scalars()
    return {run.tag: run for run in rows}


def _system_name(session: Session, system_id: int) -> str:
    return session.execute(select(System.name).where(System.id == system_id)).scalar_one()


def _get_system(session: Session, collection_id: int, name: str) -> System:
    """The collection's system of that name, created on first use."""
    found = session.execute(select(System).where(
        System.collection_id == collection_id, System.name == name)).scalar_one_or_none()
    if found is not None:
        return found
    system = System(collection_id=collection_id, name=name)
    session.add(system)
    session.flush()
    return system


class _IdIndex:
    """External id → integer id, looked up for a whole column at once (pandas' C hash table is
    an order of magnitude faster than a Python dict lookup per row)."""

    def __init__(self, mapping: dict[str, int]) -> None:
        import numpy as np
        import pandas as pd

        self.keys = list(mapping)
        self.index = pd.Index(np.asarray(self.keys, dtype=object), dtype=object)
        self.ids = np.fromiter(mapping.values(), dtype=np.int64, count=len(mapping))
        self._byte_order: Any = None

    def lookup(self, keys: list[str]) -> tuple[Any, Any]:
        """(ids, positions) for the keys; an unknown key has id -1 and position -1.

        The keys go in as an object Index: a bare array would be inferred as pandas' Arrow
        string dtype and converted back, which took 60 % of the lookup (pandas 3).
        """
        import numpy as np
        import pandas as pd

        target = pd.Index(np.asarray(keys, dtype=object), dtype=object)
        positions = self.index.get_indexer(target)
        ids = self.ids[positions] if len(self.ids) else positions.copy()
        ids[positions < 0] = -1
        return ids, positions

    def byte_order(self, positions: Any) -> Any:
        """Each key's place among all keys in byte order (trec_eval's strcmp), by position.

        Sorted once per import, so ranking a run's ties compares integers, not strings.
        """
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._byte_order is None:
            order = pc.array_sort_indices(pa.array(self.keys, pa.large_string())).to_numpy()
            places = np.empty(len(order), dtype=np.int64)
            places[order] = np.arange(len(order))
            self._byte_order = places
        return self._byte_order[positions]


@dataclass(eq=False)
class _PreparedRun:
    """A parsed run file with its rows resolved to ids and ranked as trec_eval ranks them.

    Only what the writer needs: arrays, and strings only for the rows the snapshot lacks. The
    parsed file's per-row strings go as soon as the run is ranked, so the runs read ahead hold
    no string per row (less memory, less for the garbage collector to walk: 3 % faster).
    """

    tag: str
    checksum: str
    n_rows: int
    topic_ids: Any  # int64 per row
    doc_ids: Any  # int64 per row; -1 for a document the snapshot does not have
    ranks: Any  # int64 per row, the file's rank column
    scores: Any  # float64 per row
    eval_ranks: Any  # int64 per row, see trec_eval_order
    order: Any  # rows in run_entry's key order (topic id, eval_rank)
    missing: list[int]  # rows whose document the snapshot does not have
    missing_docs: list[str]  # and those documents' ids, row by row


def _prepare(run_file: RunFile, label: str, topics: _IdIndex, docs: _IdIndex,
             allow_unknown_docs: bool) -> _PreparedRun:
    """Resolve a run's topics and documents (every topic must be in the snapshot; every
    document too unless `allow_unknown_docs`) and rank its rows in trec_eval's order."""
    import numpy as np

    codes, names = run_file.topic_codes()
    name_ids, name_positions = topics.lookup(names)
    if (name_positions < 0).any():
        unknown = [n for n, p in zip(names, name_positions, strict=True) if p < 0]
        index = int(np.argmax(name_positions[codes] < 0))
        raise InputError(run_file.path, int(run_file.lines[index]),
                         f"topic {run_file.topics[index]!r} is not in snapshot {label!r} "
                         f"({len(unknown)} unknown topic(s) in the file)")
    topic_col = name_ids[codes]
    doc_col, doc_positions = docs.lookup(run_file.docs)
    missing: list[int] = np.flatnonzero(doc_positions < 0).tolist()
    if missing and not allow_unknown_docs:
        index = missing[0]
        raise InputError(run_file.path, int(run_file.lines[index]),
                         f"document {run_file.docs[index]!r} (topic {run_file.topics[index]!r}) "
                         f"is not in snapshot {label!r} ({len(missing)} unknown document "
                         "row(s); --allow-unknown-docs keeps them as unresolved)")
    # Documents the snapshot lacks have no place in its byte order: compare their strings.
    order_keys = run_file.docs if missing else docs.byte_order(doc_positions)
    order, eval_ranks = trec_eval_order(topic_col, order_keys, run_file.scores)
    return _PreparedRun(run_file.tag, run_file.checksum, len(run_file), topic_col, doc_col,
                        run_file.ranks, run_file.scores, eval_ranks, order, missing,
                        [run_file.docs[i] for i in missing])


def _write_entries(session: Session, run_id: int, run: _PreparedRun) -> None:
    """Resolved entries to `run_entry`, unknown documents to `run_entry_unresolved`, each with
    its rank in trec_eval's order (`eval_rank`).

    Entries go in key order (topic id, eval_rank): every insert lands on the right edge of the
    primary key's index, PostgreSQL's fast path.
    """
    import numpy as np

    topic_col, doc_col, eval_ranks = run.topic_ids, run.doc_ids, run.eval_ranks
    ranks, scores, order = run.ranks, run.scores, run.order
    if run.missing:
        bulk_insert(session, "run_entry_unresolved", UNRESOLVED_COLUMNS,
                    [(run_id, int(topic_col[i]), doc, int(ranks[i]), int(eval_ranks[i]),
                      float(scores[i])) for i, doc in zip(run.missing, run.missing_docs,
                                                          strict=True)])
        order = order[doc_col[order] >= 0]
    bulk_insert_columns(session, "run_entry", {
        "run_id": np.full(len(order), run_id), "topic_id": topic_col[order],
        "eval_rank": eval_ranks[order], "document_id": doc_col[order], "rank": ranks[order],
        "score": scores[order]})


def trec_eval_order(topics: Sequence[Any], docs: Sequence[Any], scores: Any) -> tuple[Any, Any]:
    """(row order by topic then trec_eval rank, each row's 1-based trec_eval rank): score
    descending, then document id descending (byte-wise, as trec_eval's strcmp; code-point
    order is the same).

    `docs` are the document ids, or integers in their byte order (one sort, no strings). With
    strings, only rows that tie on (topic, score) are compared by document at all. Topics sort
    by value, so for integer topic ids the order is `run_entry`'s key order.
    """
    import numpy as np
    import pandas as pd

    topic_codes = pd.factorize(np.asarray(topics), sort=True)[0]
    scores = np.asarray(scores, dtype=np.float64)
    if isinstance(docs, np.ndarray):
        order = np.lexsort((-docs, -scores, topic_codes))
    else:
        order = np.lexsort((-scores, topic_codes))
        tied_with_next = ((topic_codes[order][1:] == topic_codes[order][:-1])
                          & (scores[order][1:] == scores[order][:-1]))
        if tied_with_next.any():
            in_tie = np.zeros(len(order), dtype=bool)
            in_tie[1:] |= tied_with_next
            in_tie[:-1] |= tied_with_next
            tied_rows = order[in_tie]
            tied_docs = np.asarray([docs[i] for i in tied_rows], dtype=object)
            doc_codes = np.zeros(len(order), dtype=np.int64)  # only compared within a tie
            doc_codes[tied_rows[tied_docs.argsort(kind="stable")]] = np.arange(len(tied_rows))
            order = np.lexsort((-doc_codes, -scores, topic_codes))
    sorted_topics = topic_codes[order]
    starts = np.r_[0, np.flatnonzero(sorted_topics[1:] != sorted_topics[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order)) - group_start + 1
    return order, ranks


class TaskProgress:
    """A transient rich progress bar on stderr over `total` steps, or nothing when disabled."""

    def __init__(self, enabled: bool, total: int, label: str = "working") -> None:
        self.enabled = enabled and total > 1
        self.total = total
        self.label = label
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> TaskProgress:
        if self.enabled:
            from rich.progress import Progress

            from tcdb.cli.output import err_console

            self._bar = Progress(console=err_console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


def list_runs(collection: str | None = None, snapshot: str | None = None) -> list[dict[str, Any]]:
    """Every run (optionally of one collection / snapshot) with its metadata and sizes."""
    from tcdb.catalog import get_collection
    from tcdb.queries import run_rows

    with session_scope() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is None:
            raise InputError(None, None, "a snapshot needs its collection")
        if snapshot is not None:
            from tcdb.catalog import get_snapshot

            get_snapshot(session, collection or "", snapshot)
        return run_rows(session.connection(), collection_id=collection_id, snapshot=snapshot)


def get_runs(session: Session, snapshot: Snapshot, tags: Sequence[str] | None = None) -> list[Run]:
    """The snapshot's runs (all, or those tags, in the order given); unknown tags are named."""
    rows = list(session.execute(
        select(Run).where(Run.snapshot_id == snapshot.id).order_by(Run.tag)).scalars())
    if tags is None:
        return rows
    by_tag = {r.tag: r for r in rows}
    unknown = [t for t in tags if t not in by_tag]
    if unknown:
        known = ", ".join(by_tag) or "none imported yet"
        raise NotFoundError(f"no run {', '.join(map(repr, unknown))} in snapshot "
                            f"{snapshot.label!r} (runs: {known})")
    return [by_tag[t] for t in dict.fromkeys(tags)]


def count_runs(session: Session, snapshot_id: int) -> int:
    return session.execute(select(func.count()).select_from(Run).where(
        Run.snapshot_id == snapshot_id)).scalar_one()
