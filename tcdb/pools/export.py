"""Exporting a pool for assessors: blind (no run tags, ranks or scores), in TREC, JSONL or CSV.

The `pool_export` operation: the documents to judge as the result's items, written to `out`
when given (and the pool marked `exported`); without `out` nothing is written or changed, so
a read-only front end (the dashboard's download) shows the same export.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import field_validator
from sqlalchemy import text

from tcdb.errors import FieldError, some
from tcdb.operations import Database, operation, option
from tcdb.pools.build import word
from tcdb.pools.inspect import PoolRef, get_pool
from tcdb.pools.results import PoolExportItem, PoolExportResult
from tcdb.schema import Collection, Pool, PoolStatus, Snapshot
from tcdb.schema.base import utcnow
from tcdb.sorting import natural_key
from tcdb.vocabulary import PoolExportFormat, PoolExportOrder


class PoolExportRequest(PoolRef):
    """Which pool to export, in which format and order, and which part of it."""

    format: PoolExportFormat = option(help="csv or jsonl (query, description, text and an "
                                      "empty grade with its scale), or trec (a qrels "
                                      "template: `topic 0 docid`, the grade to append).")
    out: Path | None = option(None, help="File to write (.gz to compress); without it nothing "
                              "is written and the pool stays as it is.")
    order: PoolExportOrder = option(PoolExportOrder.docid,
                                    help="Documents per topic by id, or shuffled.")
    seed: int | None = option(None, help="Seed of the shuffle.")
    budget: int | None = option(
        None, help="Only the first N documents of a budgeted pool's order (in total, or per "
        "topic if the pool's budget is).")
    overlap: int | None = option(
        None, help="Only N documents per topic, drawn with the seed: the overlap a second "
        "assessor judges too (`tcdb report agreement`).")
    round: int | None = option(
        None, help="Only the documents this round added (`pool next-round`).")

    @field_validator("format", mode="before")
    @classmethod
    def _format(cls, value: Any) -> PoolExportFormat:
        return word(PoolExportFormat, value)

    @field_validator("order", mode="before")
    @classmethod
    def _order(cls, value: Any) -> PoolExportOrder:
        return word(PoolExportOrder, value)

    @field_validator("budget", "overlap")
    @classmethod
    def _at_least_one(cls, value: int | None, info: Any) -> int | None:
        if value is not None and value < 1:
            raise ValueError(f"{info.field_name} must be at least 1 (got {value})")
        return value


@operation("pool_export", command="pool export", writes=True)
def pool_export(request: PoolExportRequest, db: Database) -> PoolExportResult:
    """Export the pool blind for assessors (no run tags, ranks or scores).

    `docid` order sorts by (topic, document id); `shuffle` keeps topics in order and shuffles
    the documents of each topic with `seed` (chosen and reported when not given), so the file
    order says nothing about rank either way. JSONL and CSV carry the query, description and
    document text; a snapshot ingested without text cannot give them, and the documents
    lacking text are named. `budget` cuts a budgeted pool's stored order (`tcdb.pools.budgeted`)
    at fewer documents: per topic if the pool's budget is, else round robin over the topics.
    `overlap` writes only N documents per topic drawn at random with `seed`: the overlap a
    second assessor (or an LLM judge) judges too, for `tcdb report agreement`. `round`
    writes only the documents that round added (`tcdb.pools.rounds`).
    """
    from tcdb.collections.assessor_forms.formats import PoolItem, _blind_order, grade_scale
    from tcdb.collections.files.opening import check_output

    fmt, order, out = request.format.value, request.order.value, request.out
    if out is not None:
        check_output(out)  # before any work: a directory, a missing folder, no permission
    with db.session() as session:
        pool = get_pool(session, request.name, request.collection, request.snapshot)
        conn = session.connection()
        needs_text = fmt != "trec"
        sql = text(
            "SELECT st.external_id, st.query, st.description, sd.external_id, "
            + ("c.text " if needs_text else "NULL ")
            + "FROM pool_entry pe "
            "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
            "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = pe.document_id "
            + ("JOIN content c ON c.id = sd.content_id " if needs_text else "")
            + "WHERE pe.pool_id = :p"
            + (f" AND pe.round = {int(request.round)}" if request.round is not None else ""))
        rows = conn.execute(sql, {"s": pool.snapshot_id, "p": pool.id}).tuples().all()
        if request.round is not None and not rows:
            raise FieldError("round", f"pool {request.name!r} has no round {request.round}")
        if request.budget is not None:
            rows = _within_budget(conn, pool, rows, request.budget)
        used_seed = None
        if order == "shuffle" or request.overlap is not None:
            used_seed = (request.seed if request.seed is not None
                         else random.SystemRandom().randrange(2**31))
        if request.overlap is not None:
            rows = _overlap(rows, request.overlap, used_seed)
        if needs_text:
            _check_text(session, pool, rows)
        shuffle = used_seed if order == "shuffle" else None
        # texts as an assessor reads them: without the blank lines around them
        n_trimmed = sum(1 for *_, body in rows if body and body != without_blank_lines(body))
        items = _blind_order([PoolItem(t, q, desc, d, without_blank_lines(body or ""))
                              for t, q, desc, d, body in rows], shuffle)
        collection = session.get(Collection, session.get(Snapshot, pool.snapshot_id)
                                 .collection_id)  # type: ignore[union-attr]
        grades = (None if collection is None or collection.grade_min is None
                  or collection.grade_max is None
                  else (collection.grade_min, collection.grade_max))
        status = pool.status
        if out is not None:
            _write(out, fmt, items, shuffle, grades)
            status = PoolStatus.exported if pool.status == PoolStatus.open else pool.status
            pool.status = status
            pool.exported_at = pool.exported_at or utcnow()
            session.add(pool)
        return PoolExportResult(
            name=request.name, format=fmt, out=str(out) if out is not None else None,
            n_documents=len(items), n_topics=len({i.topic_id for i in items}), order=order,
            n_texts_trimmed=n_trimmed if needs_text else 0,
            grade_scale=grade_scale(grades),
            seed=used_seed, status=status.value,
            items=[PoolExportItem(topic_id=i.topic_id, doc_id=i.doc_id,
                                  query=i.query if needs_text else None,
                                  description=i.description if needs_text else None,
                                  text=i.text if needs_text else None) for i in items])


_BLANK_EDGES = re.compile(r"\A(?:[ \t\r\f\v]*\n)+|(?:\n[ \t\r\f\v]*)+\Z")


def without_blank_lines(text: str) -> str:
    """`text` without the blank lines before its first line and after its last (TREC texts
    come as `\n\ntext\n\n`); the text's own lines, indentation included, stay as they are."""
    return _BLANK_EDGES.sub("", text)


