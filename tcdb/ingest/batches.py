"""Preparing a snapshot's documents for writing, batch by batch: each document's key,
normalised version (hash, length, tokens) and membership row — pure Python, no database, so
it runs ahead in a reader process or thread (`tcdb.ingest.readahead`) while
`tcdb.ingest.documents` writes. A source of several files (`document_parts`, e.g. a LongEval
snapshot) is read by several processes at once, and their documents are put back into the
batches one reader would have made — the same documents in the same order — so ids, versions
and every figure stored are the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import islice

from tcdb.collections.sources.records import DocumentRecord, Rejected
from tcdb.collections.sources.source import SnapshotSource
from tcdb.collections.sources.source_labels import check_label
from tcdb.errors import InputError
from tcdb.ingest.readahead import parallel_readers, read_ahead, read_parts_ahead
from tcdb.ingest.versions import version_of

BATCH = 5_000


# external id, key, content hash, source label, twin (the original's external id)
Member = tuple[str, str, bytes, str | None, str | None]
# A version's content row but its id and hash: length, whitespace tokens, text (None: not kept)
Version = tuple[int, int, str | None]


@dataclass
class Batch:
    """Documents prepared for writing: membership rows and the distinct versions they use."""

    members: list[Member]
    contents: dict[bytes, Version]  # hash → length, tokens, text
    notes: Notes = field(default_factory=lambda: Notes())  # what the readers changed or set aside


@dataclass
class Notes:
    """What readers said of the documents they read: texts they changed (NUL and the like
    removed), and lines they set aside (`--on-bad-lines warn|skip`), in file order."""

    n_edited: int = 0  # documents whose text a reader changed
    n_removed: int = 0  # characters it removed
    rejected: list[Rejected] = field(default_factory=list)

    def add(self, other: Notes) -> None:
        self.n_edited += other.n_edited
        self.n_removed += other.n_removed
        self.rejected += other.rejected


# Up to a batch of documents prepared, each member beside its version, and the readers' notes
# on them: what a reader sends.
Fragment = tuple[list[Member], list[Version], Notes]


def prepare_batches(source: SnapshotSource, by_url: bool, id_fallback: bool,
                    with_text: bool) -> Iterator[Batch]:
    """Normalise and hash documents batch by batch: pure Python, no database and no ORM
    object, since it may run in a reader process of its own (`tcdb.ingest.readahead`).

    Documents repeated across batches are caught by the database's unique constraints
    (`_write_batch`), not by sets here: memory stays flat however large the snapshot.
    """
    for members, versions, notes in prepare_fragments(source.documents(), source.description,
                                                      by_url, id_fallback, with_text):
        yield _batch(members, versions, notes)


def prepare_fragments(records: Iterable[DocumentRecord | Rejected], where: str, by_url: bool,
                      id_fallback: bool, with_text: bool) -> Iterator[Fragment]:
    """The records' members and versions, `BATCH` documents at a time."""
    for chunk in in_batches(records, BATCH):
        members: list[Member] = []
        versions: list[Version] = []
        notes = Notes()
        for record in chunk:
            if isinstance(record, Rejected):
                notes.rejected.append(record)
                continue
            if record.removed:
                notes.n_edited += 1
                notes.n_removed += record.removed
            url = record.url
            if by_url and url:  # _document_key, inline: the loop runs once per document
                key = url
            elif not by_url or id_fallback:
                key = record.doc_id
            else:
                key = _document_key(record, by_url, id_fallback, where)  # raises
            digest, length, n_tokens = version_of(record.text)
            if record.source is not None:
                check_label(record.source, where, None)
            members.append((record.doc_id, key, digest, record.source, record.twin_of))
            versions.append((length, n_tokens, record.text if with_text else None))
        yield members, versions, notes


def _batch(members: list[Member], versions: list[Version], notes: Notes | None = None) -> Batch:
    """A batch's members and the version of each distinct hash as its first document gives it
    (two texts may normalise alike: the first one's text is kept)."""
    digests = [m[2] for m in members]
    return Batch(members, dict(zip(reversed(digests), reversed(versions), strict=True)),
                 notes or Notes())


def rebatched(fragments: Iterable[Fragment]) -> Iterator[Batch]:
    """The batches one reader makes of the documents in these fragments' order: `BATCH`
    documents each, whatever the fragments' sizes (a file's last fragment is short)."""
    members: list[Member] = []
    versions: list[Version] = []
    notes = Notes()  # the fragments' notes, carried by the next batch made
    for more_members, more_versions, more_notes in fragments:
        members += more_members
        versions += more_versions
        notes.add(more_notes)
        while len(members) >= BATCH:
            yield _batch(members[:BATCH], versions[:BATCH], notes)
            notes = Notes()
            del members[:BATCH], versions[:BATCH]
    if members or notes.rejected:
        yield _batch(members, versions, notes)


def document_parts(source: SnapshotSource,
                   ) -> list[Callable[[], Iterator[DocumentRecord | Rejected]]]:
    """The source's documents as parts readable apart (one per file), whose concatenation is
    `documents()`; one part (the whole stream) when the source cannot say."""
    parts = getattr(source, "document_parts", None)
    found = parts() if parts is not None else None
    return list(found) if found else [source.documents]


def read_batches(source: SnapshotSource, by_url: bool, id_fallback: bool,
                  with_text: bool) -> Generator[Batch, None, None]:
    """The prepared batches, read ahead by one process (or thread), or by several over the
    source's parts, the batches then the same as one reader's."""
    parts = document_parts(source)
    readers = parallel_readers(len(parts))
    if readers == 1:
        return read_ahead(lambda: prepare_batches(source, by_url, id_fallback, with_text),
                          name="tcdb-ingest-reader")
    where = source.description
    return read_parts_ahead(
        [partial(_part_fragments, part, where, by_url, id_fallback, with_text) for part in parts],
        rebatched, readers=readers, name="tcdb-ingest-reader")


def _part_fragments(part: Callable[[], Iterable[DocumentRecord | Rejected]], where: str,
                    by_url: bool, id_fallback: bool, with_text: bool) -> Iterator[Fragment]:
    return prepare_fragments(part(), where, by_url, id_fallback, with_text)


def _document_key(record: DocumentRecord, by_url: bool, id_fallback: bool, where: str) -> str:
    if not by_url:
        return record.doc_id
    if record.url:
        return record.url
    if id_fallback:
        return record.doc_id
    raise InputError(where, None, f"document {record.doc_id!r} has no URL, and the collection "
                     "keeps documents by URL (allow `id_fallback` in its spec to key it by id)")


def in_batches(records: Iterable[DocumentRecord | Rejected], size: int,
               ) -> Iterator[list[DocumentRecord | Rejected]]:
    iterator = iter(records)
    while batch := list(islice(iterator, size)):
        yield batch
