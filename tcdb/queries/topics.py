"""Topics across snapshots: each snapshot's names for them, core topics, topic sets.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, select
from sqlmodel import Session, col

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import FieldError, NotFoundError, some
from tcdb.schema import SnapshotTopic, Topic, TopicSet, TopicSetMember
from tcdb.storage.db import connection_of


def snapshot_topics(bind: Connection | Session, snapshot_id: int) -> dict[int, tuple[str, str]]:
    """topic.id → (external id in this snapshot, stable key) for every topic of a snapshot."""
    query = (
        select(col(SnapshotTopic.topic_id), col(SnapshotTopic.external_id), col(Topic.key))
        .join(Topic, col(Topic.id) == col(SnapshotTopic.topic_id))
        .where(col(SnapshotTopic.snapshot_id) == snapshot_id)
    )
    return {t: (ext, key) for t, ext, key in connection_of(bind).execute(query)}


def topic_set_topic_ids(session: Session, collection: str, name: str) -> set[int]:
    """The `topic.id`s of a named topic set; NotFoundError names the sets that exist."""
    topic_set = get_topic_set(session, collection, name)
    rows = session.execute(select(col(TopicSetMember.topic_id)).where(
        col(TopicSetMember.topic_set_id) == topic_set.id)).scalars()
    return set(rows)


def get_topic_set(session: Session, collection: str, name: str) -> TopicSet:
    """A collection's topic set by name (`set:NAME` names it too: the way to a set called
    `all` or `core`); NotFoundError names the sets that exist."""
    from tcdb.reports.fields import SET_PREFIX

    name = name.removeprefix(SET_PREFIX)
    coll = get_collection(session, collection)
    found = session.execute(select(TopicSet).where(
        col(TopicSet.collection_id) == coll.id, col(TopicSet.name) == name)).scalar_one_or_none()
    if found is None:
        names = session.execute(select(col(TopicSet.name)).where(
            col(TopicSet.collection_id) == coll.id).order_by(col(TopicSet.name))).scalars().all()
        known = some(names) or "none yet"
        raise NotFoundError(f"no topic set {name!r} in {collection!r} (known: {known}); create "
                            "it with `tcdb topics set create` or `tcdb topics set import`")
    return found


def core_topic_ids(session: Session, collection: str, snapshot_labels: Sequence[str]) -> set[int]:
    """Topics present in every listed snapshot, matched by the collection's topic identity.

    Why: longitudinal comparisons are fair only on topics every snapshot shares; `topic.id` is
    already the identity (query id or normalised text), so this is a set intersection.
    """
    labels = list(dict.fromkeys(snapshot_labels))
    if not labels:
        raise FieldError("snapshots", "name at least one snapshot for the core topics")
    result: set[int] | None = None
    for label in labels:
        snap = get_snapshot(session, collection, label)
        ids = set(session.execute(select(col(SnapshotTopic.topic_id)).where(
            col(SnapshotTopic.snapshot_id) == snap.id)).scalars())
        result = ids if result is None else result & ids
    return result or set()
