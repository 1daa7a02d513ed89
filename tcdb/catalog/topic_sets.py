"""Topic sets: named topic subsets of a collection (core topics, contamination-free topics, …).

A set holds stable topic identities (`topic.id`), not the ids one snapshot gives them, so the
same set restricts a report on any snapshot of the collection — a topic the snapshot lacks is
simply not there. Every report takes `--topics NAME` and calls `topic_set_topic_ids`
(`tcdb.queries`). A set may name the model it was derived for (`for_model`, e.g. the LLM whose
unseen topics it holds, imported by `tcdb.catalog.contamination`) and how (`method`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, Self

from pydantic import BaseModel, model_validator
from sqlalchemy import delete, func
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError, some
from tcdb.operations import (
    Database,
    Labels,
    Name,
    Names,
    Request,
    Result,
    argument,
    operation,
    option,
)
from tcdb.queries import core_topic_ids
from tcdb.schema import Collection, SnapshotTopic, TopicSet, TopicSetMember
from tcdb.storage.bulk import bulk_insert

if TYPE_CHECKING:
    import pandas as pd


def read_topic_list(path: Path) -> list[tuple[int, str]]:
    """(line, topic id) per non-blank line of a topic list: one id a line; `#` starts a comment.

    A topic listed twice is an error (it would say the file is not what its author meant).
    """
    if not path.exists():
        raise NotFoundError(f"topic list not found: {path}")
    seen: dict[str, int] = {}
    out: list[tuple[int, str]] = []
    from tcdb.collections.files.lines import text_lines
    from tcdb.collections.files.opening import read_input_text

    text = read_input_text(path)  # a directory, a pipe, gzip/bz2/xz: files.open_input's rule
    for number, line in enumerate(text_lines(text), start=1):
        content = line.split("#", 1)[0].strip()
        if not content:
            continue
        fields = content.split()
        if len(fields) != 1:  # `q1 q2` is two topics or a typo: never q1 with q2 dropped
            raise InputError(path, number, f"expected one topic id a line (a note goes after "
                             f"#), found {len(fields)} fields ({some(fields)})")
        topic = fields[0]
        if topic in seen:
            raise InputError(path, number, f"topic {topic!r} listed twice "
                             f"(first at line {seen[topic]})")
        seen[topic] = number
        out.append((number, topic))
    if not out:
        raise InputError(path, None, "no topic ids in the file")
    return out


class TopicSetCreateRequest(Request):
    """A topic set from topic ids of one snapshot (a file or a list), or as its core topics."""

    name: Name = argument(help="Name of the topic set.")
    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot whose topic ids the set is given in.")
    from_file: Path | None = option(None, help="File with one topic id per line (# starts a "
                                    "comment).")
    topic_ids: Labels | None = option(None, flag="--topic", help="A topic id of SNAPSHOT "
                                      "(repeat).")
    core: Names | None = option(None, help="Topics SNAPSHOT shares with each of these "
                                 "snapshots (repeat, or list them after --core).")
    description: str | None = option(None, help="Free text.")
    replace: bool = option(False, help="Replace a set of that name.")
    for_model: Name | None = option(None, help="The model the set was derived for (e.g. an "
                                   "LLM's name).")
    method: str | None = option(None, help="How the topics were chosen (e.g. "
                                "contamination-quiz; default: file, list or core of …).")

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if sum(x is not None for x in (self.from_file, self.topic_ids, self.core)) != 1:
            raise FieldError("from_file/topic_ids/core", "give exactly one of a topic file, "
                             "topic ids or core snapshots")
        return self


class TopicSetResult(Result):
    """A topic set as stored: `created`, `unchanged`, `updated` or `replaced`."""

    collection: str
    name: str
    status: str
    n_topics: int
    description: str | None
    for_model: str | None
    method: str | None

    def to_frame(self) -> pd.DataFrame:
        """One row: the set, what happened to it, its size."""
        import pandas as pd

        return pd.DataFrame([self.model_dump()])


@operation("topic_set_create", command="topics set create", writes=True)
def topic_set_create(request: TopicSetCreateRequest, db: Database) -> TopicSetResult:
    """Create a topic set from a file of topic ids or as the core topics of snapshots.

    `core`: the topics SNAPSHOT shares with every snapshot listed. The same members again is a
    no-op ("unchanged"); different members under an existing name are refused unless
    `replace`.
    Why sets: every report takes `--topics NAME`, the same subset on any snapshot.
    """
    r = request
    collection, name, snapshot = r.collection, r.name, r.snapshot
    with db.session() as session:
        coll = get_collection(session, collection)
        snap = get_snapshot(session, collection, snapshot)
        if r.core is not None:
            members = core_topic_ids(session, collection, [snapshot, *r.core])
            if not members:
                raise FieldError("core", f"snapshots {', '.join([snapshot, *r.core])} "
                                 "share no topic")
            made = "core of " + ", ".join(dict.fromkeys([snapshot, *r.core]))
        else:
            ids = dict(session.execute(select(col(SnapshotTopic.external_id),
                                              col(SnapshotTopic.topic_id))
                                       .where(col(SnapshotTopic.snapshot_id) == snap.id)).tuples()
                       .all())
            if r.from_file is not None:
                listed = read_topic_list(r.from_file)
                where = str(r.from_file)
            else:
                listed = [(i, str(t)) for i, t in enumerate(r.topic_ids or [], start=1)]
                where = "topic_ids"
                if not listed:
                    raise FieldError(where, "no topic ids given")
            members = set()
            for line, topic in listed:
                if topic not in ids:
                    _bad(where, line if r.from_file is not None else None,
                         f"topic {topic!r} is not in snapshot {snapshot!r}")
                if ids[topic] in members:
                    _bad(where, None, f"topic {topic!r} listed twice")
                members.add(ids[topic])
            made = "file" if r.from_file is not None else "list"
        where = f"file {r.from_file}" if r.from_file is not None else made
        return store_topic_set(session, coll.pk, collection, name, members,
                               description=r.description or f"{where} ({snapshot})",
                               for_model=r.for_model, method=r.method or made,
                               replace=r.replace, keep_description=r.description is None)


def _bad(where: str, line: int | None, reason: str) -> NoReturn:
    """A bad topic id: in a file, the file and line; given as a list, the field."""
    if where == "topic_ids":
        raise FieldError(where, reason)
    raise InputError(where, line, reason)


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
) -> TopicSetResult:
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
             ) -> TopicSetResult:
    return TopicSetResult(collection=collection, name=name, status=status, n_topics=n,
                          description=topic_set.description, for_model=topic_set.for_model,
                          method=topic_set.method)


def topic_set_members(db: Database, collection: str, name: str) -> set[int]:
    """The `topic.id`s of a topic set in a transaction of their own (for reports that open
    several); an unknown name is a NotFoundError listing the known sets
    (`tcdb.queries.topic_set_topic_ids`, the one resolution every `--topics` goes through)."""
    from tcdb.queries import topic_set_topic_ids

    with db.session() as session:
        return topic_set_topic_ids(session, collection, name)


class TopicSetsRequest(Request):
    """Whose topic sets to list."""

    collection: Name | None = argument(None, help="Only this collection.")


class TopicSetRow(BaseModel):
    collection: str
    name: str
    n_topics: int
    for_model: str | None
    method: str | None
    description: str | None
    created_at: dt.datetime | None


class TopicSetsResult(Result):
    """Every topic set (of one collection, or all) with its size."""

    topic_sets: list[TopicSetRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per set: collection, name, n_topics, for_model, method, description,
        created_at."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.topic_sets],
                            columns=list(TopicSetRow.model_fields))


@operation("topic_sets", command="topics set list")
def topic_sets(request: TopicSetsRequest, db: Database) -> TopicSetsResult:
    """List topic sets with their sizes, the model each was derived for, and how."""
    with db.session() as session:
        query = (select(TopicSet, Collection.name, func.count(col(TopicSetMember.topic_id)))
                 .join(Collection, col(Collection.id) == TopicSet.collection_id)
                 .outerjoin(TopicSetMember, col(TopicSetMember.topic_set_id) == TopicSet.id)
                 .group_by(col(TopicSet.id), col(Collection.name))
                 .order_by(col(Collection.name), col(TopicSet.name)))
        if request.collection is not None:
            query = query.where(
                TopicSet.collection_id == get_collection(session, request.collection).pk)
        return TopicSetsResult(topic_sets=[
            TopicSetRow(collection=name, name=topic_set.name, n_topics=n,
                        for_model=topic_set.for_model, method=topic_set.method,
                        description=topic_set.description, created_at=topic_set.created_at)
            for topic_set, name, n in session.exec(query)])
