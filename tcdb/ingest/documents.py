"""Writing a snapshot's documents: memberships, document identities and versions, in batches.

The batches are prepared ahead, in a process or a thread (`tcdb.ingest.batches`), while this
process writes; every write goes through the bulk writer inside the snapshot's transaction.
"""

from __future__ import annotations

from contextlib import closing
from itertools import repeat
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, select, text, update
from sqlmodel import Session, col

from tcdb.collections.sources.source import SnapshotSource
from tcdb.errors import InputError
from tcdb.ingest.batch_state import Guess, TokenTotals, collector_off_the_old_heap
from tcdb.ingest.batches import Batch, Member, Version, read_batches
from tcdb.ingest.report import IngestReport
from tcdb.ingest.twins import check_twins
from tcdb.progress import Progress
from tcdb.queries import pairs_in, rows_in
from tcdb.schema import Collection, Content, DocIdentity, Document, Snapshot, SnapshotDocument
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.db import is_integrity_error, is_postgres
from tcdb.vocabulary import OnDuplicate


class Repeats:
    """Document ids a snapshot's source gives more than once, and what became of them.

    The same id with the same text is kept once and counted (official id lists repeat ids:
    TREC-COVID's round 1 33 times, round 3 330). With another text it is a conflict: an error
    naming how many ids and the first ones, or — `on_duplicate` first / last — the first or the
    last text is kept, and counted.
    """

    def __init__(self, on_duplicate: OnDuplicate, where: str) -> None:
        self.policy = on_duplicate
        self.where = where
        self.n_identical = 0
        self.n_conflicting = 0
        self.conflicts: list[str] = []  # ids, first few, for the error

    def conflict(self, external: str) -> None:
        self.n_conflicting += 1
        if len(self.conflicts) < 5:
            self.conflicts.append(external)

    def check(self) -> None:
        """Raise, once the whole source is read, for conflicts nothing said how to resolve."""
        if self.policy is OnDuplicate.error and self.n_conflicting:
            shown = ", ".join(repr(e) for e in self.conflicts)
            more = f" and {self.n_conflicting - len(self.conflicts):,} more" \
                if self.n_conflicting > len(self.conflicts) else ""
            raise InputError(self.where, None,
                             f"document id {self.conflicts[0]!r} occurs twice in the snapshot "
                             f"with different texts (or source labels): {self.n_conflicting:,} "
                             "such repeat(s), of "
                             f"{shown}{more} (--on-duplicate first|last keeps one text)")


def write_documents(session: Session, coll: Collection, snap: Snapshot,
                    source: SnapshotSource, with_text: bool, report: IngestReport,
                    progress: bool, on_duplicate: OnDuplicate = OnDuplicate.error,
                    ) -> tuple[int, int, int | None, int | None] | None:
    """Write membership, documents and versions; reading and hashing the next batches runs
    ahead, in a process or a thread, while this one is in the database. Returns the
    snapshot's token totals (`TokenTotals`), None when the database must be asked."""
    conn = session.connection()
    by_url, id_fallback = coll.doc_identity == DocIdentity.url, bool(coll.id_fallback)
    batches = read_batches(source, by_url, id_fallback, with_text)
    bar = Progress(f"ingest {coll.name}/{snap.label}", enabled=progress, unit="docs",
                   transient=False)
    repeats = Repeats(on_duplicate, source.description)
    tokens = TokenTotals()
    guess = Guess(enabled=is_postgres(conn))
    with closing(batches), bar, collector_off_the_old_heap():
        if progress:  # counting reads the files once more: only for a bar someone watches
            bar.set_total(source.documents_count_hint())
        for batch in batches:
            if batch.members:
                report.n_documents += _write_batch(conn, coll, snap, batch,
                                                   source.description, report, repeats,
                                                   tokens, guess)
            report.n_documents_edited += batch.notes.n_edited
            report.n_characters_removed += batch.notes.n_removed
            report.rejected += batch.notes.rejected
            bar.advance(len(batch.members) + len(batch.notes.rejected))
    repeats.check()
    if report.n_documents_edited:
        report.warnings.append(
            f"{report.n_documents_edited:,} document text(s) changed by the reader: "
            f"{report.n_characters_removed:,} control character(s) (NUL and the like, which "
            "neither database stores in text) removed, or in TREC SGML made U+FFFD as "
            "ir_datasets' TrecDocs does")
    report.n_repeated = repeats.n_identical
    report.n_conflicting = repeats.n_conflicting
    check_twins(conn, snap, source.description)
    return tokens.totals()


