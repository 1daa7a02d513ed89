"""Qrels sets: named, immutable sets of judgments of one snapshot.

`store_qrels` is the one writer every path uses — a snapshot's original qrels at ingest, a
later judgment file (`tcdb qrels import`), pooled and expanded sets from assessment, derived
sets from leave-one-group-out — so validation (topic and document in the snapshot, grade on
the collection's scale, one grade per document) is the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.collections.sources.records import QrelRecord
from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError, some
from tcdb.operations.database import Database
from tcdb.queries import document_ids_in_collection, topic_ids
from tcdb.schema import (
    Collection,
    JudgeKind,
    Judgment,
    QrelsKind,
    QrelsProvenance,
    QrelsSet,
    Snapshot,
)
from tcdb.storage.bulk import bulk_insert


def store_qrels(
    session: Session,
    snapshot: Snapshot,
    name: str,
    kind: QrelsKind | str,
    records: Iterable[QrelRecord],
    *,
    parent_id: int | None = None,
    second_parent_id: int | None = None,
    assessor: str | None = None,
    method: str | None = None,
    description: str | None = None,
    source: str | None = None,
    checksum: str | None = None,
    top_ids: dict[str, int] | None = None,
    allow_unknown_docs: bool = False,
    designate: bool = False,
    judge_kind: JudgeKind | str | None = None,
) -> QrelsSet:
    """Validate and write a new qrels set inside the caller's transaction.

    Every judgment must name a topic of the snapshot, a grade on the collection's scale and a
    document of the collection — of this snapshot or of any other: later qrels judge
    documents an earlier snapshot lacks. With `allow_unknown_docs`, documents of no snapshot
    are kept as unresolved judgments, which evaluation counts as any other. The same document
    judged twice for a topic is an error, even with the same grade. Nothing is written unless
    every record passes. A set of kind `original` becomes the snapshot's designated original
    qrels when the snapshot has none yet, or with `designate`.
    """
    _refuse_taken(session, snapshot, name)
    collection = session.get(Collection, snapshot.collection_id)
    assert collection is not None
    records = list(records)
    where_of = {id(r): r.file or f"qrels set {name!r}" for r in records}
    topics = top_ids if top_ids is not None else topic_ids(session, snapshot.pk)
    unknown = [r for r in records if r.topic_id not in topics]
    if unknown:
        _refuse_unknown(records, unknown, where_of, f"topic {unknown[0].topic_id!r} is not in "
                        f"snapshot {snapshot.label!r}", "topic")
    docs = document_ids_in_collection(session, snapshot, {r.doc_id for r in records})
    unknown = [r for r in records if r.doc_id not in docs]
    if unknown and not allow_unknown_docs:
        _refuse_unknown(records, unknown, where_of,
                        f"document {unknown[0].doc_id!r} is not in snapshot {snapshot.label!r} "
                        f"nor in any other snapshot of {collection.name!r} "
                        "(--allow-unknown-docs keeps such judgments as unresolved)", "document")
    rows: JudgmentRows = {}
    lines: dict[tuple[int, int | str], int | None] = {}
    for record in records:
        where = where_of[id(record)]
        _check_grade(collection, record, where)
        key = (topics[record.topic_id], docs.get(record.doc_id, record.doc_id))
        if key in rows:
            at = f" (first at line {lines[key]})" if lines[key] is not None else ""
            raise InputError(where, record.line,
                             f"document {record.doc_id!r} judged twice for topic "
                             f"{record.topic_id!r}{at}")
        rows[key] = (record.grade, record.iteration)
        lines[key] = record.line
    qrels = create_qrels_set(session, snapshot, name, kind, rows, parent_id=parent_id,
                             second_parent_id=second_parent_id, assessor=assessor,
                             method=method, description=description, source=source,
                             checksum=checksum, judge_kind=judge_kind)
    if qrels.kind == QrelsKind.original and (designate or snapshot.original_qrels is None):
        designate_original(session, snapshot, qrels)
    return qrels


# (topic id, document id) → (grade, iteration); a document of no snapshot by its external id
JudgmentRows = dict[tuple[int, int | str], tuple[int, str | None]]


def create_qrels_set(session: Session, snapshot: Snapshot, name: str, kind: QrelsKind | str,
                     rows: JudgmentRows, **provenance: Any) -> QrelsSet:
    """Write a qrels set of judgments already validated (`store_qrels` validates records;
    derived and expanded sets copy stored judgments), in bulk. Without a judge kind, a set
    made from stored sets takes theirs (`tcdb.judging.provenance.inherited_kind`)."""
    from tcdb.judging.provenance import inherited_kind

    _refuse_taken(session, snapshot, name)
    if provenance.get("judge_kind") is None:
        provenance["judge_kind"] = inherited_kind(session, provenance.get("parent_id"),
                                                  provenance.get("second_parent_id"))
    provenance["judge_kind"] = JudgeKind(provenance["judge_kind"])
    qrels = QrelsSet(snapshot_id=snapshot.pk, name=name, kind=QrelsKind(kind),
                     n_judgments=len(rows), **provenance)
    session.add(qrels)
    session.flush()
    resolved: list[tuple[Any, ...]] = []
    unresolved: list[tuple[Any, ...]] = []
    for (topic, doc), (grade, iteration) in rows.items():
        target = resolved if isinstance(doc, int) else unresolved
        target.append((qrels.pk, topic, doc, grade, iteration))
    bulk_insert(session, "judgment",
                ["qrels_set_id", "topic_id", "document_id", "grade", "iteration"], resolved)
    bulk_insert(session, "judgment_unresolved",
                ["qrels_set_id", "topic_id", "external_doc_id", "grade", "iteration"], unresolved)
    # `judgments_checksum` stays empty: the first report's lineage hashes the judgments and
    # keeps the result. Hashing here would query judgments against a snapshot whose documents
    # this transaction is still writing — at ingest on PostgreSQL, with planner statistics that
    # do not know the snapshot yet, a plan that scans its membership once per judgment (hours
    # at 1.5 M documents).
    return qrels


def stored_judgments(session: Session, qrels_set_id: int) -> JudgmentRows:
    """A stored set's judgments as `create_qrels_set` takes them."""
    from tcdb.queries import unresolved_judgments

    rows: JudgmentRows = {(t, d): (g, i) for t, d, g, i in session.exec(
        select(Judgment.topic_id, Judgment.document_id, Judgment.grade, Judgment.iteration)
        .where(Judgment.qrels_set_id == qrels_set_id))}
    rows.update({(t, d): (g, i) for t, d, g, i in unresolved_judgments(session, qrels_set_id)})
    return rows


