"""Ingest a snapshot: documents as versions, topics, and the snapshot's original qrels.

Atomic and idempotent: everything of one snapshot is written in one transaction, so a crash
or Ctrl-C leaves nothing, and the snapshot becomes visible (`complete`) only at commit. Bad input
(an error naming file, line and reason) rolls it back too and leaves no trace: no `failed` row,
the same row counts in every table; whoever wants a record of failures keeps it where it runs
(the CLI's exit code, the Prefect flow run). An empty source is bad input. The same source again
changes nothing; a different source under the same label needs `replace=True`, except for a
snapshot registered without documents (`tcdb.ingest.register`), which the ingest fills in place
(its topics, runs and published scores stay). Two processes
ingesting one snapshot at once: the second is refused at once (`tcdb.storage.locks`).

Documents keep their identity across snapshots by the collection's rule (id or URL); each
version is a `content` row keyed by the xxh3-128 hash of its normalised text, so a document
that did not change between snapshots costs one membership row, not another copy of its text.
Work is streamed in batches, so memory stays flat however large the snapshot.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self, TypeVar

from pydantic import model_validator
from sqlalchemy import func
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection
from tcdb.collections.files.bad_lines import rejects_target
from tcdb.collections.sources.records import Rejected
from tcdb.collections.sources.source import SnapshotSource
from tcdb.errors import ConflictError, FieldError, InputError
from tcdb.ingest.documents import write_documents
from tcdb.ingest.report import IngestReport, SnapshotIngestResult
from tcdb.ingest.topics import write_topics
from tcdb.operations import Database, Name, Request, argument, operation, option
from tcdb.queries import UNLABELLED, documents_per_source
from tcdb.queries.churn import count_churn, drift_counts
from tcdb.queries.snapshot_stats import live_token_totals
from tcdb.schema import Collection, Snapshot, SnapshotDocument, SnapshotStatus
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.locks import ingest_lock_name
from tcdb.vocabulary import OnBadLines, OnDuplicate

T = TypeVar("T")


class SnapshotIngestRequest(Request):
    """A snapshot's source (an ir_datasets id, local files, or a Cocktail folder) and how to
    store it."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label, e.g. 2022-06.", metavar="LABEL")
    irds: str | None = option(None, help="An ir_datasets id, e.g. longeval-web/2022-06 or "
                              "cord19/trec-covid/round1.")
    docs: Path | None = option(None, help="Documents: TREC SGML (file, .gz, or folder) or "
                               "JSONL / BEIR corpus.jsonl.")
    topics_file: Path | None = option(None, flag="--topics", metavar="FILE",
                                      help="Topics: TREC <top>, TSV or BEIR queries.jsonl.")
    qrels_file: Path | None = option(None, flag="--qrels", metavar="FILE",
                                     help="Qrels: TREC or BEIR TSV.")
    source_labels: Path | None = option(
        None, metavar="FILE",
        help="Who wrote each document, for corpora of any format: lines "
        "doc_id<TAB>source[<TAB>twin_of] (source: human, llm, …; twin_of: the id of the "
        "original an LLM document rewrites). JSONL/BEIR documents may carry the fields "
        "`source` and `twin_of` themselves.")
    cocktail: Path | None = option(
        None, metavar="FOLDER",
        help="A Cocktail dataset folder (corpus/human.jsonl and one corpus per LLM, "
        "queries.jsonl, qrels/test.tsv): documents become ID-SOURCE, labelled human or llm, "
        "each LLM document the twin of ID-human; the qrels judge ID-human.")
    date: dt.date | None = option(None, metavar="YYYY-MM-DD", help="Snapshot date.")
    qrels: Name = option("original", flag="--qrels-name",
                        help="Name of the snapshot's qrels set.")
    text: bool = option(True, help="Keep the documents' text (--no-text: content hashes and "
                        "lengths only).")
    replace: bool = option(False, help="Re-ingest a label from a different source (its runs "
                           "and scores are removed).")
    on_duplicate: OnDuplicate = option(
        OnDuplicate.error, help="A document id given twice with different texts: refuse "
        "(error), or keep the first or the last text. The same id with the same text is "
        "always kept once.")
    on_bad_lines: OnBadLines = option(
        OnBadLines.error, help="A line of the local files its reader cannot read (a bad id, "
        "malformed JSON, a document without <DOCNO>): refuse the files (error), or set it "
        "aside in the rejects file and go on, naming the first ones (warn) or counting them "
        "(skip).")
    rejects: Path | None = option(
        None, metavar="FILE", help="Where set-aside lines go (TSV: file, line, reason); "
        "default LABEL.rejects.tsv in the current folder.")

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        """Exactly one source: an ir_datasets id, documents, or a Cocktail folder."""
        given = (self.irds is not None) + (self.docs is not None) + (self.cocktail is not None)
        if given != 1:
            raise FieldError("irds/docs", "give either irds (an ir_datasets id) or docs (a "
                             "path), or cocktail (a folder); a snapshot without documents is "
                             "registered with `tcdb snapshot register`")
        if self.cocktail is not None and (self.topics_file or self.qrels_file):
            raise FieldError("cocktail", "a Cocktail dataset folder holds its documents, "
                             "topics and qrels: give it alone")
        if self.irds is not None and (self.topics_file or self.qrels_file):
            raise FieldError("irds/topics_file/qrels_file", f"give an ir_datasets id "
                             f"({self.irds}) or local files, not both")
        return self

    def open_source(self) -> SnapshotSource:
        """The source, opened afresh (a retry of a failed ingest opens it again)."""
        from tcdb.collections.sources.snapshot import open_source

        return open_source(self.irds, self.docs, self.topics_file, self.qrels_file,
                           labels=self.source_labels, cocktail=self.cocktail,
                           on_bad_lines=self.on_bad_lines)


