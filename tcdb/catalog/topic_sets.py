"""Topic sets: named topic subsets of a collection (core topics, contamination-free topics, …).

A set holds stable topic identities (`topic.id`), not the ids one snapshot gives them, so the
same set restricts a report on any snapshot of the collection — a topic the snapshot lacks is
simply not there. Every report takes `--topics NAME` and calls `topic_set_topic_ids`
(`tcdb.queries`). A set may name the model it was derived for (`for_model`, e.g. the LLM whose
unseen topics it holds, imported by `tcdb.catalog.contamination`) and how (`method`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import ConflictError, InputError, NotFoundError, OptionError
from tcdb.queries import core_topic_ids
from tcdb.schema import Collection, SnapshotTopic, TopicSet, TopicSetMember
from tcdb.storage.db import bulk_insert, session_scope


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
    for_model: str | None = None,
    method: str | None = None,
) -> dict[str, Any]:
    """Create a topic set from topic ids of `snapshot` (a file or a list) or as its core topics.

    `core`: the topics `snapshot` shares with every snapshot listed. The same members again is a
    no-op ("unchanged"); different members under an existing name are refused unless `replace`.
    `for_model`: the model the set was derived for; `method`: how (default: `core of A, B`,
    `file` or `list`, from the source of the members).
    """
    sources = sum(x is not None for x in (from_file, topics, core))
    if sources != 1:
        raise OptionError("--from-file/--topic/--core", "give exactly one of a topic file, topic "
                          "ids or core snapshots")
    with session_scope() as session:
        coll = get_collection(session, collection)
        snap = get_snapshot(session, collection, snapshot)
        if core is not None:
            members = core_topic_ids(session, collection, [snapshot, *core])
            if not members:
                raise OptionError("--core", f"snapshots {', '.join([snapshot, *core])} "
                                  "share no topic")
            made = "core of " + ", ".join(dict.fromkeys([snapshot, *core]))
        else:
            ids = dict(session.execute(select(col(SnapshotTopic.external_id),
                                              col(SnapshotTopic.topic_id))
                                       .where(col(SnapshotTopic.snapshot_id) == snap.id)).tuples()
                       .all())
            if from_file is not None:
                path = Path(from_file)
                listed = read_topic_list(path)
                where = str(path)
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
            made = "file" if from_file is not None else "list"
        where = f"file {path}" if from_file is not None else made
        return store_topic_set(session, coll.pk, collection, name, members,
                               description=description or f"{where} ({snapshot})",
                               for_model=for_model, method=method or made, replace=replace,
                               keep_description=description is None)


def store_topic_set(
    session: Session,
    collection_id: int,
    collection: str,
    name: str,
    members: set[int],
    *,
    description: str,
    for_model: str | None,
    method: str | None,
    replace: bool,
    keep_description: bool = False,
) -> dict[str, Any]:
    """Write one topic set in the caller's transaction: created, unchanged, updated, replaced.

    The same members again leave the set as it is ("unchanged"), or only take the new
    `for_model`/`method` ("updated"); different members are refused unless `replace`.
    `keep_description`: the description was not given, so a stored one stays.
    """
    existing = session.exec(select(TopicSet).where(
        TopicSet.collection_id == collection_id, TopicSet.name == name)).first()
    if existing is None:
        topic_set = TopicSet(collection_id=collection_id, name=name, description=description,
                             for_model=for_model, method=method)
        session.add(topic_set)
        session.flush()
        bulk_insert(session, "topic_set_member", ["topic_set_id", "topic_id"],
                    ((topic_set.id, t) for t in sorted(members)))
        return _summary(collection, name, "created", len(members), topic_set)
    stored = set(session.exec(select(TopicSetMember.topic_id).where(
        TopicSetMember.topic_set_id == existing.pk)))
    wanted = {"for_model": for_model, "method": method}
    if not keep_description:
        wanted["description"] = description
    changed = {k: v for k, v in wanted.items() if v is not None and getattr(existing, k) != v}
    if stored == members:
        for key, value in changed.items():
            setattr(existing, key, value)
        return _summary(collection, name, "updated" if changed else "unchanged", len(members),
                        existing)
    if not replace:
        raise ConflictError(f"topic set {name!r} of {collection!r} already exists with "
                            f"{len(stored)} different topic(s): pass --replace")
    session.execute(delete(TopicSetMember).where(col(TopicSetMember.topic_set_id) == existing.id))
    for key, value in changed.items():
        setattr(existing, key, value)
    bulk_insert(session, "topic_set_member", ["topic_set_id", "topic_id"],
                ((existing.id, t) for t in sorted(members)))
    return _summary(collection, name, "replaced", len(members), existing)


def _summary(collection: str, name: str, status: str, n: int, topic_set: TopicSet
             ) -> dict[str, Any]:
    return {"collection": collection, "name": name, "status": status, "n_topics": n,
            "description": topic_set.description, "for_model": topic_set.for_model,
            "method": topic_set.method}


def topic_set_members(collection: str, name: str) -> set[int]:
    """The `topic.id`s of a topic set in a transaction of their own (for reports that open
    several); an unknown name is a NotFoundError listing the known sets
    (`tcdb.queries.topic_set_topic_ids`, the one resolution every `--topics` goes through)."""
    from tcdb.queries import topic_set_topic_ids

    with session_scope() as session:
        return topic_set_topic_ids(session, collection, name)


def list_topic_sets(collection: str | None = None) -> list[dict[str, Any]]:
    """Every topic set (optionally of one collection) with its size."""
    with session_scope() as session:
        query = (select(TopicSet, Collection.name, func.count(col(TopicSetMember.topic_id)))
                 .join(Collection, col(Collection.id) == TopicSet.collection_id)
                 .outerjoin(TopicSetMember, col(TopicSetMember.topic_set_id) == TopicSet.id)
                 .group_by(col(TopicSet.id), col(Collection.name))
                 .order_by(col(Collection.name), col(TopicSet.name)))
        if collection is not None:
            query = query.where(TopicSet.collection_id == get_collection(session, collection).pk)
        return [{"collection": name, "name": topic_set.name, "n_topics": n,
                 "for_model": topic_set.for_model, "method": topic_set.method,
                 "description": topic_set.description, "created_at": topic_set.created_at}
                for topic_set, name, n in session.exec(query)]


