"""Judgments on a pool: assessors' batches into a `pooled` qrels set, and the `expanded` set.

Judgments come back in batches and accumulate in one qrels set of kind `pooled` tied to the
pool (`pool.pooled_qrels_id`); the pool is `judged` once every pooled document has a grade.
`--expand` derives an `expanded` set = base ∪ pooled, where `--prefer` decides conflicts.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import field_validator, model_validator
from sqlalchemy import Connection, func, select, text
from sqlmodel import Session, col

from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError
from tcdb.operations import Database, Name, Request, argument, operation, option
from tcdb.pools.build import word
from tcdb.pools.inspect import PoolRef, count_judged, get_pool, pool_collection, pool_snapshot
from tcdb.pools.results import ExpandResult, GradeConflict, ImportJudgmentsResult
from tcdb.schema import (
    Collection,
    Judgment,
    Pool,
    PoolEntry,
    PoolStatus,
    QrelsKind,
    QrelsSet,
    Snapshot,
)
from tcdb.sorting import natural_key
from tcdb.storage.bulk import bulk_insert
from tcdb.vocabulary import JudgeKind, JudgmentFormat, Prefer

if TYPE_CHECKING:
    from tcdb.judging.qrels import JudgmentRows

JUDGMENT_COLUMNS = ["qrels_set_id", "topic_id", "document_id", "grade"]


class PoolImportJudgmentsRequest(Request):
    """A batch of assessors' judgments on a pool, and optionally the expanded set to write."""

    name: Name = argument(help="Pool name.")
    file: Path = argument(help="Judgments: TREC qrels or CSV topic_id,doc_id,grade.")
    collection: Name | None = pool_collection()
    snapshot: Name | None = pool_snapshot()
    format: JudgmentFormat = option(JudgmentFormat.trec, help="trec (qrels), csv or jsonl: "
                                    "the exported forms, with their grades filled in.")
    assessor: Name | None = option(None, help="Who judged.")
    judge_kind: JudgeKind | None = option(
        None, help="Who judged: human, llm, … (default: unknown). Batches by different "
        "kinds make the pooled set's kind other.")
    expand: Name | None = option(None, help="Also write BASE_QRELS ∪ pooled as a new set.")
    expanded_name: Name | None = option(None, help="Name of the expanded qrels set.")
    prefer: Prefer = option(Prefer.base, help="Which grade wins when base and pooled "
                            "disagree.")
    pooled_name: Name | None = option(
        None, help="Name of the pooled qrels set (first batch; default: the pool's name).")

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> JudgmentFormat:
        return word(JudgmentFormat, value)

    @field_validator("prefer", mode="before")
    @classmethod
    def _prefer(cls, value: Any) -> Prefer:
        return word(Prefer, value)

    @model_validator(mode="after")
    def _expand_with_a_name(self) -> Self:
        if (self.expand is None) != (self.expanded_name is None):
            raise FieldError("expand/expanded_name", "the qrels set to expand and the name of "
                             "the expanded set go together")
        return self