def _write_batch(conn: Connection, coll: Collection, snap: Snapshot, batch: Batch,
                 where: str, report: IngestReport, repeats: Repeats,
                 tokens: TokenTotals | None = None, guess: Guess | None = None) -> int:
    """One batch's documents, versions and memberships; returns the memberships written.

    Repeats within the batch are settled first. Repeats of ids written by earlier batches are
    found by the database's unique constraint, so the common case costs no lookup: PostgreSQL
    tries the batch in a savepoint and settles the repeats only when it fails; SQLite, where
    the lookup costs microseconds and a failed statement may leave rows behind, looks first.
    A key two different ids share (two documents, one URL) stays an error naming both.
    """
    tokens = TokenTotals() if tokens is None else tokens
    guess = Guess(enabled=False) if guess is None else guess
    members = _settle_within(batch.members, repeats)
    postgres = is_postgres(conn)
    if not postgres:
        members = _settle_earlier(conn, snap, members, repeats, tokens)
    savepoint = conn.begin_nested() if postgres else None
    counted = (report.n_new_documents, report.n_new_contents)
    summed = tokens.state()
    try:
        _insert_members(conn, coll, snap, members, batch.contents, report, tokens, guess)
    except Exception as exc:
        if not is_integrity_error(exc) or savepoint is None:
            if is_integrity_error(exc):
                raise _shared_key_error(conn, coll, snap, members, where) or exc from None
            raise
        savepoint.rollback()
        report.n_new_documents, report.n_new_contents = counted  # the rollback undid them
        tokens.restore(summed)
        guess.off()  # a repeat, or a guess that was wrong: look everything up from now on
        members = _settle_earlier(conn, snap, members, repeats, tokens)
        savepoint = conn.begin_nested()
        try:
            _insert_members(conn, coll, snap, members, batch.contents, report, tokens, guess)
        except Exception as again:
            if not is_integrity_error(again):
                raise
            savepoint.rollback()
            raise _shared_key_error(conn, coll, snap, members, where) or again from None
    if savepoint is not None:
        savepoint.commit()
    return len(members)


def _settle_within(members: list[Member], repeats: Repeats) -> list[Member]:
    """The batch's members with each external id once: identical repeats dropped, differing
    ones kept as the policy says (the first; the last; the first while collecting errors)."""
    kept: dict[str, Member] = {}
    for member in members:
        external = member[0]
        first = kept.get(external)
        if first is None:
            kept[external] = member
        elif first[2:] == member[2:]:
            repeats.n_identical += 1
        else:
            repeats.conflict(external)
            if repeats.policy is OnDuplicate.last:
                kept[external] = member
    return list(kept.values())


def _settle_earlier(conn: Connection, snap: Snapshot, members: list[Member],
                    repeats: Repeats, tokens: TokenTotals) -> list[Member]:
    """Members whose external id an earlier batch wrote: identical ones dropped; differing
    ones dropped (first, error) or replacing the earlier membership (last)."""
    earlier = {external: (bytes(digest), label, twin) for external, digest, label, twin in rows_in(
        conn, select(col(SnapshotDocument.external_id), col(Content.hash),
                     col(SnapshotDocument.source_label), col(SnapshotDocument.twin_of))
        .join(Content, col(Content.id) == col(SnapshotDocument.content_id))
        .where(col(SnapshotDocument.snapshot_id) == snap.pk),
        col(SnapshotDocument.external_id), [m[0] for m in members])}
    if not earlier:
        return members
    kept, replaced = [], []
    for member in members:
        external = member[0]
        if external not in earlier:
            kept.append(member)
        elif earlier[external] == member[2:]:
            repeats.n_identical += 1
        else:
            repeats.conflict(external)
            if repeats.policy is OnDuplicate.last:
                replaced.append(external)
                kept.append(member)
    if replaced:
        tokens.exact = False  # the replaced memberships' counts are in the sums
        conn.execute(delete(SnapshotDocument).where(
            col(SnapshotDocument.snapshot_id) == snap.pk,
            col(SnapshotDocument.external_id).in_(replaced)))
    return kept


