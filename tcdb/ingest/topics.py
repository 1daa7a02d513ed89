"""Writing a snapshot's topics: stable identities (by id or normalised query text) and the
query each snapshot gives them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import insert, select
from sqlmodel import Session, col

from tcdb.collections.records import TopicRecord
from tcdb.collections.topics import normalise_query
from tcdb.errors import InputError
from tcdb.ingest.report import IngestReport
from tcdb.queries import pairs_in
from tcdb.schema import Collection, Snapshot, Topic, TopicIdentity
from tcdb.storage.db import bulk_insert


def write_topics(session: Session, coll: Collection, snap: Snapshot,
                 topics: Iterable[TopicRecord], report: IngestReport) -> dict[str, int]:
    """Write the snapshot's topics; returns external topic id → topic.id.

    Under topic identity by text, a query text several topics of the snapshot share
    (LongEval: machine translation gave several query ids one text) identifies none of them:
    each keeps an identity of its own, `ambiguous`, that no topic of another snapshot matches,
    so every external id stays usable for its own qrels and runs and none enters the core.
    """
    conn = session.connection()
    by_text = coll.topic_identity == TopicIdentity.text
    records = list(topics)
    seen: set[str] = set()
    texts: dict[str, int] = {}
    for record in records:
        if record.topic_id in seen:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} occurs twice")
        seen.add(record.topic_id)
        text = normalise_query(record.query)
        if by_text and not text:
            raise InputError(snap.source, None, f"topic {record.topic_id!r} has an empty query")
        texts[text] = texts.get(text, 0) + 1

    def key_of(record: TopicRecord) -> tuple[str, bool]:
        if not by_text:
            return record.topic_id, False
        text = normalise_query(record.query)
        if texts[text] == 1:
            return text, False
        return f"{text} [ambiguous: {snap.label} {record.topic_id}]", True

    keys = {key_of(record)[0]: record.topic_id for record in records}
    found = pairs_in(conn, select(col(Topic.key), col(Topic.id)).where(
        col(Topic.collection_id) == coll.id), col(Topic.key), list(keys))
    missing = [k for k in keys if k not in found]
    if missing:
        bulk_insert(conn, "topic", ["collection_id", "key"], ((coll.id, k) for k in missing))
        found.update(pairs_in(conn, select(col(Topic.key), col(Topic.id)).where(
            col(Topic.collection_id) == coll.id), col(Topic.key), missing))
    id_of_external: dict[str, int] = {}
    rows = []
    for record in records:
        key, ambiguous = key_of(record)
        topic_id = found[key]
        id_of_external[record.topic_id] = topic_id
        rows.append({"snapshot_id": snap.id, "topic_id": topic_id,
                     "external_id": record.topic_id, "query": record.query,
                     "description": record.description, "narrative": record.narrative,
                     "fields": dict(record.fields) or None, "ambiguous": ambiguous})
        report.n_ambiguous_topics += ambiguous
    if rows:
        from tcdb.schema import SnapshotTopic

        conn.execute(insert(SnapshotTopic), rows)
    report.n_topics = len(rows)
    return id_of_external