@operation("pool_import_judgments", command="pool import-judgments", writes=True)
def pool_import_judgments(request: PoolImportJudgmentsRequest, db: Database
                          ) -> ImportJudgmentsResult:
    """Add a batch of judgments to the pool's pooled qrels set (all or nothing).

    Every judgment must name a document of the pool for that topic and a grade on the
    collection's scale (when the collection has none: the range of the pool's base qrels). A
    document judged in an earlier batch may come again with the same grade (skipped), not with
    another. The first batch creates the pooled set (named `pooled_name`, default the pool's
    name); scores computed on it are dropped when a later batch extends it. With `expand`
    (a qrels set of the snapshot) an `expanded` set base ∪ pooled is written as
    `expanded_name`; `prefer` decides conflicting grades.
    """
    from tcdb.collections.assessor_forms.formats import read_judgments

    name, path, fmt = request.name, request.file, request.format.value
    expand, expanded_name = request.expand, request.expanded_name
    collection, snapshot = request.collection, request.snapshot
    path = Path(path)
    started = time.perf_counter()
    # One batch into a pool at a time: each checks against the batches stored before it.
    waiting = f"waiting for another process importing judgments into pool {name!r} to finish …"
    with db.write_session(f"judgments\x00{name}", waiting=waiting) as session:
        # an unknown pool fails before the file is read
        pool = get_pool(session, name, collection, snapshot)
        if not path.exists():
            raise NotFoundError(f"judgments file not found: {path}")
        records = read_judgments(path, fmt)
        snap = session.get(Snapshot, pool.snapshot_id)
        assert snap is not None and snap.id is not None
        conn = session.connection()
        topics = _external_topics(conn, snap.id)
        docs = _external_docs(conn, snap.id, pool.pk)
        pooled_pairs = set(conn.execute(select(col(PoolEntry.topic_id),
                                               col(PoolEntry.document_id)).where(
            col(PoolEntry.pool_id) == pool.id)).tuples().all())
        low, high, scale_from = _grade_scale(session, pool, snap, expand)
        earlier: dict[tuple[int, int], int] = {}
        if pool.pooled_qrels_id is not None:
            earlier = {(t, d): g for t, d, g in conn.execute(
                select(col(Judgment.topic_id), col(Judgment.document_id),
                       col(Judgment.grade)).where(
                    col(Judgment.qrels_set_id) == pool.pooled_qrels_id)).tuples()}
        new: dict[tuple[int, int], int] = {}
        repeated = 0
        for record in records:
            where = record.file or str(path)
            topic_id = topics.get(record.topic_id)
            document_id = docs.get(record.doc_id)
            if topic_id is None or document_id is None or (topic_id, document_id) \
                    not in pooled_pairs:
                raise InputError(where, record.line,
                                 f"document {record.doc_id!r} is not in pool {name!r} for topic "
                                 f"{record.topic_id!r}")
            if (low is not None and record.grade < low) or (
                    high is not None and record.grade > high):
                raise InputError(where, record.line,
                                 f"grade {record.grade} is outside the scale "
                                 f"[{'' if low is None else low}, {'' if high is None else high}] "
                                 f"({scale_from})")
            key = (topic_id, document_id)
            if key in earlier:
                if earlier[key] != record.grade:
                    raise InputError(where, record.line,
                                     f"document {record.doc_id!r} for topic {record.topic_id!r} "
                                     f"was judged {earlier[key]} in an earlier batch, not "
                                     f"{record.grade}")
                repeated += 1
                continue
            new[key] = record.grade
        pooled = _add_batch(session, pool, snap, new, path, request.assessor,
                            request.pooled_name or name, request.judge_kind)
        pool.pooled_qrels_id = pooled.id
        n_judged = count_judged(conn, pool)
        status = PoolStatus.judged if n_judged == pool.n_documents else pool.status
        pool.status = status
        session.add(pool)
        session.flush()
        expanded = None
        if expand is not None and expanded_name is not None:
            expanded = expand_qrels(session, snap, expand, pooled, expanded_name,
                                    request.prefer.value, same_is_unchanged=True)
        return ImportJudgmentsResult(
            name=name, file=str(path), pooled_qrels=pooled.name, n_new=len(new),
            n_repeated=repeated, n_judged=n_judged, n_documents=pool.n_documents,
            judged_fraction=n_judged / pool.n_documents if pool.n_documents else 0.0,
            status=status.value, expanded=expanded, seconds=time.perf_counter() - started)


def _external_topics(conn: Connection, snapshot_id: int) -> dict[str, int]:
    from tcdb.queries import topic_ids

    return topic_ids(conn, snapshot_id)


def _external_docs(conn: Connection, snapshot_id: int, pool_id: int) -> dict[str, int]:
    """External id → document id, for the pool's documents only (not the whole snapshot)."""
    sql = text("SELECT DISTINCT sd.external_id, sd.document_id FROM pool_entry pe "
               "JOIN snapshot_document sd ON sd.snapshot_id = :s "
               "AND sd.document_id = pe.document_id WHERE pe.pool_id = :p")
    return dict(conn.execute(sql, {"s": snapshot_id, "p": pool_id}).tuples().all())


