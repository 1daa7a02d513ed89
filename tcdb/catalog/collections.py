"""Collections and their snapshots: create, find, and sync them from collection specs; the
`collection_add`, `collections` and `snapshots` operations (`tcdb collection add|list`,
`tcdb snapshot list`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, field_validator
from sqlalchemy import func, text
from sqlmodel import Session, col, select

from tcdb.errors import ConflictError, NotFoundError, some
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.schema import (
    Collection,
    DocIdentity,
    Snapshot,
    SnapshotStatus,
    TopicIdentity,
    TopicMatch,
)

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.collections.specs.spec import CollectionSpec


def add_collection(
    db: Database,
    name: str,
    doc_identity: str = "doc_id",
    topic_identity: str = "query_id",
    *,
    topic_match: str = "normalised",
    id_fallback: bool = False,
    grade_min: int | None = None,
    grade_max: int | None = None,
    description: str | None = None,
    session: Session | None = None,
) -> Collection:
    """Create a collection; the same call again is a no-op, different identity rules a conflict.

    Identity rules cannot change once snapshots exist: every stored key was derived from them.
    The grade scale may change only to one that accepts every grade already stored.
    """
    if session is None:
        with db.session() as own:
            return add_collection(db, name, doc_identity, topic_identity, topic_match=topic_match,
                                  id_fallback=id_fallback,
                                  grade_min=grade_min, grade_max=grade_max,
                                  description=description, session=own)
    wanted: dict[str, Any] = {
        "doc_identity": DocIdentity(doc_identity),
        "topic_identity": TopicIdentity(topic_identity),
        "topic_match": TopicMatch(topic_match),
        "id_fallback": id_fallback,
    }
    collection = session.exec(select(Collection).where(Collection.name == name)).first()
    if collection is None:
        collection = Collection(name=name, grade_min=grade_min, grade_max=grade_max,
                                description=description, **wanted)
        session.add(collection)
        session.flush()
        return collection
    differs = {k: (getattr(collection, k), v) for k, v in wanted.items()
               if getattr(collection, k) != v}
    if differs:
        n = session.exec(select(func.count()).select_from(Snapshot).where(
            Snapshot.collection_id == collection.id)).one()
        if n:
            changes = ", ".join(f"{k}: {_v(a)} → {_v(b)}" for k, (a, b) in differs.items())
            raise ConflictError(f"collection {name!r} already has {n} snapshot(s) keyed by its "
                                f"identity rules; cannot change {changes}")
        for key, (_, value) in differs.items():
            setattr(collection, key, value)
    if grade_min is not None or grade_max is not None:
        _check_scale(session, collection, grade_min, grade_max)
    if grade_min is not None:
        collection.grade_min = grade_min
    if grade_max is not None:
        collection.grade_max = grade_max
    if description is not None:
        collection.description = description
    session.add(collection)
    session.flush()
    return collection


def _check_scale(session: Session, collection: Collection, low: int | None,
                 high: int | None) -> None:
    """Refuse a grade scale that leaves out grades the collection's judgments already have."""
    stored = session.connection().execute(text(
        "SELECT MIN(grade), MAX(grade) FROM (SELECT j.grade FROM judgment j JOIN qrels_set q "
        "ON q.id = j.qrels_set_id JOIN snapshot s ON s.id = q.snapshot_id "
        "WHERE s.collection_id = :c UNION ALL SELECT u.grade FROM judgment_unresolved u "
        "JOIN qrels_set q ON q.id = u.qrels_set_id JOIN snapshot s ON s.id = q.snapshot_id "
        "WHERE s.collection_id = :c) g"), {"c": collection.pk}).one()
    least, most = stored
    if least is None:
        return
    low = collection.grade_min if low is None else low
    high = collection.grade_max if high is None else high
    if (low is not None and least < low) or (high is not None and most > high):
        scale = f"{'' if low is None else low}:{'' if high is None else high}"
        raise ConflictError(f"collection {collection.name!r} holds judgments graded {least} to "
                            f"{most}; the scale {scale} would leave some of them out")


def _v(value: Any) -> str:
    return str(getattr(value, "value", value))


def get_collection(session: Session, name: str) -> Collection:
    """A collection by name; NotFoundError names the collections that exist."""
    found = session.exec(select(Collection).where(Collection.name == name)).first()
    if found is None:
        names = session.exec(select(Collection.name).order_by(col(Collection.name))).all()
        known = some(names) or "none yet"
        raise NotFoundError(f"no collection {name!r} (known: {known}); create it with "
                            "`tcdb collection add` or `tcdb collection sync`")
    return found