def _refuse_taken(session: Session, snapshot: Snapshot, name: str) -> None:
    existing = session.exec(select(QrelsSet.id).where(
        QrelsSet.snapshot_id == snapshot.pk, QrelsSet.name == name)).first()
    if existing is not None:
        raise ConflictError(f"snapshot {snapshot.label!r} already has a qrels set {name!r}; "
                            "qrels sets are immutable: choose another name")


def designate_original(session: Session, snapshot: Snapshot, qrels: QrelsSet) -> None:
    """Make `qrels` the snapshot's original qrels: what lists, diffs and drift count."""
    if qrels.kind != QrelsKind.original:
        raise FieldError("designate", f"qrels set {qrels.name!r} is of kind "
                         f"{qrels.kind.value}; only an original set is the snapshot's original")
    snapshot.original_qrels = qrels.name
    snapshot.n_judgments = qrels.n_judgments
    session.add(snapshot)
    session.flush()


def _refuse_unknown(records: list[QrelRecord], unknown: list[QrelRecord],
                    where_of: dict[int, str], reason: str, field: str) -> None:
    """One error for every judgment naming something unknown: the first one's line and reason,
    then how many there are and where the first few stand."""
    first = unknown[0]
    shown = ", ".join(
        (f"line {r.line} " if r.line is not None else "")
        + f"({r.topic_id if field == 'topic' else r.doc_id})" for r in unknown[:5])
    more = f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
    raise InputError(where_of[id(first)], first.line,
                     f"{reason}; {len(unknown):,} of {len(records):,} judgment(s) name unknown "
                     f"{field}s: {shown}{more}")


def _check_grade(collection: Collection, record: QrelRecord, where: str) -> None:
    low, high = collection.grade_min, collection.grade_max
    if (low is not None and record.grade < low) or (high is not None and record.grade > high):
        scale = f"[{'' if low is None else low}, {'' if high is None else high}]"
        raise InputError(where, record.line,
                         f"grade {record.grade} is outside the collection's scale {scale}")