def _grade_scale(session: Session, pool: Pool, snap: Snapshot, expand: str | None
                 ) -> tuple[int | None, int | None, str]:
    """The grades judgments may take: the collection's scale, else the base qrels' range."""
    collection = session.get(Collection, snap.collection_id)
    assert collection is not None
    if collection.grade_min is not None or collection.grade_max is not None:
        return collection.grade_min, collection.grade_max, \
            f"the scale of collection {collection.name!r}"
    base_id = pool.base_qrels_id
    if base_id is None and expand is not None:
        from tcdb.judging.qrels import get_qrels_set

        base_id = get_qrels_set(session, snap, expand).id
    if base_id is None:
        return None, None, "no scale"
    low, high = session.execute(select(func.min(col(Judgment.grade)),
                                       func.max(col(Judgment.grade))).where(
        col(Judgment.qrels_set_id) == base_id)).one()
    base = session.get(QrelsSet, base_id)
    return low, high, f"the grades of qrels {base.name if base else base_id!r}"


def _add_batch(session: Session, pool: Pool, snap: Snapshot, new: dict[tuple[int, int], int],
               path: Path, assessor: str | None, pooled_name: str,
               judge_kind: JudgeKind | None = None) -> QrelsSet:
    """Create the pooled set with the first batch, or append a later batch to it."""
    from tcdb.storage.housekeeping import delete_qrels_scores

    if pool.pooled_qrels_id is None:
        clash = session.execute(select(col(QrelsSet.id)).where(
            col(QrelsSet.snapshot_id) == snap.id, col(QrelsSet.name) == pooled_name)).first()
        if clash is not None:
            raise ConflictError(f"snapshot {snap.label!r} already has a qrels set "
                                f"{pooled_name!r}: name the pooled set with --pooled-name")
        pooled = QrelsSet(snapshot_id=snap.pk, name=pooled_name, kind=QrelsKind.pooled,
                          parent_id=pool.base_qrels_id, assessor=assessor,
                          method=f"pool {pool.name}", source=str(path.resolve()),
                          description=f"judgments on pool {pool.name!r} (depth {pool.depth})",
                          n_judgments=0, judge_kind=judge_kind or JudgeKind.unknown)
        session.add(pooled)
        session.flush()
    else:
        found = session.get(QrelsSet, pool.pooled_qrels_id)
        assert found is not None
        pooled = found
        if new:
            delete_qrels_scores(session, pooled.pk)  # the set grows: old scores are stale
            if assessor and pooled.assessor and assessor not in pooled.assessor.split(", "):
                pooled.assessor = f"{pooled.assessor}, {assessor}"[:200]
            elif assessor and not pooled.assessor:
                pooled.assessor = assessor
            if judge_kind is not None and judge_kind != pooled.judge_kind:
                # a batch by another kind of judge: the set is theirs together
                pooled.judge_kind = (judge_kind if pooled.judge_kind == JudgeKind.unknown
                                     and pooled.n_judgments == 0 else JudgeKind.other)
    # A budgeted pool's entries know their round: the judgment keeps it as its iteration.
    rounds = {(t, d): str(r) for t, d, r in session.execute(
        select(col(PoolEntry.topic_id), col(PoolEntry.document_id), col(PoolEntry.round))
        .where(col(PoolEntry.pool_id) == pool.id, col(PoolEntry.round).is_not(None))).tuples()}
    bulk_insert(session, "judgment", [*JUDGMENT_COLUMNS, "iteration"],
                ((pooled.id, t, d, g, rounds.get((t, d))) for (t, d), g in sorted(new.items())))
    pooled.n_judgments += len(new)
    pooled.judgments_checksum = None  # the set grew: the next report's lineage hashes it again
    session.add(pooled)
    session.flush()
    return pooled