def get_snapshot(
    session: Session, collection: str, label: str, *, complete_only: bool = True
) -> Snapshot:
    """A snapshot by collection name and label; only `complete` ones unless asked otherwise."""
    coll = get_collection(session, collection)
    query = select(Snapshot).where(Snapshot.collection_id == coll.id, Snapshot.label == label)
    found = session.exec(query).first()
    if found is None or (complete_only and found.status != SnapshotStatus.complete):
        labels = session.exec(
            select(Snapshot.label).where(Snapshot.collection_id == coll.id,
                                         Snapshot.status == SnapshotStatus.complete)
            .order_by(col(Snapshot.ordinal))
        ).all()
        known = some(labels) or "none ingested yet"
        state = f" (status {found.status.value})" if found is not None else ""
        raise NotFoundError(f"no complete snapshot {label!r} in {collection!r}{state}; "
                            f"complete snapshots: {known}")
    return found


def list_collections(db: Database) -> list[dict[str, Any]]:
    """Every collection with its identity rules, grade scale and complete snapshots."""
    with db.session() as session:
        rows = session.exec(select(Collection).order_by(col(Collection.name))).all()
        result = []
        for collection in rows:
            snapshots = session.exec(
                select(Snapshot.label, Snapshot.status).where(
                    Snapshot.collection_id == collection.id).order_by(col(Snapshot.ordinal))
            ).all()
            result.append({
                "name": collection.name,
                "doc_identity": collection.doc_identity.value,
                "topic_identity": collection.topic_identity.value,
                "topic_match": collection.topic_match.value,
                "id_fallback": collection.id_fallback,
                "grades": [collection.grade_min, collection.grade_max],
                "description": collection.description,
                "snapshots": [s[0] for s in snapshots if s[1] == SnapshotStatus.complete],
            })
        return result


def sync_spec(db: Database, path: Path | str) -> CollectionSpec:
    """Create or update the collection a spec declares (its snapshots are ingested separately)."""
    from tcdb.collections.specs.spec import load_spec

    spec = load_spec(Path(path))
    add_collection(db, spec.name, spec.doc_identity, spec.topic_identity,
                   topic_match=spec.topic_match, id_fallback=spec.id_fallback,
                   grade_min=spec.grade_min, grade_max=spec.grade_max,
                   description=spec.description)
    return spec


def list_snapshots(db: Database, collection: str | None = None) -> list[dict[str, Any]]:
    """Every snapshot (of every status), optionally of one collection, in time order."""
    with db.session() as session:
        query = (select(Snapshot, Collection.name)
                 .join(Collection, col(Collection.id) == Snapshot.collection_id)
                 .order_by(col(Collection.name), col(Snapshot.ordinal), col(Snapshot.label)))
        if collection is not None:
            query = query.where(Snapshot.collection_id == get_collection(session, collection).id)
        return [{
            "collection": name, "label": s.label, "date": s.date, "status": s.status.value,
            "source": s.source, "documents": s.n_documents, "topics": s.n_topics,
            "judgments": s.n_judgments, "with_text": s.with_text,
            "with_documents": s.with_documents, "topics_from_scores": s.topics_from_scores,
            "ordinal": s.ordinal, "documents_edited": s.n_documents_edited,
            "topics_edited": s.n_topics_edited, "characters_removed": s.n_characters_removed,
            "rejected": s.n_rejected,
            "completed_at": s.completed_at, "error": s.error,
        } for s, name in session.exec(query).all()]


# ---------------------------------------------------------------- the catalogue's operations


class CollectionAddRequest(Request):
    """A collection and how its documents and topics keep their identity across snapshots."""

    collection: Name = argument(help="Collection name, e.g. longeval-web.", metavar="NAME")
    doc_identity: DocIdentity = option(
        DocIdentity.doc_id, help="Documents are the same across snapshots by id or URL.")
    topic_identity: TopicIdentity = option(
        TopicIdentity.query_id,
        help="Topics are the same by id, or by query text (re-numbered queries).")
    topic_match: TopicMatch = option(
        TopicMatch.normalised,
        help="With topic_identity text: texts are one topic when equal after normalising "
        "(case, spacing, compatibility forms, end punctuation), or only when exactly equal.")
    id_fallback: bool = option(False, help="With doc_identity url: key documents without a "
                               "URL by their id.")
    grades: str | None = option(None, metavar="LOW:HIGH", help="Relevance scale LOW:HIGH, "
                                "e.g. 0:2.")
    description: str | None = option(None, help="What the collection is.")

    @field_validator("grades")
    @classmethod
    def _scale(cls, value: str | None) -> str | None:
        if value:
            from tcdb.collections.files.numeric import parse_integer
            from tcdb.limits import GRADE_RANGE, Refused

            parts = value.split(":")
            if len(parts) != 2:
                raise ValueError("write the scale as LOW:HIGH, e.g. 0:2")
            try:  # grades as the qrels' grammar reads them, within SMALLINT
                low, high = (parse_integer(v.strip(), "grade", GRADE_RANGE) for v in parts)
            except Refused as exc:
                raise ValueError(f"{exc}; write the scale as LOW:HIGH, e.g. 0:2") from None
            if low > high:
                raise ValueError(f"the lowest grade {low} is above the highest {high}")
            return f"{low}:{high}"
        return None

    def scale(self) -> tuple[int | None, int | None]:
        if not self.grades:
            return None, None
        low, high = (int(v) for v in self.grades.split(":"))
        return low, high