def import_qrels(
    db: Database,
    collection: str,
    snapshot: str,
    name: str,
    path: Path | str,
    kind: QrelsKind | str | None = None,
    description: str | None = None,
    *,
    allow_unknown_docs: bool = False,
    designate: bool = False,
    split_by: str | None = None,
    judge_kind: JudgeKind | str | None = None,
    provenance: Path | None = None,
    answers: Path | None = None,
    umbrela: bool = False,
    judge_input: Path | None = None,
) -> dict[str, Any]:
    """Import a qrels file of a snapshot as a named set; the same file again is a no-op.

    Without `kind`, the file is the snapshot's `original` qrels when it has none yet, else a
    further set of kind `derived`. `split_by="iteration"` imports one set per value of the
    qrels' iteration column (TREC-COVID's judging rounds), named `NAME-it<iteration>`.

    Who judged (`tcdb.judging.provenance`): `judge_kind`, a `provenance` sidecar, UMBRELA's
    file name (`umbrela`), and `answers`, whose pairs that no answer parsed for are left out of
    the judgments and counted (`n_unparsed`), never graded 0.

    Returns `{name, kind, status, n_judgments, original, sets, judge_kind, n_unparsed}`: the
    set imported (with `split_by`: `status` and `n_judgments` over all of them), and `sets`,
    one entry per set.
    """
    from tcdb.collections.qrels.formats import read_qrels
    from tcdb.collections.runs.trec import checksum_file
    from tcdb.judging.provenance import (
        read_judge,
        store_provenance,
        unparsed_pairs,
        without_unparsed,
    )
    from tcdb.names import made_name

    if kind is not None and QrelsKind(kind) not in (QrelsKind.original, QrelsKind.derived):
        raise FieldError("kind", "imported qrels are of kind original or derived")
    if split_by not in (None, "iteration"):
        raise FieldError("split_by", f"{split_by!r}: qrels split by iteration only")
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"qrels file not found: {path}")
    if split_by is not None and answers is not None:
        raise FieldError("answers", "answers name the pairs of one set: not with split_by")
    checksum = checksum_file(path)
    records = read_qrels(path)
    judge, judge_answers = read_judge(path, judge_kind, provenance, answers, umbrela,
                                      judge_input)
    unparsed = unparsed_pairs(judge_answers)
    records = without_unparsed(records, unparsed)
    parts: dict[str, list[QrelRecord]] = {name: records}
    if split_by == "iteration":
        parts = {}
        for record in records:
            part = made_name(f"{name}-it{record.iteration or 0}", "qrels")
            parts.setdefault(part, []).append(record)
    results = []
    # One import into a snapshot at a time: the same file twice at once is one set.
    waiting = f"waiting for another process importing qrels into {snapshot!r} to finish …"
    with db.write_session(f"qrels\x00{collection}\x00{snapshot}", waiting=waiting) as session:
        snap = get_snapshot(session, collection, snapshot)
        chosen = QrelsKind(kind) if kind is not None else (
            QrelsKind.original if snap.original_qrels is None else QrelsKind.derived)
        for part, part_records in parts.items():
            existing = session.exec(select(QrelsSet).where(
                QrelsSet.snapshot_id == snap.pk, QrelsSet.name == part)).first()
            if existing is not None and existing.checksum == checksum:
                results.append({"name": part, "kind": existing.kind.value, "status": "unchanged",
                                "n_judgments": existing.n_judgments,
                                "original": snap.original_qrels == part})
                continue
            qrels = store_qrels(session, snap, part, chosen, part_records, method="file",
                                description=description, source=str(path.resolve()),
                                checksum=checksum, allow_unknown_docs=allow_unknown_docs,
                                designate=designate and split_by is None,
                                judge_kind=judge.judge_kind if judge else JudgeKind.unknown)
            if judge is not None:
                store_provenance(session, qrels, judge, judge_answers,
                                 topic_ids(session, snap.pk))
            results.append({"name": part, "kind": qrels.kind.value, "status": "imported",
                            "n_judgments": qrels.n_judgments,
                            "original": snap.original_qrels == part})
    imported = any(r["status"] == "imported" for r in results)
    return {"name": name, "kind": chosen.value, "status": "imported" if imported else "unchanged",
            "n_judgments": sum(r["n_judgments"] for r in results),
            "original": any(r["original"] for r in results), "sets": results,
            "judge_kind": judge.judge_kind if judge else JudgeKind.unknown.value,
            "n_unparsed": len(unparsed)}


