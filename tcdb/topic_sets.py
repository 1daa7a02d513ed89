"""Topic sets: named topic subsets of a collection (core topics, contamination-free topics, …).

A set holds stable topic identities (`topic.id`), not the ids one snapshot gives them, so the
same set restricts a report on any snapshot of the collection — a topic the snapshot lacks is
simply not there. Every report takes `--topics NAME` and calls `topic_set_topic_ids`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select
from sqlmodel import Session

from tcdb.catalog import get_collection, get_snapshot
from tcdb.db import bulk_insert, session_scope
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.schema import Collection, SnapshotTopic, TopicSet, TopicSetMember


def topic_set_topic_ids(session: Session, collection: str, name: str) -> set[int]:
    """The `topic.id`s of a named topic set; NotFoundError names the sets that exist."""
    topic_set = get_topic_set(session, collection, name)
    rows = session.execute(select(TopicSetMember.topic_id).where(
        TopicSetMember.topic_set_id == topic_set.id)).scalars()
    return set(rows)


def get_topic_set(session: Session, collection: str, name: str) -> TopicSet:
    coll = get_collection(session, collection)
    found = session.execute(select(TopicSet).where(
        TopicSet.collection_id == coll.id, TopicSet.name == name)).scalar_one_or_none()
    if found is None:
        names = session.execute(select(TopicSet.name).where(
            TopicSet.collection_id == coll.id).order_by(TopicSet.name)).scalars().all()
        known = ", ".join(names) or "none yet"
        raise NotFoundError(f"no topic set {name!r} in {collection!r} (known: {known}); create "
                            "it with `tcdb topics set create`")
    return found


def core_topic_ids(session: Session, collection: str, snapshot_labels: Sequence[str]) -> set[int]:
    """Topics present in every listed snapshot, matched by the collection's topic identity.

    Why: longitudinal comparisons are fair only on topics every snapshot shares; `topic.id` is
    already the identity (query id or normalised text), so this is a set intersection.
    """
    labels = list(dict.fromkeys(snapshot_labels))
    if not labels:
        raise InputError("--core", None, "name at least one snapshot")
    result: set[int] | None = None
    for label in labels:
        snap = get_snapshot(session, collection, label)
        ids = set(session.execute(select(SnapshotTopic.topic_id).where(
            SnapshotTopic.snapshot_id == snap.id)).scalars())
        result = ids if result is None else result & ids
    return result or set()


def read_topic_list(path: Path) -> list[tuple[int, str]]:
    """(line, topic id) per non-blank line of a topic list: the first field; `#` starts a comment.

    A topic listed twice is an error (it would say the file is not what its author meant).
    """
    if not path.is_file():
        raise NotFoundError(f"topic list not found: {path}")
    seen: dict[str, int] = {}
    out: list[tuple[int, str]] = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        topic = content.split()[0]
        if topic in seen:
            raise InputError(path, number, f"topic {topic!r} listed twice "
                             f"(first at line {seen[topic]})")
        seen[topic] = number
        out.append((number, topic))
    if not out:
        raise InputError(path, None, "no topic ids in the file")
    return out


def create_topic_set(
    collection: str,
    name: str,
    snapshot: str,
    *,
    from_file: Path | str | None = None,
    topics: Sequence[str] | None = None,
    core: Sequence[str] | None = None,
    description: str | None = None,
    replace: bool = False,
) -> dict[str, Any]:
    """Create a topic set from topic ids of `snapshot` (a file or a list) or as its core topics.

    `core`: the topics `snapshot` shares with every snapshot listed. The same members again is a
    no-op ("unchanged"); different members under an existing name are refused unless `replace`.
    """
    sources = sum(x is not None for x in (from_file, topics, core))
    if sources != 1:
        raise InputError(None, None, "give exactly one of a topic file (--from-file), topic ids "
                         "or core snapshots (--core)")
    with session_scope() as session:
        coll = get_collection(session, collection)
        snap = get_snapshot(session, collection, snapshot)
        if core is not None:
            members = core_topic_ids(session, collection, [snapshot, *core])
            if not members:
                raise InputError("--core", None, f"snapshots {', '.join([snapshot, *core])} "
                                 "share no topic")
            method = "core of " + ", ".join(dict.fromkeys([snapshot, *core]))
        else:
            ids = dict(session.execute(select(SnapshotTopic.external_id, SnapshotTopic.topic_id)
                                       .where(SnapshotTopic.snapshot_id == snap.id)).tuples()
                       .all())
            if from_file is not None:
                path = Path(from_file)
                listed = read_topic_list(path)
                where: str | None = str(path)
            else:
                listed = [(i, str(t)) for i, t in enumerate(topics or [], start=1)]
                where = "--topic"
                if not listed:
                    raise InputError(where, None, "no topic ids given")
            members = set()
            for line, topic in listed:
                if topic not in ids:
                    raise InputError(where, line if from_file is not None else None,
                                     f"topic {topic!r} is not in snapshot {snapshot!r}")
                if ids[topic] in members:
                    raise InputError(where, None, f"topic {topic!r} listed twice")
                members.add(ids[topic])
            method = f"file {path}" if from_file is not None else "list"
        existing = session.execute(select(TopicSet).where(
            TopicSet.collection_id == coll.id, TopicSet.name == name)).scalar_one_or_none()
        status = "created"
        if existing is not None:
            stored = set(session.execute(select(TopicSetMember.topic_id).where(
                TopicSetMember.topic_set_id == existing.id)).scalars())
            if stored == members:
                return _summary(collection, name, "unchanged", len(members), existing)
            if not replace:
                raise ConflictError(f"topic set {name!r} of {collection!r} already exists with "
                                    f"{len(stored)} different topic(s): pass --replace")
            session.execute(delete(TopicSetMember).where(
                TopicSetMember.topic_set_id == existing.id))
            if description is not None:
                existing.description = description
            topic_set = existing
            status = "replaced"
        else:
            topic_set = TopicSet(collection_id=coll.id, name=name,
                                 description=description or f"{method} ({snapshot})")
            session.add(topic_set)
            session.flush()
        bulk_insert(session, "topic_set_member", ["topic_set_id", "topic_id"],
                    ((topic_set.id, t) for t in sorted(members)))
        return _summary(collection, name, status, len(members), topic_set)


def _summary(collection: str, name: str, status: str, n: int, topic_set: TopicSet
             ) -> dict[str, Any]:
    return {"collection": collection, "name": name, "status": status, "n_topics": n,
            "description": topic_set.description}


def list_topic_sets(collection: str | None = None) -> list[dict[str, Any]]:
    """Every topic set (optionally of one collection) with its size."""
    with session_scope() as session:
        query = (select(Collection.name, TopicSet.name, func.count(TopicSetMember.topic_id),
                        TopicSet.description, TopicSet.created_at)
                 .join(Collection, Collection.id == TopicSet.collection_id)
                 .outerjoin(TopicSetMember, TopicSetMember.topic_set_id == TopicSet.id)
                 .group_by(Collection.name, TopicSet.id, TopicSet.name, TopicSet.description,
                           TopicSet.created_at)
                 .order_by(Collection.name, TopicSet.name))
        if collection is not None:
            query = query.where(TopicSet.collection_id == get_collection(session, collection).id)
        return [{"collection": c, "name": n, "n_topics": k, "description": d, "created_at": t}
                for c, n, k, d, t in session.execute(query)]


def topic_set_external_ids(session: Session, collection: str, name: str, snapshot_id: int
                           ) -> list[str]:
    """The set's topics as the given snapshot names them (topics it lacks are left out)."""
    ids = topic_set_topic_ids(session, collection, name)
    rows = session.execute(select(SnapshotTopic.topic_id, SnapshotTopic.external_id).where(
        SnapshotTopic.snapshot_id == snapshot_id)).tuples()
    return sorted(ext for tid, ext in rows if tid in ids)