def expand_qrels(
    session: Session,
    snap: Snapshot,
    base_name: str,
    pooled: QrelsSet,
    name: str,
    prefer: str = "base",
    *,
    same_is_unchanged: bool = False,
) -> ExpandResult:
    """Write the `expanded` set base ∪ pooled; report conflicting grades.

    Both sets are stored and validated, so their judgments (with their iterations, and those of
    documents no snapshot holds) are copied as they are. A set of that name is a conflict (sets
    are immutable) — unless `same_is_unchanged` and it already is this very union: then it is
    reported `unchanged`, so that the same judgment import again (after a crash that came after
    its commit, say) completes.
    """
    from tcdb.judging.qrels import create_qrels_set, get_qrels_set, stored_judgments
    from tcdb.queries import document_names

    base = get_qrels_set(session, snap, base_name)
    merged = stored_judgments(session, base.pk)
    conflicts: list[tuple[int, int | str, int, int]] = []
    n_added = 0
    for key, (grade, iteration) in stored_judgments(session, pooled.pk).items():
        if key not in merged:
            merged[key] = (grade, iteration)
            n_added += 1
        elif merged[key][0] != grade:
            conflicts.append((*key, merged[key][0], grade))
            if prefer == "new":
                merged[key] = (grade, iteration)
    expanded = _same_union(session, snap, name, base, pooled, merged) \
        if same_is_unchanged else None
    status = "unchanged" if expanded is not None else "created"
    if expanded is None:
        expanded = create_qrels_set(session, snap, name, QrelsKind.expanded, merged,
                                    parent_id=base.pk, second_parent_id=pooled.pk,
                                    method="expand",
                                    description=f"{base.name} ∪ {pooled.name} (prefer {prefer})")
    conn = session.connection()
    ext_topic = {t: ext for ext, t in _external_topics(conn, snap.pk).items()}
    names = document_names(conn, snap.pk, [d for _, d, _, _ in conflicts if isinstance(d, int)])
    shown = [GradeConflict(topic=ext_topic[t], doc=names[d] if isinstance(d, int) else d,
                           base=old, new=new) for t, d, old, new in conflicts]
    shown.sort(key=lambda c: (natural_key(c.topic), c.doc))
    return ExpandResult(name=expanded.name, status=status, base=base.name, pooled=pooled.name,
                        n_judgments=expanded.n_judgments, n_added=n_added, prefer=prefer,
                        n_conflicts=len(shown), conflicts=shown)


def _same_union(session: Session, snap: Snapshot, name: str, base: QrelsSet, pooled: QrelsSet,
                merged: JudgmentRows) -> QrelsSet | None:
    """The stored set `name` when it is the expanded set of these parents with these very
    judgments, else None."""
    from tcdb.judging.qrels import stored_judgments

    found = session.execute(select(QrelsSet).where(
        col(QrelsSet.snapshot_id) == snap.pk, col(QrelsSet.name) == name)).scalar_one_or_none()
    if found is None or (found.kind, found.parent_id, found.second_parent_id) != (
            QrelsKind.expanded, base.pk, pooled.pk):
        return None
    return found if stored_judgments(session, found.pk) == merged else None


class PoolExpandRequest(PoolRef):
    """Which pool's judgments to add to which base set, under which name."""

    base: Name = option(help="The qrels set to expand.")
    expanded_name: Name = option(flag="--name", help="Name of the expanded qrels set.")
    prefer: Prefer = option(Prefer.base, help="Which grade wins when base and pooled "
                            "disagree.")

    @field_validator("prefer", mode="before")
    @classmethod
    def _prefer(cls, value: Any) -> Prefer:
        return word(Prefer, value)


@operation("pool_expand", command="pool expand", writes=True)
def pool_expand(request: PoolExpandRequest, db: Database) -> ExpandResult:
    """Write base ∪ the pool's judgments (all batches so far) as an expanded qrels set."""
    with db.session() as session:
        pool = get_pool(session, request.name, request.collection, request.snapshot)
        if pool.pooled_qrels_id is None:
            raise NotFoundError(f"pool {request.name!r} has no judgments yet: import them "
                                "with `tcdb pool import-judgments`")
        snap = session.get(Snapshot, pool.snapshot_id)
        pooled = session.get(QrelsSet, pool.pooled_qrels_id)
        assert snap is not None and pooled is not None
        return expand_qrels(session, snap, request.base, pooled, request.expanded_name,
                            request.prefer.value)