def _check_text(session: Any, pool: Pool, rows: Sequence[Any]) -> None:
    """Every pooled document has its text, or a FieldError of `format` names those lacking."""
    missing = sorted((t, d) for t, _, _, d, body in rows if body is None)
    if missing:
        snap = session.get(Snapshot, pool.snapshot_id)
        label = snap.label if snap else "?"
        raise FieldError("format", f"{len(missing)} pooled document(s) of snapshot {label!r} "
                         f"have no text (ingested with --no-text?): "
                         f"{some(d for _, d in missing)}; export in "
                         "the trec format, or re-ingest with text")


def _overlap(rows: Sequence[Any], n: int, seed: int | None) -> list[Any]:
    """N rows per topic drawn with `seed` (all of a smaller topic), in (topic, doc) order."""
    by_topic: dict[str, list[Any]] = {}
    for row in sorted(rows, key=lambda r: (natural_key(r[0]), r[3])):
        by_topic.setdefault(row[0], []).append(row)
    rng = random.Random(seed)
    chosen = [row for topic_rows in by_topic.values()
              for row in rng.sample(topic_rows, min(n, len(topic_rows)))]
    return sorted(chosen, key=lambda r: (natural_key(r[0]), r[3]))


def _within_budget(conn: Any, pool: Pool, rows: Sequence[Any], budget: int) -> list[Any]:
    """The rows of the first `budget` documents of the pool's stored judging order."""
    from tcdb.pools.strategies import cut

    if pool.budget is None:
        raise FieldError("budget", f"pool {pool.name!r} keeps no judging order (a depth-k "
                         "pool): build it with a budget to cut it at a budget")
    positions = conn.execute(text(
        "SELECT st.external_id, sd.external_id, pe.position FROM pool_entry pe "
        "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
        "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = pe.document_id "
        "WHERE pe.pool_id = :p"), {"s": pool.snapshot_id, "p": pool.id}).tuples().all()
    orders: dict[str, list[tuple[int, str]]] = {}
    for topic, doc, position in positions:
        orders.setdefault(topic, []).append((position, doc))
    ordered = {t: [d for _, d in sorted(v)] for t, v in orders.items()}
    chosen = cut(ordered, budget, pool.budget_per_topic, sorted(ordered, key=natural_key))
    keep = {(t, d) for t, docs in chosen.items() for d in docs}
    return [row for row in rows if (row[0], row[3]) in keep]


def _write(out: Path, fmt: str, items: list[Any], seed: int | None,
           grades: tuple[int, int] | None) -> int:
    from tcdb.collections.assessor_forms import formats as af

    writer = {"trec": af.write_pool_trec, "jsonl": af.write_pool_jsonl,
              "csv": af.write_pool_csv}[fmt]
    return writer(out, items, seed, grades)
