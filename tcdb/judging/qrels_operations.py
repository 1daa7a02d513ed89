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
from tcdb.vocabulary import JudgeKind, QrelsKind

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
    judge_kind: JudgeKind | None = option(
        None, help="Who judged: human, llm, clicks, click_through_rate, other. Default: the "
        "provenance sidecar's, llm with --umbrela, else unknown.")
    provenance: Path | None = option(
        None, metavar="SIDECAR", help="YAML sidecar of the set's provenance: judge kind, "
        "model, prompt, decoding settings, samples, date (docs/qrels-provenance.md).")
    answers: Path | None = option(
        None, metavar="JSONL", help="The judge's answers, one JSON object a line (raw text, "
        "parsed or not, grade, tokens, cost; or UMBRELA's judge output). "
        "Pairs no answer parsed for are kept as unparsed, left out of the judgments and "
        "counted, never graded 0.")
    judge_input: Path | None = option(
        None, metavar="JSONL", help="UMBRELA's judge input (query.qid, candidates' docid) "
        "the answers answer in order: names each answer's topic and document.")
    umbrela: bool = option(
        False, help="The file is UMBRELA's output: model, judged grades, few-shot count and "
        "samples read from its name (docs/qrels-provenance.md).")


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
    judge_kind: str = JudgeKind.unknown.value
    n_unparsed: int = 0  # pairs no answer parsed for: stored as answers, not as judgments

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
                          designate=request.designate, split_by=request.split_by,
                          judge_kind=request.judge_kind, provenance=request.provenance,
                          answers=request.answers, umbrela=request.umbrela,
                          judge_input=request.judge_input)
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
    judge_kind: JudgeKind | None = option(None, help="Only sets judged so: human, llm, "
                                          "clicks, click_through_rate, other, unknown.")


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
    judge_kind: str = JudgeKind.unknown.value
    model: str | None = None  # an LLM judge's, with its revision when known
    prompt_sha256: str | None = None
    n_unparsed: int = 0  # pairs no answer parsed for (not judgments)


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
                                 list_qrels(db, request.collection, request.snapshot,
                                            request.judge_kind)])


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


class QrelsProvenanceRow(BaseModel):
    """Who judged a set beyond its kind: an LLM's model, prompt and settings."""

    model: str | None = None
    model_revision: str | None = None
    provider: str | None = None
    prompt_sha256: str | None = None
    prompt_variant: str | None = None
    few_shot_count: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    samples: int | None = None
    aggregation: str | None = None
    judged_grades: str | None = None
    judged_at: dt.date | None = None
    n_unparsed: int = 0


class QrelsResult(Result):
    """A qrels set's judgments as evaluation reads them (documents the snapshot lacks
    included), and who judged them."""

    collection: str
    snapshot: str
    qrels: str
    judgments: list[Judgment]
    judge_kind: str = JudgeKind.unknown.value
    provenance: QrelsProvenanceRow | None = None

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
    from tcdb.judging.provenance import provenance_of
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_records

    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        qset = get_qrels_set(session, snap, request.qrels)
        records = qrels_records(session.connection(), qset.pk, snap.pk)
        found = provenance_of(session, [qset.pk]).get(qset.pk)
        provenance = None if found is None else QrelsProvenanceRow(**found.model_dump())
    return QrelsResult(collection=request.collection, snapshot=request.snapshot,
                       qrels=request.qrels,
                       judgments=[Judgment(topic=r.topic_id, doc=r.doc_id, grade=r.grade)
                                  for r in records],
                       judge_kind=qset.judge_kind.value, provenance=provenance)
