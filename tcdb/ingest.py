"""Ingest a snapshot: documents as versions, topics, and the snapshot's original qrels.

Atomic and idempotent: everything of one snapshot is written in one transaction, so a crash
or Ctrl-C leaves nothing, and the snapshot becomes visible (`complete`) only at commit. The same
source again changes nothing; a different source under the same label needs `replace=True`.

Documents keep their identity across snapshots by the collection's rule (id or URL); each
version is a `content` row keyed by the xxh3-128 hash of its normalised text, so a document
that did not change between snapshots costs one membership row, not another copy of its text.
Work is streamed in batches, so memory stays flat however large the snapshot.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import asdict, dataclass, field
from itertools import islice, repeat
from typing import Any

import xxhash
from sqlalchemy import Connection, bindparam, select, text, update
from sqlmodel import Session

from tcdb.catalog import get_collection
from tcdb.collections.records import DocumentRecord, TopicRecord
from tcdb.collections.sources import SnapshotSource
from tcdb.db import bulk_insert, session_scope
from tcdb.errors import ConflictError, InputError
from tcdb.lookups import pairs_in, rows_in
from tcdb.schema import (
    Collection,
    Content,
    DocIdentity,
    Document,
    Snapshot,
    SnapshotStatus,
    Topic,
    TopicIdentity,
)

BATCH = 5_000


@dataclass
class IngestReport:
    """What an ingest did, for the CLI summary, flows' artifacts and tests."""

    collection: str
    label: str
    status: str  # "ingested" | "unchanged"
    source: str
    n_documents: int = 0
    n_new_documents: int = 0
    n_new_contents: int = 0
    n_topics: int = 0
    n_judgments: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def docs_per_second(self) -> float:
        return self.n_documents / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "docs_per_second": round(self.docs_per_second, 1)}


