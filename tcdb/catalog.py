"""Collections and their snapshots: create, find, and sync them from collection specs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select
from sqlmodel import Session

from tcdb.db import session_scope
from tcdb.errors import ConflictError, NotFoundError
from tcdb.schema import Collection, DocIdentity, Snapshot, SnapshotStatus, TopicIdentity

if TYPE_CHECKING:
    from tcdb.collections.specs import CollectionSpec


def add_collection(
    name: str,
    doc_identity: str = "doc_id",
    topic_identity: str = "query_id",
    *,
    id_fallback: bool = False,
    grade_min: int | None = None,
    grade_max: int | None = None,
    description: str | None = None,
    session: Session | None = None,
) -> Collection:
    """Create a collection; the same call again is a no-op, different identity rules a conflict.

    Identity rules cannot change once snapshots exist: every stored key was derived from them.
    """
    if session is None:
        with session_scope() as own:
            return add_collection(name, doc_identity, topic_identity, id_fallback=id_fallback,
                                  grade_min=grade_min, grade_max=grade_max,
                                  description=description, session=own)
    wanted = {
        "doc_identity": DocIdentity(doc_identity),
        "topic_identity": TopicIdentity(topic_identity),
        "id_fallback": id_fallback,
    }
    existing = session.exec(select(Collection).where(Collection.name == name)).first()
    if existing is None:
        collection = Collection(name=name, grade_min=grade_min, grade_max=grade_max,
                                description=description, **wanted)
        session.add(collection)
        session.flush()
        return collection
    collection = existing[0]
    differs = {k: (getattr(collection, k), v) for k, v in wanted.items()
               if getattr(collection, k) != v}
    if differs:
        n = session.exec(select(func.count()).select_from(Snapshot).where(
            Snapshot.collection_id == collection.id)).one()[0]
        if n:
            changes = ", ".join(f"{k}: {_v(a)} → {_v(b)}" for k, (a, b) in differs.items())
            raise ConflictError(f"collection {name!r} already has {n} snapshot(s) keyed by its "
                                f"identity rules; cannot change {changes}")
        for key, (_, value) in differs.items():
            setattr(collection, key, value)
    if grade_min is not None:
        collection.grade_min = grade_min
    if grade_max is not None:
        collection.grade_max = grade_max
    if description is not None:
        collection.description = description
    session.add(collection)
    session.flush()
    return collection


def _v(value: Any) -> str:
    return str(getattr(value, "value", value))


def get_collection(session: Session, name: str) -> Collection:
    found = session.exec(select(Collection).where(Collection.name == name)).first()
    if found is None:
        names = session.exec(select(Collection.name).order_by(Collection.name)).all()
        known = ", ".join(n[0] for n in names) or "none yet"
        raise NotFoundError(f"no collection {name!r} (known: {known}); create it with "
                            "`tcdb collection add` or `tcdb collection sync`")
    return found[0]


def get_snapshot(
    session: Session, collection: str, label: str, *, complete_only: bool = True
) -> Snapshot:
    """A snapshot by collection name and label; only `complete` ones unless asked otherwise."""
    coll = get_collection(session, collection)
    query = select(Snapshot).where(Snapshot.collection_id == coll.id, Snapshot.label == label)
    found = session.exec(query).first()
    if found is None or (complete_only and found[0].status != SnapshotStatus.complete):
        labels = session.exec(
            select(Snapshot.label).where(Snapshot.collection_id == coll.id,
                                         Snapshot.status == SnapshotStatus.complete)
            .order_by(Snapshot.ordinal)
        ).all()
        known = ", ".join(lbl[0] for lbl in labels) or "none ingested yet"
        state = f" (status {found[0].status.value})" if found is not None else ""
        raise NotFoundError(f"no complete snapshot {label!r} in {collection!r}{state}; "
                            f"complete snapshots: {known}")
    return found[0]


def list_collections() -> list[dict[str, Any]]:
    with session_scope() as session:
        rows = session.exec(select(Collection).order_by(Collection.name)).all()
        result = []
        for (collection,) in rows:
            snapshots = session.exec(
                select(Snapshot.label, Snapshot.status).where(
                    Snapshot.collection_id == collection.id).order_by(Snapshot.ordinal)
            ).all()
            result.append({
                "name": collection.name,
                "doc_identity": collection.doc_identity.value,
                "topic_identity": collection.topic_identity.value,
                "id_fallback": collection.id_fallback,
                "grades": [collection.grade_min, collection.grade_max],
                "description": collection.description,
                "snapshots": [s[0] for s in snapshots if s[1] == SnapshotStatus.complete],
            })
        return result


def sync_spec(path: Path | str) -> CollectionSpec:
    """Create or update the collection a spec declares (its snapshots are ingested separately)."""
    from tcdb.collections.specs import load_spec

    spec = load_spec(Path(path))
    add_collection(spec.name, spec.doc_identity, spec.topic_identity,
                   id_fallback=spec.id_fallback, grade_min=spec.grade_min,
                   grade_max=spec.grade_max, description=spec.description)
    return spec