def export_qrels(db: Database, collection: str, snapshot: str, name: str, out: Path | str,
                 fmt: str = "trec") -> dict[str, Any]:
    """Write a qrels set back out: TREC (`topic iteration doc grade`, iterations as imported)
    or BEIR TSV, topics in natural order. Documents of other snapshots keep their ids."""
    from tcdb.collections.files.opening import check_output
    from tcdb.collections.qrels.formats import write_qrels
    from tcdb.queries import qrels_records
    from tcdb.sorting import natural_key

    if fmt not in ("trec", "beir"):
        raise FieldError("format", f"{fmt!r} is not one of trec, beir")
    out = Path(out)
    check_output(out)  # before any work: a directory, a missing folder, no permission
    with db.session() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, name)
        records = qrels_records(session, qset.pk, snap.pk)
    records.sort(key=lambda r: (natural_key(r.topic_id), r.doc_id))
    n = write_qrels(out, records, fmt)
    return {"collection": collection, "snapshot": snapshot, "name": name, "format": fmt,
            "out": str(out), "n_judgments": n,
            "n_topics": len({r.topic_id for r in records})}


ORIGINAL = "original"  # every report's default `qrels` (`tcdb.reports.fields.QRELS_DEFAULT`)


def get_qrels_set(session: Session, snapshot: Snapshot, name: str) -> QrelsSet:
    """A snapshot's qrels set by name; NotFoundError names the sets it has.

    `original` with no set literally so named is the snapshot's designated original set
    (`snapshot.original_qrels`, recorded by `designate_original` at ingest), whatever its
    name. Why: the default `qrels` of every report must mean one set on every snapshot.
    """
    found = session.exec(select(QrelsSet).where(
        QrelsSet.snapshot_id == snapshot.pk, QrelsSet.name == name)).first()
    if found is None and name == ORIGINAL and snapshot.original_qrels is not None:
        found = session.exec(select(QrelsSet).where(
            QrelsSet.snapshot_id == snapshot.pk,
            QrelsSet.name == snapshot.original_qrels)).first()
    if found is None:
        names = session.exec(select(QrelsSet.name).where(
            QrelsSet.snapshot_id == snapshot.pk).order_by(col(QrelsSet.name))).all()
        known = some(names) or "none"
        raise NotFoundError(f"no qrels set {name!r} in snapshot {snapshot.label!r} "
                            f"(known: {known})")
    return found


def list_qrels(db: Database, collection: str | None = None, snapshot: str | None = None,
               judge_kind: JudgeKind | str | None = None) -> list[dict[str, Any]]:
    """Every qrels set with its kind, parents, provenance (who judged) and size."""
    from tcdb.judging.provenance import provenance_of

    with db.session() as session:
        query = (select(QrelsSet, Snapshot.label, Collection.name)
                 .join(Snapshot, col(Snapshot.id) == col(QrelsSet.snapshot_id))
                 .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
                 .order_by(col(Collection.name), col(Snapshot.ordinal), col(QrelsSet.id)))
        if collection is not None:
            query = query.where(col(Collection.id) == get_collection(session, collection).id)
        if snapshot is not None:
            query = query.where(col(Snapshot.label) == snapshot)
        if judge_kind is not None:
            query = query.where(col(QrelsSet.judge_kind) == JudgeKind(judge_kind))
        sets = session.exec(query).all()
        judges = provenance_of(session, [q.pk for q, _, _ in sets])
        names = {q.id: q.name for q, _, _ in sets}
        topics: dict[int, int] = dict(session.exec(
            select(Judgment.qrels_set_id, func.count(func.distinct(col(Judgment.topic_id))))
            .group_by(col(Judgment.qrels_set_id))).all())
        return [{
            "collection": coll, "snapshot": label, "name": q.name, "kind": q.kind.value,
            "n_judgments": q.n_judgments, "n_topics": topics.get(q.pk, 0),
            "parent": names.get(q.parent_id) if q.parent_id else None,
            "second_parent": names.get(q.second_parent_id) if q.second_parent_id else None,
            "assessor": q.assessor, "method": q.method, "description": q.description,
            "created_at": q.created_at, "judge_kind": q.judge_kind.value,
            **_judge(judges.get(q.pk)),
        } for q, label, coll in sets]


def _judge(provenance: QrelsProvenance | None) -> dict[str, Any]:
    """What a list shows of a set's judge: model (with revision), prompt hash, unparsed."""
    if provenance is None:
        return {"model": None, "prompt_sha256": None, "n_unparsed": 0}
    model = provenance.model
    if model and provenance.model_revision:
        model = f"{model}@{provenance.model_revision}"
    return {"model": model, "prompt_sha256": provenance.prompt_sha256,
            "n_unparsed": provenance.n_unparsed}
