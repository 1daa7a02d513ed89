"""Exporting a pool for assessors: blind (no run tags, ranks or scores), in TREC, JSONL or CSV.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import text

from tcdb.errors import NotFoundError, OptionError
from tcdb.pools.inspect import get_pool
from tcdb.pools.results import PoolExportReport
from tcdb.schema import Pool, PoolStatus, Snapshot
from tcdb.schema.base import utcnow
from tcdb.sorting import natural_key
from tcdb.storage.db import session_scope
from tcdb.vocabulary import PoolExportFormat, PoolExportOrder, one_of


def export_pool(
    name: str,
    fmt: str,
    out: Path | str,
    *,
    order: str = "docid",
    seed: int | None = None,
    collection: str | None = None,
    snapshot: str | None = None,
    budget: int | None = None,
    overlap: int | None = None,
    round_number: int | None = None,
) -> PoolExportReport:
    """Write the pool for assessors, blind (no run tags, ranks or scores); mark it `exported`.

    `docid` order sorts by (topic, document id); `shuffle` keeps topics in order and shuffles
    the documents of each topic with `seed` (chosen and reported when not given), so the file
    order says nothing about rank either way. JSONL and CSV carry the query, description and
    document text; a snapshot ingested without text cannot give them, and the documents
    lacking text are named. `budget` cuts a budgeted pool's stored order (`tcdb.pools.budgeted`)
    at fewer documents: per topic if the pool's budget is, else round robin over the topics.
    `overlap` writes only N documents per topic drawn at random with `seed`: the overlap a
    second assessor (or an LLM judge) judges too, for `tcdb report agreement`. `round_number`
    writes only the documents that round added (`tcdb.pools.rounds`).
    """
    from tcdb.collections.assessor_formats import PoolItem

    fmt = one_of(PoolExportFormat, fmt, "--format")
    order = one_of(PoolExportOrder, order, "--order")
    out = Path(out)
    if not out.parent.is_dir():
        raise NotFoundError(f"folder {out.parent} does not exist")
    with session_scope() as session:
        pool = get_pool(session, name, collection, snapshot)
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
            + (f" AND pe.round = {int(round_number)}" if round_number is not None else ""))
        rows = conn.execute(sql, {"s": pool.snapshot_id, "p": pool.id}).tuples().all()
        if round_number is not None and not rows:
            raise OptionError("--round", f"pool {name!r} has no round {round_number}")
        if budget is not None:
            rows = _within_budget(conn, pool, rows, budget)
        used_seed = None
        if order == "shuffle" or overlap is not None:
            used_seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        if overlap is not None:
            rows = _overlap(rows, overlap, used_seed)
        if needs_text:
            missing = sorted((t, d) for t, _, _, d, body in rows if body is None)
            if missing:
                shown = ", ".join(d for _, d in missing[:10])
                more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
                snap = session.get(Snapshot, pool.snapshot_id)
                label = snap.label if snap else "?"
                raise OptionError("--format", f"{len(missing)} pooled document(s) of snapshot "
                                  f"{label!r} have no text (ingested with --no-text?): "
                                  f"{shown}{more}; export --format trec, or re-ingest with text")
        items = [PoolItem(t, q, desc, d, body or "") for t, q, desc, d, body in rows]
        n = _write(out, fmt, items, used_seed if order == "shuffle" else None)
        status = PoolStatus.exported if pool.status == PoolStatus.open else pool.status
        pool.status = status
        pool.exported_at = pool.exported_at or utcnow()
        session.add(pool)
        return {"name": name, "format": fmt, "out": str(out), "n_documents": n,
                "n_topics": len({i.topic_id for i in items}), "order": order,
                "seed": used_seed, "status": status.value}


def _overlap(rows: Sequence[Any], n: int, seed: int | None) -> list[Any]:
    """N rows per topic drawn with `seed` (all of a smaller topic), in (topic, doc) order."""
    if n < 1:
        raise OptionError("--overlap", f"overlap must be at least 1 (got {n})")
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

    if budget < 1:
        raise OptionError("--budget", f"budget must be at least 1 (got {budget})")
    if pool.budget is None:
        raise OptionError("--budget", f"pool {pool.name!r} keeps no judging order (a depth-k "
                          "pool): build it with --budget to cut it at a budget")
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


def _write(out: Path, fmt: str, items: list[Any], seed: int | None) -> int:
    from tcdb.collections import assessor_formats as af

    writer = {"trec": af.write_pool_trec, "jsonl": af.write_pool_jsonl,
              "csv": af.write_pool_csv}[fmt]
    return writer(out, items, seed)