@operation("snapshot_ingest", command="snapshot ingest", writes=True)
def snapshot_ingest(request: SnapshotIngestRequest, db: Database) -> SnapshotIngestResult:
    """Ingest a snapshot: documents (as versions), topics and its qrels, atomically."""
    report = ingest_snapshot(db, request.collection, request.snapshot, request.open_source(),
                             date=request.date, qrels_name=request.qrels,
                             with_text=request.text, replace=request.replace,
                             on_duplicate=request.on_duplicate, progress=True,
                             on_bad_lines=request.on_bad_lines, rejects=request.rejects)
    return SnapshotIngestResult.of(report)


def ingest_snapshot(
    db: Database,
    collection: str,
    label: str,
    source: SnapshotSource,
    *,
    date: dt.date | None = None,
    qrels_name: str = "original",
    with_text: bool = True,
    replace: bool = False,
    on_duplicate: OnDuplicate | str = OnDuplicate.error,
    progress: bool = False,
    on_bad_lines: OnBadLines = OnBadLines.error,
    rejects: Path | None = None,
) -> IngestReport:
    """Ingest `source` as snapshot `label` of `collection` (see the module docstring).

    `on_bad_lines` says how the lines `source`'s readers set aside are said (`source` was
    opened with it); they go to `rejects` (default LABEL.rejects.tsv), written before the
    commit, so an ingest whose rejects cannot be written writes nothing."""
    started = time.perf_counter()
    on_bad_lines = OnBadLines(on_bad_lines)
    rejects_path = rejects_target(on_bad_lines, rejects, f"{label}.rejects.tsv")
    try:
        policy = OnDuplicate(on_duplicate)
    except ValueError:
        raise FieldError("on_duplicate", f"{on_duplicate!r} is not one of "
                         f"{', '.join(d.value for d in OnDuplicate)}") from None
    fingerprint = source.fingerprint()
    with db.session() as session:  # "nothing to do" needs no write lock
        coll = get_collection(session, collection)
        done = _already_there(session, coll, label, source, fingerprint, replace)
    if done is not None:
        return done
    # Topics and qrels are read before anything is written: a bad line fails at once.
    topics, rejected = _kept(source.topics())
    judgments = source.qrels()
    qrels, rejected_qrels = (None, []) if judgments is None else _kept(judgments)
    report = IngestReport(collection, label, "ingested", source.description,
                          rejected=rejected + rejected_qrels)
    busy = (f"snapshot {label!r} of {collection!r} is being ingested by another process; "
            "try again when it has finished")
    with db.write_session(ingest_lock_name(collection, label), busy=busy) as session:
        coll = get_collection(session, collection)
        # Another process may have finished this snapshot while this one waited.
        done = _already_there(session, coll, label, source, fingerprint, replace)
        if done is not None:
            return done
        snap = None if replace else _registered(session, coll, label)
        if snap is None:
            _drop_existing(session, coll, label)
            snap = Snapshot(collection_id=coll.pk, label=label, date=date,
                            source=source.description, source_fingerprint=fingerprint,
                            status=SnapshotStatus.ingesting, with_text=with_text)
        else:  # registered without documents: filled in place, its runs and scores kept
            snap.source, snap.source_fingerprint = source.description, fingerprint
            snap.date, snap.with_text = date or snap.date, with_text
            snap.with_documents, snap.topics_from_scores = True, False
        session.add(snap)
        session.flush()
        token_totals = write_documents(session, coll, snap, source, with_text, report,
                                       progress, policy)
        if report.n_documents == 0:
            raise _no_documents(source)
        _compare_with_previous(session, coll, snap, report)
        top_ids = write_topics(session, coll, snap, topics, report)
        if qrels is not None:
            from tcdb.judging.qrels import store_qrels

            stored = store_qrels(session, snap, qrels_name, "original", qrels,
                                 method="ingest", source=source.description, top_ids=top_ids)
            report.n_judgments = stored.n_judgments
        snap.n_documents = report.n_documents
        snap.n_topics = report.n_topics
        snap.n_judgments = report.n_judgments
        snap.n_documents_edited = report.n_documents_edited
        snap.n_topics_edited = report.n_topics_edited
        snap.n_characters_removed = report.n_characters_removed
        snap.n_rejected = report.n_rejected
        if report.rejected and rejects_path is not None:
            _set_aside(report, rejects_path, on_bad_lines)
        if token_totals is None:  # summed as written, unless a repeat replaced a membership
            token_totals = live_token_totals(session.connection(), [snap.pk]).get(
                snap.pk, (0, 0, None, None))
        (snap.tokens_counted, snap.tokens_total, snap.tokens_min,
         snap.tokens_max) = token_totals
        snap.status = SnapshotStatus.complete
        snap.completed_at = dt.datetime.now(dt.UTC)
        session.add(snap)
        session.flush()
        _renumber(session, coll)
    _refresh_planner_statistics(db)
    report.seconds = time.perf_counter() - started
    return report