class CollectionRow(BaseModel):
    """A collection: its identity rules, grade scale and complete snapshots."""

    name: str
    doc_identity: str
    topic_identity: str
    topic_match: str
    id_fallback: bool
    grades: list[int | None]  # [low, high]
    description: str | None
    snapshots: list[str]


class CollectionAddResult(Result):
    """The collection as stored."""

    collection: CollectionRow

    def to_frame(self) -> pd.DataFrame:
        """One row: the collection."""
        return _collections_frame([self.collection])


def _collections_frame(rows: list[CollectionRow]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([{**r.model_dump(exclude={"grades", "snapshots"}),
                          "grade_min": r.grades[0], "grade_max": r.grades[1],
                          "snapshots": ", ".join(r.snapshots)} for r in rows],
                        columns=["name", "doc_identity", "topic_identity", "topic_match",
                                 "id_fallback",
                                 "description", "grade_min", "grade_max", "snapshots"])


@operation("collection_add", command="collection add", writes=True)
def collection_add(request: CollectionAddRequest, db: Database) -> CollectionAddResult:
    """Create a collection (the same call again is a no-op)."""
    low, high = request.scale()
    add_collection(db, request.collection, request.doc_identity, request.topic_identity,
                   topic_match=request.topic_match, id_fallback=request.id_fallback,
                   grade_min=low, grade_max=high,
                   description=request.description)
    (row,) = [r for r in list_collections(db) if r["name"] == request.collection]
    return CollectionAddResult(collection=CollectionRow(**row))


class CollectionsRequest(Request):
    """Every collection (no selection)."""


class CollectionsResult(Result):
    """Every collection, by name."""

    collections: list[CollectionRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per collection."""
        return _collections_frame(self.collections)

    def to_data(self) -> list[dict[str, Any]]:
        """The list, as `tcdb collection list --json` has always printed it."""
        rows: list[dict[str, Any]] = super().to_data()["collections"]
        return rows


@operation("collections", command="collection list")
def collections(request: CollectionsRequest, db: Database) -> CollectionsResult:
    """List collections, their identity rules and complete snapshots."""
    return CollectionsResult(collections=[CollectionRow(**r) for r in list_collections(db)])


class SnapshotsRequest(Request):
    """Which snapshots to list."""

    collection: Name | None = argument(None, help="Only this collection.")


class SnapshotRow(BaseModel):
    """A snapshot of any status, with its counts."""

    collection: str
    label: str
    date: dt.date | None
    status: str
    source: str | None
    documents: int | None
    topics: int | None
    judgments: int | None
    with_text: bool | None
    with_documents: bool | None  # False: registered without documents (scores only)
    topics_from_scores: bool | None  # its topics are the ids its imported scores named
    ordinal: int | None
    # texts its readers changed (control characters removed or made U+FFFD): counted at ingest
    documents_edited: int | None
    topics_edited: int | None
    characters_removed: int | None
    rejected: int | None  # lines its readers set aside (--on-bad-lines warn|skip)
    completed_at: dt.datetime | None
    error: str | None


class SnapshotsResult(Result):
    """Snapshots in collection and time order."""

    snapshots: list[SnapshotRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per snapshot."""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.snapshots],
                            columns=list(SnapshotRow.model_fields))

    def to_data(self) -> list[dict[str, Any]]:
        """The list, as `tcdb snapshot list --json` has always printed it."""
        rows: list[dict[str, Any]] = super().to_data()["snapshots"]
        return rows


@operation("snapshots", command="snapshot list")
def snapshots(request: SnapshotsRequest, db: Database) -> SnapshotsResult:
    """List snapshots with their status and counts."""
    return SnapshotsResult(snapshots=[SnapshotRow(**r) for r in
                                      list_snapshots(db, request.collection)])
