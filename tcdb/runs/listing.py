"""Finding runs: by tag in a snapshot (for the core), and listed with their metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import NotFoundError, OptionError
from tcdb.queries import run_rows
from tcdb.schema import Run, Snapshot
from tcdb.storage.db import session_scope


def get_runs(session: Session, snapshot: Snapshot, tags: Sequence[str] | None = None) -> list[Run]:
    """The snapshot's runs (all, or those tags, in the order given); unknown tags are named."""
    rows = list(session.exec(
        select(Run).where(Run.snapshot_id == snapshot.pk).order_by(col(Run.tag))))
    if tags is None:
        return rows
    by_tag = {r.tag: r for r in rows}
    unknown = [t for t in tags if t not in by_tag]
    if unknown:
        known = ", ".join(list(by_tag)[:10]) or "none imported yet"
        if len(by_tag) > 10:
            known += f", … ({len(by_tag)} in all; `tcdb run list` shows them)"
        raise NotFoundError(f"no run {', '.join(map(repr, unknown))} in snapshot "
                            f"{snapshot.label!r} (runs: {known})")
    return [by_tag[t] for t in dict.fromkeys(tags)]


def list_runs(collection: str | None = None, snapshot: str | None = None) -> list[dict[str, Any]]:
    """Every run (optionally of one collection / snapshot) with its metadata and sizes."""
    with session_scope() as session:
        collection_id = get_collection(session, collection).id if collection else None
        if snapshot is not None and collection is None:
            raise OptionError("SNAPSHOT", "a snapshot needs its collection")
        if snapshot is not None:
            get_snapshot(session, collection or "", snapshot)
        return run_rows(session.connection(), collection_id=collection_id, snapshot=snapshot)