def _kept(records: Iterable[T | Rejected]) -> tuple[list[T], list[Rejected]]:
    """A reader's records, and the lines it set aside (`--on-bad-lines warn|skip`)."""
    kept: list[T] = []
    rejected: list[Rejected] = []
    for record in records:
        (rejected if isinstance(record, Rejected) else kept).append(record)  # type: ignore[arg-type]
    return kept, rejected


def _set_aside(report: IngestReport, path: Path, mode: OnBadLines) -> None:
    """Write the set-aside lines to `path` and say them: their count and file, and under
    `warn` the first few with their reasons."""
    from tcdb.collections.files.bad_lines import write_rejects

    written = report.rejects_file = write_rejects(path, report.rejected)
    report.warnings.append(f"{report.n_rejected:,} bad line(s) set aside "
                           f"(--on-bad-lines {mode.value}), each with its reason in {written}")
    if mode is OnBadLines.warn:
        shown = report.rejected[:5]
        more = report.n_rejected - len(shown)
        report.warnings += [f"set aside {r.file}:{r.line}: {r.reason}" for r in shown]
        if more:
            report.warnings.append(f"set aside {more:,} more line(s): see {written}")


def _refresh_planner_statistics(db: Database) -> None:
    """PostgreSQL: ANALYZE the tables an ingest grew, after its commit, so that a `snapshot
    diff` or `stats` right after it gets a good plan instead of waiting for autovacuum (a
    nested loop over unanalysed tables made stats ~3x slower). A role that does not own the
    tables gets a warning from PostgreSQL, not an error.

    `content` from a sample of 3,000 rows rather than 30,000: its columns are unique keys and
    counts, which a small sample describes as well, and its rows hold the texts, so the large
    sample read most of its heap (~2 µs a document at 50,000 documents, more than the other
    two tables together). Autovacuum's later ANALYZE uses the full sample again.
    """
    from sqlalchemy import text

    engine = db.engine()
    if engine.dialect.name != "postgresql":
        return
    with engine.connect() as conn:
        conn.execute(text("ANALYZE snapshot_document, document"))
        conn.execute(text("SET LOCAL default_statistics_target = 10"))
        conn.execute(text("ANALYZE content"))
        conn.commit()


def _no_documents(source: SnapshotSource) -> InputError:
    """An empty source is bad input, not a snapshot of 0 documents: named by its folder when
    it is a LongEval snapshot whose folder exists before its data (`IrdsSource.empty_folder`)."""
    empty_folder = getattr(source, "empty_folder", None)
    folder = empty_folder() if empty_folder is not None else None
    if folder is not None:
        return InputError(folder, None, f"no documents: the folder of {source.description} "
                          "holds none yet")
    return InputError(source.description, None, "no documents: an empty source is not a "
                      "snapshot")


