"""Register a snapshot without documents: from its topics file (ids with or without texts), or
from nothing at all, its topics then being the ids its published scores name.

A researcher with published per-topic scores has no corpus and often no qrels: the snapshot
exists for the scores, and is marked so (`snapshot.with_documents` false, and
`topics_from_scores` when no topics file was given) in `snapshot list` and the API. It is
`complete` at once, so scores import into it and every report of scores reads it. An ingest
of its documents later (`tcdb snapshot ingest` under the same label) fills it in place:
its topics, runs and scores stay.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from sqlmodel import Session, select

from tcdb.catalog.collections import get_collection
from tcdb.collections.sources.records import TopicRecord
from tcdb.errors import ConflictError, FieldError
from tcdb.ingest.report import IngestReport
from tcdb.ingest.topics import write_topics
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.schema import Collection, Snapshot, SnapshotStatus, TopicIdentity
from tcdb.storage.locks import ingest_lock_name

if TYPE_CHECKING:
    import pandas as pd

REGISTERED = "registered without documents"


class SnapshotRegisterRequest(Request):
    """A snapshot known by its topics (or by the topic ids its scores will name) alone."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label, e.g. 2022-06.", metavar="LABEL")
    topics_file: Path | None = option(
        None, flag="--topics", metavar="FILE",
        help="Topics: TREC <top>, TSV, BEIR queries.jsonl, or one topic id a line (no texts). "
        "Without it the snapshot's topics are the ids its imported scores name.")
    date: dt.date | None = option(None, metavar="YYYY-MM-DD", help="Snapshot date.")


class SnapshotRegisterResult(Result):
    """The snapshot as registered, and what its topics file brought."""

    collection: str
    label: str
    status: str  # registered | updated | unchanged
    with_documents: bool
    topics_from_scores: bool
    n_topics: int
    n_ambiguous_topics: int
    warnings: list[str]

    def to_frame(self) -> pd.DataFrame:
        """One row: the snapshot, what it was registered from, its topics (warnings joined)."""
        import pandas as pd

        row = self.model_dump(exclude={"warnings"})
        row["warnings"] = "; ".join(self.warnings)
        return pd.DataFrame([row])


@operation("snapshot_register", command="snapshot register", writes=True)
def snapshot_register(request: SnapshotRegisterRequest,
                      db: Database) -> SnapshotRegisterResult:
    """Register a snapshot without documents (topics alone, or the ids its scores name)."""
    from tcdb.collections.topics.ids import read_topics_or_ids

    records = read_topics_or_ids(request.topics_file) if request.topics_file else []
    source = str(request.topics_file.resolve()) if request.topics_file else REGISTERED
    label = request.snapshot
    with db.write_session(ingest_lock_name(request.collection, label),
                       busy=f"snapshot {label!r} of {request.collection!r} is being ingested "
                       "by another process; try again when it has finished") as session:
        coll = get_collection(session, request.collection)
        check_topics_given(coll, request.topics_file is not None)
        snap = session.exec(select(Snapshot).where(Snapshot.collection_id == coll.pk,
                                                   Snapshot.label == label)).first()
        if snap is not None and (snap.with_documents or snap.status != SnapshotStatus.complete):
            raise ConflictError(f"snapshot {label!r} of {coll.name!r} exists with its "
                                "documents: there is nothing to register")
        status = "updated"
        if snap is None:
            status = "registered"
            snap = register_snapshot(session, coll, label, date=request.date, source=source,
                                     records=records)
        report = IngestReport(coll.name, label, status, source)
        before = snap.n_topics
        write_topics(session, coll, snap, records, report)
        changed = request.date is not None and request.date != snap.date
        if status == "updated" and not changed and report.n_topics == before:
            status = "unchanged"
        if changed:
            snap.date = request.date
        if records:
            snap.topics_from_scores = False
        snap.n_topics = report.n_topics
        session.add(snap)
        session.flush()
        from tcdb.ingest.snapshot import _renumber

        _renumber(session, coll)
        return SnapshotRegisterResult(
            collection=coll.name, label=label, status=status, with_documents=False,
            topics_from_scores=snap.topics_from_scores, n_topics=snap.n_topics,
            n_ambiguous_topics=report.n_ambiguous_topics, warnings=report.warnings)


def check_topics_given(coll: Collection, given: bool) -> None:
    """A collection keying topics by their text cannot name a snapshot's topics by ids alone:
    registering one needs a topics file with the texts."""
    if coll.topic_identity == TopicIdentity.text and not given:
        raise FieldError("topics_file", f"collection {coll.name!r} keys topics by their text: "
                         "give a topics file with the texts")


def register_snapshot(session: Session, coll: Collection, label: str, *,
                      date: dt.date | None = None, source: str = REGISTERED,
                      records: list[TopicRecord] | None = None) -> Snapshot:
    """A new snapshot without documents, complete: its topics those `records` will give (none:
    the ids its scores name). `snapshot register` and a results table's import
    (`register_snapshots`) make them the same way, each having checked `check_topics_given`."""
    snap = Snapshot(collection_id=coll.pk, label=label, date=date, source=source,
                    source_fingerprint=_fingerprint(records or []),
                    status=SnapshotStatus.complete, with_documents=False,
                    topics_from_scores=not records, completed_at=dt.datetime.now(dt.UTC))
    session.add(snap)
    session.flush()
    return snap


def _fingerprint(records: list[TopicRecord]) -> str:
    """What the snapshot was registered from (its topic ids), in the source fingerprint's
    place: an ingest of documents later replaces it with its source's."""
    ids = "\n".join(sorted(r.topic_id for r in records))
    return "registered:" + hashlib.sha256(ids.encode()).hexdigest()[:32]
