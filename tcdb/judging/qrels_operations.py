"""Qrels sets as operations: import a file, export a set, list the sets, show one set's
judgments (`tcdb qrels import|export|list|show`, `tcdb.api.qrels_import`, …).

The writers and readers are `tcdb.judging.qrels`'s; this module gives each a typed request and
result, so the CLI, the API and the flows say the same fields.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.vocabulary import QrelsKind

if TYPE_CHECKING:
    import pandas as pd


class QrelsImportRequest(Request):
    """A qrels file to store as a new named set of a snapshot."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = argument(help="Name of the new qrels set.", metavar="NAME")
    file: Path = argument(help="TREC or BEIR qrels file (plain or .gz).")
    kind: QrelsKind | None = option(
        None, help="original or derived. Default: original when the snapshot has no original "
        "qrels yet (they become its original), else derived.")
    designate: bool = option(False, help="Make this original set the snapshot's original "
                             "qrels, the one lists, diffs and drift count.")
    split_by: str | None = option(
        None, metavar="iteration", help="One set per value of the qrels' iteration column, "
        "named NAME-itITERATION (TREC-COVID's judging rounds).")
    allow_unknown_docs: bool = option(
        False, help="Keep judgments of documents no snapshot of the collection holds (they "
        "still count in recall and AP).")
    description: str | None = option(None, help="Free text.")


class ImportedQrelsSet(BaseModel):
    """One set an import stored (or found stored already)."""

    name: str
    kind: str
    status: str  # imported | unchanged
    n_judgments: int
    original: bool  # it is the snapshot's original qrels


class QrelsImportResult(Result):
    """The set imported (with `split_by`: status and judgments over all its sets) and each
    set."""

    name: str
    kind: str
    status: str
    n_judgments: int
    original: bool
    sets: list[ImportedQrelsSet]

    def to_frame(self) -> pd.DataFrame:
        """One row per set stored."""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.sets],
                            columns=list(ImportedQrelsSet.model_fields))


@operation("qrels_import", command="qrels import", writes=True)
def qrels_import(request: QrelsImportRequest, db: Database) -> QrelsImportResult:
    """Import a qrels file as a new named set; the same file again is a no-op.

    Judgments may name any document of the collection, also one this snapshot lacks.
    """
    from tcdb.judging.qrels import import_qrels

    report = import_qrels(db, request.collection, request.snapshot, request.qrels, request.file,
                          request.kind, request.description,
                          allow_unknown_docs=request.allow_unknown_docs,
                          designate=request.designate, split_by=request.split_by)
    return QrelsImportResult(**report)


class QrelsExportRequest(Request):
    """Which qrels set to write, where, and in which format."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = argument(help="Qrels set name.", metavar="NAME")
    out: Path = option(help="File to write (.gz to compress).")
    format: str = option("trec", help="trec (iterations as imported) or beir.")


class QrelsExportResult(Result):
    """What was written where."""

    collection: str
    snapshot: str
    name: str
    format: str
    out: str
    n_judgments: int
    n_topics: int

    def to_frame(self) -> pd.DataFrame:
        """One row: the set and its file."""
        import pandas as pd

        return pd.DataFrame([self.model_dump()])


@operation("qrels_export", command="qrels export", writes=True)
def qrels_export(request: QrelsExportRequest, db: Database) -> QrelsExportResult:
    """Write a qrels set back out, e.g. to release an expanded or derived set."""
    from tcdb.judging.qrels import export_qrels

    return QrelsExportResult(**export_qrels(db, request.collection, request.snapshot, request.qrels,
                                            request.out, request.format))


class QrelsSetsRequest(Request):
    """Which qrels sets to list: all, a collection's, or one snapshot's."""

    collection: Name | None = argument(None, help="Only this collection.")
    snapshot: Name | None = argument(None, help="Only this snapshot.")


class QrelsSetRow(BaseModel):
    """One stored qrels set: its kind, parents, provenance and size."""

    collection: str
    snapshot: str
    name: str
    kind: str
    n_judgments: int
    n_topics: int
    parent: str | None
    second_parent: str | None
    assessor: str | None
    method: str | None
    description: str | None
    created_at: dt.datetime | None


class QrelsSetsResult(Result):
    """The qrels sets, in collection, snapshot and creation order."""

    sets: list[QrelsSetRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per qrels set."""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.sets],
                            columns=list(QrelsSetRow.model_fields))

    def to_data(self) -> list[dict[str, Any]]:
        """The list of sets, as `tcdb qrels list --json` has always printed it."""
        sets: list[dict[str, Any]] = super().to_data()["sets"]
        return sets


@operation("qrels_sets", command="qrels list")
def qrels_sets(request: QrelsSetsRequest, db: Database) -> QrelsSetsResult:
    """List qrels sets with kind, parents, provenance and size."""
    from tcdb.judging.qrels import list_qrels

    return QrelsSetsResult(sets=[QrelsSetRow(**row) for row in
                                 list_qrels(db, request.collection, request.snapshot)])


class QrelsRequest(Request):
    """Which qrels set to read."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = argument("original", help="Qrels set name.", metavar="NAME")


class Judgment(BaseModel):
    """One judgment, in external ids."""

    topic: str
    doc: str
    grade: int


class QrelsResult(Result):
    """A qrels set's judgments as evaluation reads them (documents the snapshot lacks
    included)."""

    collection: str
    snapshot: str
    qrels: str
    judgments: list[Judgment]

    def to_frame(self) -> pd.DataFrame:
        """`collection, snapshot, qrels, topic, doc, grade`, one row per judgment."""
        import pandas as pd

        return pd.DataFrame([(self.collection, self.snapshot, self.qrels, j.topic, j.doc,
                              j.grade) for j in self.judgments],
                            columns=["collection", "snapshot", "qrels", "topic", "doc", "grade"])


@operation("qrels", command="qrels show")
def qrels(request: QrelsRequest, db: Database) -> QrelsResult:
    """A qrels set's judgments: topic, document and grade (external ids)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_records

    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        qset = get_qrels_set(session, snap, request.qrels)
        records = qrels_records(session.connection(), qset.pk, snap.pk)
    return QrelsResult(collection=request.collection, snapshot=request.snapshot,
                       qrels=request.qrels,
                       judgments=[Judgment(topic=r.topic_id, doc=r.doc_id, grade=r.grade)
                                  for r in records])