def _already_there(session: Session, coll: Collection, label: str, source: SnapshotSource,
                   fingerprint: str, replace: bool) -> IngestReport | None:
    """The report of a snapshot already complete from this source (nothing to do), None when
    there is work; a complete snapshot from another source needs `replace`."""
    old = session.exec(select(Snapshot).where(
        Snapshot.collection_id == coll.pk, Snapshot.label == label)).first()
    if old is None or old.status != SnapshotStatus.complete or not old.with_documents:
        return None
    if old.source_fingerprint == fingerprint and not replace:
        return IngestReport(coll.name, label, "unchanged", old.source,
                            n_documents=old.n_documents, n_topics=old.n_topics,
                            n_judgments=old.n_judgments)
    if not replace:
        raise ConflictError(
            f"snapshot {label!r} of {coll.name!r} was ingested from {old.source}; "
            f"{source.description} is a different source: pass --replace to re-ingest")
    return None


def _compare_with_previous(session: Session, coll: Collection, snap: Snapshot,
                           report: IngestReport) -> None:
    """Count the documents changed and unchanged since the snapshot before this one (in
    snapshot order: date, then label), as `tcdb snapshot diff` would, for the summary — and
    keep the pair's churn rows, so that `snapshot diff` and `stats` read them later."""
    def order(s: Snapshot) -> tuple[dt.date, str]:
        return (s.date or dt.date.max, s.label)

    earlier = [s for s in session.exec(select(Snapshot).where(
        Snapshot.collection_id == coll.pk, Snapshot.status == SnapshotStatus.complete,
        Snapshot.id != snap.pk)).all() if order(s) < order(snap)]
    conn = session.connection()
    # Counted from the rows written: a repeat that replaced an earlier batch's row counts once.
    report.n_documents = conn.execute(select(func.count()).where(
        col(SnapshotDocument.snapshot_id) == snap.pk)).scalar_one()
    by_source = documents_per_source(conn, snap.pk)
    report.n_by_source = {} if set(by_source) <= {UNLABELLED} else by_source
    if not earlier:
        return
    previous = max(earlier, key=order)
    rows = count_churn(conn, previous.pk, snap.pk)
    bulk_insert(conn, "snapshot_churn",
                ["snapshot_a_id", "snapshot_b_id", "source_a", "source_b", "state", "n"],
                [(previous.pk, snap.pk, *row) for row in rows])
    drift = drift_counts(rows)
    report.previous_snapshot = previous.label
    report.n_changed_documents = drift["changed"]
    report.n_unchanged_documents = drift["unchanged"]


def _registered(session: Session, coll: Collection, label: str) -> Snapshot | None:
    """The snapshot `label` when it was registered without documents (`tcdb.ingest.register`):
    an ingest adds its documents, topics and qrels to it rather than replacing it."""
    found = session.exec(select(Snapshot).where(
        Snapshot.collection_id == coll.pk, Snapshot.label == label)).first()
    if found is None or found.with_documents or found.status != SnapshotStatus.complete:
        return None
    return found


def _drop_existing(session: Session, coll: Collection, label: str) -> None:
    """Remove a replaced snapshot, or a `failed` row an older tcdb left, with all that hangs
    on it."""
    found = session.exec(select(Snapshot).where(
        Snapshot.collection_id == coll.pk, Snapshot.label == label)).first()
    if found is None:
        return
    from tcdb.storage.housekeeping import delete_snapshot

    delete_snapshot(session, found.pk)
    session.flush()


def _renumber(session: Session, coll: Collection) -> None:
    """Keep `ordinal` in snapshot order (by date, then label) as snapshots arrive."""
    snaps = session.exec(select(Snapshot).where(Snapshot.collection_id == coll.pk)).all()
    ordered = sorted(snaps,
                     key=lambda s: (s.date or dt.date.max, s.label))
    for ordinal, snap in enumerate(ordered):
        if snap.ordinal != ordinal:
            snap.ordinal = ordinal
            session.add(snap)
    session.flush()


def pending_snapshots(db: Database, spec_path: Any) -> list[tuple[Any, str | None]]:
    """Declared snapshots of a spec that are not `complete`, each with why it cannot be read
    yet (None when its source is available)."""
    from tcdb.catalog.collections import sync_spec

    spec = sync_spec(db, spec_path)
    with db.session() as session:
        coll = get_collection(session, spec.name)
        done = set(session.exec(select(Snapshot.label).where(
            Snapshot.collection_id == coll.id, Snapshot.status == SnapshotStatus.complete)))
    return [(snap, snap.availability()) for snap in spec.snapshots if snap.label not in done]
