"""The `collection_sync` operation: a collection spec made true in the database.

Creates or updates the collection a spec declares (`tcdb.catalog.collections.sync_spec`), lists
the declared snapshots that are not complete yet with why each cannot be read (or that it can),
and on request ingests those that can (`snapshot_ingest`, one transaction each).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tcdb.ingest.report import SnapshotIngestResult
from tcdb.operations import Database, Request, Result, argument, operation, option

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.collections.specs.spec import SnapshotSpec
    from tcdb.ingest.snapshot import SnapshotIngestRequest


class CollectionSyncRequest(Request):
    """A collection spec, and whether to ingest what it declares and is ready."""

    spec: Path = argument(help="A collection spec (YAML), e.g. "
                          "collections/specs/longeval-web.yaml or just longeval-web.yaml.")
    ingest: bool = option(False, help="Also ingest every declared snapshot that is not "
                          "complete and whose source is available.")


class PendingSnapshot(BaseModel):
    """A declared snapshot not complete yet."""

    label: str
    source: str
    unavailable: str | None  # why its source cannot be read yet; None: it can


class CollectionSyncResult(Result):
    """The collection's declared snapshots, those still pending, and those ingested now."""

    collection: str
    declared: list[str]
    pending: list[PendingSnapshot]
    ingested: list[SnapshotIngestResult]

    def to_frame(self) -> pd.DataFrame:
        """One row per declared snapshot: `complete`, `ingested`, `pending` or
        `unavailable` (with the reason)."""
        import pandas as pd

        pending = {p.label: p for p in self.pending}
        done = {r.label for r in self.ingested}
        rows = []
        for label in self.declared:
            entry = pending.get(label)
            state = ("ingested" if label in done else "complete" if entry is None else
                     "pending" if entry.unavailable is None else "unavailable")
            rows.append({"collection": self.collection, "snapshot": label, "state": state,
                         "reason": entry.unavailable if entry else None})
        return pd.DataFrame(rows, columns=["collection", "snapshot", "state", "reason"])


def ingest_request(collection: str, snap: SnapshotSpec,
                   text: bool = True) -> SnapshotIngestRequest:
    """The `snapshot_ingest` request of a snapshot a spec declares."""
    from tcdb.ingest.snapshot import SnapshotIngestRequest

    return SnapshotIngestRequest.of(
        collection=collection, snapshot=snap.label, irds=snap.irds, docs=snap.docs,
        topics_file=snap.topics, qrels_file=snap.qrels, source_labels=snap.source_labels,
        cocktail=snap.cocktail, date=snap.date, text=text)


def collection_exists(db: Database, name: str) -> bool:
    from sqlmodel import select

    from tcdb.schema import Collection

    with db.session() as session:
        return session.exec(select(Collection.id).where(Collection.name == name)).first() \
            is not None


@operation("collection_sync", command="collection sync", writes=True)
def collection_sync(request: CollectionSyncRequest, db: Database) -> CollectionSyncResult:
    """Create or update a collection from its spec and show the state of its snapshots."""
    from tcdb.catalog.collections import sync_spec
    from tcdb.collections.sources.source import check_readable
    from tcdb.collections.specs.spec import load_spec
    from tcdb.ingest import pending_snapshots
    from tcdb.ingest.snapshot import snapshot_ingest

    spec = load_spec(request.spec)
    if not collection_exists(db, spec.name):
        # a new collection is created once the first source it declares can be read: a spec
        # whose data cannot be downloaded fails in one line and leaves no collection behind
        first = next((snap for snap in spec.snapshots if snap.availability() is None), None)
        if first is not None:
            check_readable(first.open_source())
    spec = sync_spec(db, spec.path)
    pending = pending_snapshots(db, spec.path)
    done: list[SnapshotIngestResult] = []
    if request.ingest:
        for snap, reason in pending:
            if reason is None:
                done.append(snapshot_ingest(ingest_request(spec.name, snap), db))
    ingested = {r.label for r in done}
    return CollectionSyncResult(
        collection=spec.name, declared=[s.label for s in spec.snapshots],
        pending=[PendingSnapshot(label=s.label, source=s.describe(), unavailable=r)
                 for s, r in pending if s.label not in ingested],
        ingested=done)