def _insert_members(conn: Connection, coll: Collection, snap: Snapshot, members: list[Member],
                    contents: dict[bytes, Version], report: IngestReport,
                    tokens: TokenTotals, guess: Guess) -> None:
    document_of = _resolve_documents(conn, coll.pk, [m[1] for m in members], report, guess)
    content_of, stored_tokens = _resolve_contents(
        conn, {m[2]: contents[m[2]] for m in members}, report, guess)
    tokens.add([stored_tokens.get(digest, contents[digest][1]) for _, _, digest, _, _ in members])
    snapshot_id = snap.pk  # an ORM attribute: read once, not once per row
    bulk_insert(conn, "snapshot_document",
                ["snapshot_id", "document_id", "external_id", "content_id", "source_label",
                 "twin_of"],
                [(snapshot_id, document_of[key], external, content_of[digest], label, twin)
                 for external, key, digest, label, twin in members])


def _shared_key_error(conn: Connection, coll: Collection, snap: Snapshot,
                      members: list[Member], where: str) -> InputError | None:
    """Which two documents share a key (an id or a URL): within the batch, or with one
    written before it."""
    def shared(first: str, second: str, key: str) -> InputError:
        return InputError(where, None, f"documents {first!r} and {second!r} share the key "
                          f"{key!r} ({coll.doc_identity.value})")

    by_key: dict[str, str] = {}
    for external, key, *_ in members:
        if key in by_key:
            return shared(by_key[key], external, key)
        by_key[key] = external
    earlier = rows_in(conn, select(col(Document.key), col(SnapshotDocument.external_id))
                      .join(SnapshotDocument, col(SnapshotDocument.document_id) == col(Document.id))
                      .where(col(SnapshotDocument.snapshot_id) == snap.pk,
                             col(Document.collection_id) == coll.pk),
                      col(Document.key), list(by_key))
    if earlier:
        key, first = earlier[0]
        return shared(first, by_key[key], key)
    return None


def _resolve_documents(conn: Connection, collection_id: int, keys: list[str],
                       report: IngestReport, guess: Guess) -> dict[str, int]:
    """key → document.id, creating the documents this collection has not seen before (all of
    them, unlooked-up, when `guess` says so)."""
    if guess.documents:
        found: dict[str, int] = {}
        missing = list(dict.fromkeys(keys))
    else:
        found = pairs_in(conn, select(col(Document.key), col(Document.id)).where(
            col(Document.collection_id) == collection_id), col(Document.key), keys)
        guess.documents = guess.enabled and not found
        missing = list(dict.fromkeys(k for k in keys if k not in found))
    if missing:
        ids = _new_ids(conn, "document", len(missing))
        bulk_insert(conn, "document", ["id", "collection_id", "key"],
                    zip(ids, repeat(collection_id), missing, strict=False))
        found.update(zip(missing, ids, strict=True))
        report.n_new_documents += len(missing)
    return found


def _resolve_contents(conn: Connection, contents: dict[bytes, Version], report: IngestReport,
                      guess: Guess) -> tuple[dict[bytes, int], dict[bytes, int]]:
    """hash → content.id, storing each text once however many snapshots share it (all of them
    as new, unlooked-up, when `guess` says so); and the token counts stored before that differ
    from this batch's (hash → the stored count)."""
    hashes = list(contents)
    found: dict[bytes, int] = {}
    stored_tokens: dict[bytes, int] = {}
    fill: list[dict[str, Any]] = []
    if guess.contents:
        known = []
    else:
        known = rows_in(conn, select(col(Content.hash), col(Content.id),
                                     col(Content.text).is_(None), col(Content.n_tokens)),
                        col(Content.hash), hashes)
        guess.contents = guess.enabled and not known
    for digest, content_id, text_missing, stored in known:
        digest = bytes(digest)
        found[digest] = content_id
        _, n_tokens, body = contents[digest]
        if (text_missing and body is not None) or stored is None:
            fill.append({"cid": content_id, "t": body, "n": n_tokens})
        elif stored != n_tokens:
            stored_tokens[digest] = stored
    if fill:  # an earlier --no-text ingest left these without text, or one before migration
        # 0011 without a token count: the text is kept if there was one
        conn.execute(update(Content).where(col(Content.id) == bindparam("cid"))
                     .values(text=func.coalesce(col(Content.text), bindparam("t")),
                             n_tokens=bindparam("n")), fill)
    missing = [h for h in hashes if h not in found]
    if missing:
        ids = _new_ids(conn, "content", len(missing))
        bulk_insert(conn, "content", ["id", "hash", "length", "n_tokens", "text"],
                    ((i, h, *contents[h]) for i, h in zip(ids, missing, strict=True)))
        found.update(zip(missing, ids, strict=True))
        report.n_new_contents += len(missing)
    return found, stored_tokens


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