def normalise_text(text: str) -> str:
    """The text a version is identified by: NFC, whitespace runs collapsed, ends stripped."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def content_hash(normalised: str) -> bytes:
    return xxhash.xxh3_128_digest(normalised.encode("utf-8"))


# ASCII characters that str.split() treats as whitespace, all mapped to a space.
_ASCII_WHITESPACE = bytes(c for c in range(128) if chr(c).isspace())
_TO_SPACE = bytes.maketrans(_ASCII_WHITESPACE, b" " * len(_ASCII_WHITESPACE))
# Finds a run of spaces twice as fast as `b"  " in data` (sre's literal-prefix search).
_SPACE_RUN = re.compile(b"  ")


def version_of(text: str) -> tuple[bytes, int]:
    """(content hash, length) of the normalised text: `content_hash(normalise_text(text))`.

    The hot path of ingest. For ASCII text — most of a web crawl — the same normalisation runs
    on bytes: one C-speed translate of every whitespace character to a space, and a split and
    join only when runs of spaces remain inside (tested equal to the reference on every ASCII
    whitespace character).
    """
    if not text.isascii():
        normalised = normalise_text(text)
        return content_hash(normalised), len(normalised)
    data = text.encode("ascii").translate(_TO_SPACE).strip(b" ")
    if _SPACE_RUN.search(data):
        data = b" ".join(data.split())
    return xxhash.xxh3_128_digest(data), len(data)


def ingest_snapshot(
    collection: str,
    label: str,
    source: SnapshotSource,
    *,
    date: dt.date | None = None,
    qrels_name: str = "original",
    with_text: bool = True,
    replace: bool = False,
    progress: bool = False,
) -> IngestReport:
    """Ingest `source` as snapshot `label` of `collection` (see the module docstring)."""
    started = time.perf_counter()
    fingerprint = source.fingerprint()
    with session_scope() as session:
        coll = get_collection(session, collection)
        collection_id = coll.id
        found = session.exec(select(Snapshot).where(
            Snapshot.collection_id == coll.id, Snapshot.label == label)).first()
        if found is not None:
            old = found[0]
            if old.status == SnapshotStatus.complete and old.source_fingerprint == fingerprint \
                    and not replace:
                return IngestReport(collection, label, "unchanged", old.source,
                                    n_documents=old.n_documents, n_topics=old.n_topics,
                                    n_judgments=old.n_judgments)
            if old.status == SnapshotStatus.complete and not replace:
                raise ConflictError(
                    f"snapshot {label!r} of {collection!r} was ingested from {old.source}; "
                    f"{source.description} is a different source: pass --replace to re-ingest")
    report = IngestReport(collection, label, "ingested", source.description)
    try:
        with session_scope() as session:
            coll = get_collection(session, collection)
            _drop_existing(session, coll, label)
            snap = Snapshot(collection_id=coll.id, label=label, date=date,
                            source=source.description, source_fingerprint=fingerprint,
                            status=SnapshotStatus.ingesting, with_text=with_text)
            session.add(snap)
            session.flush()
            _ingest_documents(session, coll, snap, source, with_text, report, progress)
            top_ids = _ingest_topics(session, coll, snap, source.topics(), report)
            qrels = source.qrels()
            if qrels is not None:
                from tcdb.qrels import store_qrels

                stored = store_qrels(session, snap, qrels_name, "original", qrels,
                                     method="ingest", source=source.description,
                                     top_ids=top_ids)
                report.n_judgments = stored.n_judgments
            snap.n_documents = report.n_documents
            snap.n_topics = report.n_topics
            snap.n_judgments = report.n_judgments
            snap.status = SnapshotStatus.complete
            snap.completed_at = dt.datetime.now(dt.UTC)
            session.add(snap)
            session.flush()
            _renumber(session, coll)
    except Exception as exc:
        _record_failure(collection_id, label, source, fingerprint, date, exc)
        raise
    report.seconds = time.perf_counter() - started
    return report


def _drop_existing(session: Session, coll: Collection, label: str) -> None:
    """Remove an earlier attempt (failed, or replaced) and everything that hangs on it."""
    found = session.exec(select(Snapshot).where(
        Snapshot.collection_id == coll.id, Snapshot.label == label)).first()
    if found is None:
        return
    from tcdb.housekeeping import delete_snapshot

    delete_snapshot(session, found[0].id)
    session.flush()


def _record_failure(collection_id: int | None, label: str, source: SnapshotSource,
                    fingerprint: str, date: dt.date | None, exc: BaseException) -> None:
    """Leave a `failed` row (no data) so that lists and flows can tell what went wrong."""
    if collection_id is None:
        return
    try:
        with session_scope() as session:
            found = session.exec(select(Snapshot).where(
                Snapshot.collection_id == collection_id, Snapshot.label == label)).first()
            if found is not None:  # a complete snapshot survives a failed --replace
                return
            session.add(Snapshot(collection_id=collection_id, label=label, date=date,
                                 source=source.description, source_fingerprint=fingerprint,
                                 status=SnapshotStatus.failed, error=str(exc)[:2000]))
    except Exception:  # noqa: BLE001 - never hide the original error
        pass


@dataclass
class _Batch:
    """Documents prepared for writing: membership rows and the distinct versions they use."""

    members: list[tuple[str, str, bytes]]  # external id, key, content hash
    contents: dict[bytes, tuple[int, str | None, str | None]]  # hash → length, text, source


def _prepare(source: SnapshotSource, by_url: bool, id_fallback: bool,
             with_text: bool) -> Iterator[_Batch]:
    """Normalise and hash documents batch by batch: pure Python, no database and no ORM
    object, since it may run in a reader process of its own (`tcdb.readahead`).

    Documents repeated across batches are caught by the database's unique constraints
    (`_write_batch`), not by sets here: memory stays flat however large the snapshot.
    """
    for records in _batches(source.documents(), BATCH):
        batch = _Batch([], {})
        for record in records:
            key = _document_key(record, by_url, id_fallback, source.description)
            digest, length = version_of(record.text)
            batch.members.append((record.doc_id, key, digest))
            if digest not in batch.contents:
                batch.contents[digest] = (length, record.text if with_text else None,
                                          record.source)
        yield batch


def _ingest_documents(session: Session, coll: Collection, snap: Snapshot,
                      source: SnapshotSource, with_text: bool, report: IngestReport,
                      progress: bool) -> None:
    """Write membership, documents and versions; reading and hashing the next batches runs
    ahead, in a process or a thread, while this one is in the database."""
    from tcdb.readahead import read_ahead

    conn = session.connection()
    by_url, id_fallback = coll.doc_identity == DocIdentity.url, bool(coll.id_fallback)
    batches = read_ahead(lambda: _prepare(source, by_url, id_fallback, with_text),
                         name="tcdb-ingest-reader")
    hint = source.documents_count_hint()
    with closing(batches), _progress(progress, hint, f"{coll.name}/{snap.label}") as tick:
        for batch in batches:
            _write_batch(conn, coll, snap, batch, source.description, report)
            report.n_documents += len(batch.members)
            tick(len(batch.members))


def _write_batch(conn: Connection, coll: Collection, snap: Snapshot, batch: _Batch,
                 where: str, report: IngestReport) -> None:
    """One batch's documents, versions and memberships. A document id or key the snapshot
    already holds violates a unique constraint; that becomes an InputError naming both
    documents. (PostgreSQL needs a savepoint to still ask which; SQLite's transaction stays
    usable after a failed statement.)"""
    from tcdb.db import is_integrity_error, is_postgres

    savepoint = conn.begin_nested() if is_postgres(conn) else None
    try:
        document_of = _resolve_documents(conn, coll.id, [m[1] for m in batch.members], report)
        content_of = _resolve_contents(conn, batch.contents, report)
        bulk_insert(conn, "snapshot_document",
                    ["snapshot_id", "document_id", "external_id", "content_id"],
                    [(snap.id, document_of[key], external, content_of[digest])
                     for external, key, digest in batch.members])
    except Exception as exc:
        if not is_integrity_error(exc):
            raise
        if savepoint is not None:
            savepoint.rollback()
        error = _duplicate_error(conn, coll, snap, batch, where)
        if error is None:
            raise
        raise error from None
    if savepoint is not None:
        savepoint.commit()


def _duplicate_error(conn: Connection, coll: Collection, snap: Snapshot, batch: _Batch,
                     where: str) -> InputError | None:
    """Which document repeats an id or a key: within the batch, or one written before it."""
    from tcdb.schema import SnapshotDocument

    def twice(external: str) -> InputError:
        return InputError(where, None, f"document id {external!r} occurs twice in the snapshot")

    def shared(first: str, second: str, key: str) -> InputError:
        return InputError(where, None, f"documents {first!r} and {second!r} share the key "
                          f"{key!r} ({coll.doc_identity.value})")

    by_external: dict[str, str] = {}
    by_key: dict[str, str] = {}
    for external, key, _ in batch.members:
        if external in by_external:
            return twice(external)
        if key in by_key:
            return shared(by_key[key], external, key)
        by_external[external] = key
        by_key[key] = external
    earlier = rows_in(conn, select(SnapshotDocument.external_id).where(
        SnapshotDocument.snapshot_id == snap.id), SnapshotDocument.external_id,
        list(by_external))
    if earlier:
        return twice(earlier[0][0])
    earlier = rows_in(conn, select(Document.key, SnapshotDocument.external_id)
                      .join(SnapshotDocument, SnapshotDocument.document_id == Document.id)
                      .where(SnapshotDocument.snapshot_id == snap.id,
                             Document.collection_id == coll.id), Document.key, list(by_key))
    if earlier:
        key, first = earlier[0]
        return shared(first, by_key[key], key)
    return None


def _document_key(record: DocumentRecord, by_url: bool, id_fallback: bool, where: str) -> str:
    if not by_url:
        return record.doc_id
    if record.url:
        return record.url
    if id_fallback:
        return record.doc_id
    raise InputError(where, None, f"document {record.doc_id!r} has no URL, and the collection "
                     "keeps documents by URL (allow `id_fallback` in its spec to key it by id)")


def _resolve_documents(conn: Connection, collection_id: int, keys: list[str],
                       report: IngestReport) -> dict[str, int]:
    """key → document.id, creating the documents this collection has not seen before."""
    found = pairs_in(conn, select(Document.key, Document.id).where(
        Document.collection_id == collection_id), Document.key, keys)
    missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        ids = _new_ids(conn, "document", len(missing))
        bulk_insert(conn, "document", ["id", "collection_id", "key"],
                    zip(ids, repeat(collection_id), missing, strict=False))
        found.update(zip(missing, ids, strict=True))
        report.n_new_documents += len(missing)
    return found


def _resolve_contents(conn: Connection, contents: dict[bytes, tuple[int, str | None, str | None]],
                      report: IngestReport) -> dict[bytes, int]:
    """hash → content.id, storing each text once however many snapshots share it."""
    hashes = list(contents)
    found: dict[bytes, int] = {}
    fill: list[dict[str, Any]] = []
    known = rows_in(conn, select(Content.hash, Content.id, Content.text.is_(None)),
                     Content.hash, hashes)
    for digest, content_id, text_missing in known:
        digest = bytes(digest)
        found[digest] = content_id
        if text_missing and contents[digest][1] is not None:
            fill.append({"cid": content_id, "t": contents[digest][1]})
    if fill:  # an earlier --no-text ingest left these without text
        conn.execute(update(Content).where(Content.id == bindparam("cid"))
                     .values(text=bindparam("t")), fill)
    missing = [h for h in hashes if h not in found]
    if missing:
        ids = _new_ids(conn, "content", len(missing))
        bulk_insert(conn, "content", ["id", "hash", "length", "text", "source_label"],
                    ((i, h, *contents[h]) for i, h in zip(ids, missing, strict=True)))
        found.update(zip(missing, ids, strict=True))
        report.n_new_contents += len(missing)
    return found


_SEQUENCES: dict[str, str] = {}  # table → its id sequence (the same name in every database)


def _new_ids(conn: Connection, table: str, n: int) -> list[int]:
    """Reserve `n` primary keys, so new rows need no second query to learn their ids.

    PostgreSQL draws them from the table's sequence; SQLite continues after the largest id,
    which is safe because this transaction already holds SQLite's single write lock.
    """
    if conn.dialect.name == "postgresql":
        # The sequence named as a constant (a per-row pg_get_serial_sequence costs 10× the
        # nextval), the ids as one text (array parsing in the driver costs more than nextval).
        sequence = _SEQUENCES.get(table)
        if sequence is None:
            sequence = _SEQUENCES[table] = conn.execute(text(
                f"SELECT pg_get_serial_sequence('\"{table}\"', 'id')")).scalar_one()
        ids = conn.execute(text(
            "SELECT string_agg(nextval(CAST(:sequence AS regclass))::text, ',') "
            "FROM generate_series(1, :n)"), {"sequence": sequence, "n": n}).scalar_one()
        return [int(i) for i in ids.split(",")]
    start = conn.execute(text(f'SELECT COALESCE(MAX(id), 0) FROM "{table}"')).scalar_one()
    return list(range(start + 1, start + 1 + n))


def _ingest_topics(session: Session, coll: Collection, snap: Snapshot,
                   topics: Iterable[TopicRecord], report: IngestReport) -> dict[str, int]:
    from tcdb.collections.topics import normalise_query

    conn = session.connection()
    by_text = coll.topic_identity == TopicIdentity.text
    records = list(topics)
    keys: dict[str, str] = {}
    seen: set[str] = set()
    for record in records:
        if record.topic_id in seen:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} occurs twice")
        seen.add(record.topic_id)
        key = normalise_query(record.query) if by_text else record.topic_id
        if not key:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} has an empty query")
        if key in keys:
            raise InputError(snap.source, None,
                             f"topics {keys[key]!r} and {record.topic_id!r} have the same "
                             f"{'normalised query text' if by_text else 'id'} {key!r}")
        keys[key] = record.topic_id
    found = pairs_in(conn, select(Topic.key, Topic.id).where(
        Topic.collection_id == coll.id), Topic.key, list(keys))
    missing = [k for k in keys if k not in found]
    if missing:
        bulk_insert(conn, "topic", ["collection_id", "key"], ((coll.id, k) for k in missing))
        found.update(pairs_in(conn, select(Topic.key, Topic.id).where(
            Topic.collection_id == coll.id), Topic.key, missing))
    id_of_external: dict[str, int] = {}
    rows = []
    for record in records:
        key = normalise_query(record.query) if by_text else record.topic_id
        topic_id = found[key]
        id_of_external[record.topic_id] = topic_id
        rows.append({"snapshot_id": snap.id, "topic_id": topic_id,
                     "external_id": record.topic_id, "query": record.query,
                     "description": record.description, "narrative": record.narrative,
                     "fields": dict(record.fields) or None})
    if rows:
        from tcdb.schema import SnapshotTopic

        conn.execute(SnapshotTopic.__table__.insert(), rows)
    report.n_topics = len(rows)
    return id_of_external


def _renumber(session: Session, coll: Collection) -> None:
    """Keep `ordinal` in snapshot order (by date, then label) as snapshots arrive."""
    snaps = session.exec(select(Snapshot).where(Snapshot.collection_id == coll.id)).all()
    ordered = sorted((s[0] for s in snaps),
                     key=lambda s: (s.date or dt.date.max, s.label))
    for ordinal, snap in enumerate(ordered):
        if snap.ordinal != ordinal:
            snap.ordinal = ordinal
            session.add(snap)
    session.flush()


def _batches(records: Iterable[DocumentRecord], size: int) -> Iterator[list[DocumentRecord]]:
    iterator = iter(records)
    while batch := list(islice(iterator, size)):
        yield batch


class _progress:
    """A rich progress bar with docs/s when asked for, else a no-op counter."""

    def __init__(self, enabled: bool, total: int | None, label: str) -> None:
        self.enabled, self.total, self.label = enabled, total, label

    def __enter__(self):  # noqa: ANN204
        if not self.enabled:
            return lambda n: None
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} docs/s"), TimeElapsedColumn(), transient=False)
        self._progress.start()
        task = self._progress.add_task(f"ingest {self.label}", total=self.total, rate="–")
        started = time.perf_counter()
        done = [0]

        def tick(n: int) -> None:
            done[0] += n
            rate = done[0] / max(time.perf_counter() - started, 1e-9)
            self._progress.update(task, advance=n, rate=f"{rate:,.0f}")

        return tick

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._progress.stop()


def pending_snapshots(spec_path: Any) -> list[tuple[Any, str | None]]:
    """Declared snapshots of a spec that are not `complete`, each with why it cannot be read
    yet (None when its source is available)."""
    from tcdb.catalog import sync_spec

    spec = sync_spec(spec_path)
    with session_scope() as session:
        coll = get_collection(session, spec.name)
        done = {row[0] for row in session.exec(select(Snapshot.label).where(
            Snapshot.collection_id == coll.id, Snapshot.status == SnapshotStatus.complete))}
    return [(snap, snap.availability()) for snap in spec.snapshots if snap.label not in done]
