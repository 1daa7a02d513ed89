"""Writing a snapshot's topics: stable identities (by id, or by query text under the collection's
match rule) and the query each snapshot gives them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import insert, select, update
from sqlmodel import Session, col

from tcdb.collections.sources.records import TopicRecord
from tcdb.collections.topics.formats import match_key
from tcdb.errors import InputError, some
from tcdb.ingest.report import IngestReport
from tcdb.queries import pairs_in
from tcdb.schema import Collection, Snapshot, SnapshotTopic, Topic, TopicIdentity
from tcdb.storage.bulk import bulk_insert


def write_topics(session: Session, coll: Collection, snap: Snapshot,
                 topics: Iterable[TopicRecord], report: IngestReport) -> dict[str, int]:
    """Write the snapshot's topics; returns external topic id → topic.id.

    A topic known by its id alone (an empty query: a list of ids, or the ids published scores
    name) is stored without text (NULL), which topic identity by text cannot key: refused there.

    Topics the snapshot already has (a snapshot registered without documents, now ingested)
    keep their identity; one stored without text gets the record's text.

    Under topic identity by text, a query text several topics of the snapshot share under the
    collection's match rule (LongEval: machine translation gave several query ids one text;
    "Energy" and "energy" when normalised) identifies none of them: each keeps an identity of
    its own, `ambiguous`, that no topic of another snapshot matches, so every external id stays
    usable for its own qrels and runs and none enters the core. The ingest says so in a warning
    naming the ids, not only `snapshot diff` later.
    """
    conn = session.connection()
    by_text = coll.topic_identity == TopicIdentity.text
    rule = coll.topic_match.value
    stored = _stored_topics(session, snap)
    records = list(topics)
    seen: set[str] = set()
    sharing: dict[str, list[str]] = {}
    for external, (_, query) in stored.items():
        if query:
            sharing.setdefault(match_key(query, rule), []).append(external)
    for record in records:
        if record.topic_id in seen:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} occurs twice")
        seen.add(record.topic_id)
        if by_text and not record.query:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} has no query text: "
                             "topic identity by text keys topics by their text")
        if record.topic_id not in stored and record.query:
            key = match_key(record.query, rule)
            if by_text and not key:
                raise InputError(snap.source, None,
                                 f"topic {record.topic_id!r} has an empty query")
            sharing.setdefault(key, []).append(record.topic_id)
    edited = [r for r in records if r.removed]
    if edited:
        report.n_topics_edited = len(edited)
        removed = sum(r.removed for r in edited)
        report.n_characters_removed += removed
        report.warnings.append(
            f"{len(edited):,} topic(s) stored without {removed:,} character(s) of their texts "
            f"(control characters such as NUL, and the spaces around a query), e.g. topic "
            f"{edited[0].topic_id!r}")
    if by_text:
        report.warnings.extend(
            f"ambiguous query text {text!r} under {rule} matching: topics "
            f"{some(ids)} of {snap.label} keep identities of their own (left out of the "
            "core)" for text, ids in sharing.items() if len(ids) > 1)

    def key_of(record: TopicRecord) -> tuple[str, bool]:
        if not by_text:
            return record.topic_id, False
        text = match_key(record.query, rule)
        if len(sharing[text]) == 1:
            return text, False
        return f"{text} [ambiguous: {snap.label} {record.topic_id}]", True

    _fill_texts(session, snap, stored, [r for r in records if r.topic_id in stored])
    fresh = [r for r in records if r.topic_id not in stored]
    keys = {key_of(record)[0]: record.topic_id for record in fresh}
    found = pairs_in(conn, select(col(Topic.key), col(Topic.id)).where(
        col(Topic.collection_id) == coll.id), col(Topic.key), list(keys))
    missing = [k for k in keys if k not in found]
    if missing:
        bulk_insert(conn, "topic", ["collection_id", "key"], ((coll.id, k) for k in missing))
        found.update(pairs_in(conn, select(col(Topic.key), col(Topic.id)).where(
            col(Topic.collection_id) == coll.id), col(Topic.key), missing))
    id_of_external = {external: topic_id for external, (topic_id, _) in stored.items()}
    rows = []
    for record in fresh:
        key, ambiguous = key_of(record)
        topic_id = found[key]
        id_of_external[record.topic_id] = topic_id
        rows.append({"snapshot_id": snap.id, "topic_id": topic_id,
                     "external_id": record.topic_id, "query": record.query or None,
                     "description": record.description, "narrative": record.narrative,
                     "fields": dict(record.fields) or None, "ambiguous": ambiguous})
        report.n_ambiguous_topics += ambiguous
    if rows:
        conn.execute(insert(SnapshotTopic), rows)
    report.n_topics = len(id_of_external)
    return id_of_external


def _stored_topics(session: Session, snap: Snapshot) -> dict[str, tuple[int, str | None]]:
    """external id → (topic.id, query) of the topics the snapshot already has."""
    rows = session.connection().execute(
        select(col(SnapshotTopic.external_id), col(SnapshotTopic.topic_id),
               col(SnapshotTopic.query)).where(col(SnapshotTopic.snapshot_id) == snap.id))
    return {external: (topic_id, query) for external, topic_id, query in rows}


def _fill_texts(session: Session, snap: Snapshot, stored: dict[str, tuple[int, str | None]],
                records: list[TopicRecord]) -> None:
    """Give topics registered by id alone the text a later source states; a topic that has
    a text keeps it (its identity may rest on it)."""
    conn = session.connection()
    for record in records:
        if stored[record.topic_id][1] is None and record.query:
            conn.execute(update(SnapshotTopic).where(
                col(SnapshotTopic.snapshot_id) == snap.id,
                col(SnapshotTopic.external_id) == record.topic_id).values(
                query=record.query, description=record.description,
                narrative=record.narrative, fields=dict(record.fields) or None))
