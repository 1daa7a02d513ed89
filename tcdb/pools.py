"""Assessment pools: build a depth-k pool over chosen runs, export it blind, import judgments.

A pool is computed inside the database: one `INSERT INTO pool_entry … SELECT` takes each chosen
run's top `depth` per topic — a range of `run_entry`'s key, which holds trec_eval's order as
`eval_rank` — and groups them per (topic, document) with the best rank and the number of runs
that retrieved the document in their top `depth`. Runs are never loaded into Python.

Tie orders (how equal scores are broken when ranking a run):

* `trec_eval` — score descending, then external document id descending (byte order), as
  trec_eval and ir_measures sort a run; the default, so a pool matches what evaluation sees.
* `docid-asc` — score descending, then document id ascending: trectools' `TrecRun` order, so
  pools equal `TrecPoolMaker().make_pool(..., strategy="topX")`.
* `file-rank` — the rank column of the run file (then the trec_eval order for equal ranks).

Entries the snapshot does not have (`run_entry_unresolved`) keep their place in the ranking —
a run's top k is what it submitted — but cannot be judged, so they are left out of the pool and
counted in the report. `max_per_topic` caps each topic at N documents, keeping those with the
best rank first, then those more runs retrieved, then by document id.

Judgments on a pool are imported by `tcdb.judgments`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, func, select, text
from sqlmodel import Session

from tcdb.db import bulk_insert, is_postgres, session_scope
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.schema import (
    Collection,
    Pool,
    PoolEntry,
    PoolRun,
    PoolStatus,
    QrelsSet,
    Run,
    Snapshot,
)
from tcdb.schema.base import utcnow

TIE_ORDERS = ("trec_eval", "docid-asc", "file-rank")
EXPORT_FORMATS = ("trec", "jsonl", "csv")
EXPORT_ORDERS = ("docid", "shuffle")
ENTRY_COLUMNS = ["pool_id", "topic_id", "document_id", "best_rank", "n_runs"]


# --------------------------------------------------------------------------------------- build


BOUNDS = "tcdb_pool_bounds"


def _runs_list(run_ids: Sequence[int]) -> str:
    """Run ids as an SQL list literal (integers only), so the planner sees the exact runs."""
    return ", ".join(str(int(r)) for r in run_ids) or "NULL"


def _create_bounds(conn: Connection, snapshot_id: int, run_ids: Sequence[int], depth: int,
                   with_unresolved: bool) -> None:
    """Per (chosen run, snapshot topic): how many entries have a file rank ≤ k (file-rank order).

    When a topic has ≥ k entries of rank ≤ k, its k-th smallest rank is ≤ k, so only those
    entries can reach the top k: about k per topic reach the window's sort instead of the whole
    run, and the result is exact whatever the rank column says (`n < k`: the whole topic goes).
    A temporary table (per connection, dropped after use) so the planner knows its size.
    """
    postgres = is_postgres(conn)
    runs = _runs_list(run_ids)
    k = int(depth)
    union = (f" UNION ALL SELECT run_id, topic_id FROM run_entry_unresolved "
             f"WHERE run_id IN ({runs}) AND rank <= {k}") if with_unresolved else ""
    query = (
        "SELECT r.id AS run_id, st.topic_id, COALESCE(x.n, 0) AS n "
        "FROM run r CROSS JOIN snapshot_topic st LEFT JOIN ("
        "SELECT run_id, topic_id, COUNT(*) AS n FROM ("
        f"SELECT run_id, topic_id FROM run_entry WHERE run_id IN ({runs}) "
        f"AND rank <= {k}{union}) y GROUP BY run_id, topic_id"
        ") x ON x.run_id = r.id AND x.topic_id = st.topic_id "
        f"WHERE r.id IN ({runs}) AND st.snapshot_id = {int(snapshot_id)}"
    )
    conn.execute(text(f"DROP TABLE IF EXISTS {BOUNDS}"))
    on_commit = " ON COMMIT DROP" if postgres else ""
    conn.execute(text(f"CREATE TEMPORARY TABLE {BOUNDS}{on_commit} AS {query}"))
    conn.execute(text(f"ANALYZE {BOUNDS}"))


def _drop_bounds(conn: Connection) -> None:
    conn.execute(text(f"DROP TABLE IF EXISTS {BOUNDS}"))


def _top_sql(table: str, columns: str, condition: str, postgres: bool, runs: str) -> str:
    """The chosen runs' entries in `table` that meet `condition` (on `e.eval_rank`), read per
    (run, snapshot topic) as a range of the primary key (run_id, topic_id, eval_rank) rather
    than by scanning every entry of each run."""
    if postgres:
        return (f"SELECT x.* FROM run r CROSS JOIN snapshot_topic st CROSS JOIN LATERAL "
                f"(SELECT {columns} FROM {table} e WHERE e.run_id = r.id "
                f"AND e.topic_id = st.topic_id AND {condition} OFFSET 0) x "
                f"WHERE r.id IN ({runs}) AND st.snapshot_id = :snapshot_id")
    # SQLite joins in the order written (CROSS JOIN), using the key for run and topic.
    return (f"SELECT {columns} FROM run r CROSS JOIN snapshot_topic st CROSS JOIN {table} e "
            f"WHERE r.id IN ({runs}) AND st.snapshot_id = :snapshot_id AND e.run_id = r.id "
            f"AND e.topic_id = st.topic_id AND {condition}")


def _docid_asc_sql(postgres: bool, with_unresolved: bool, with_ext: bool, runs: str) -> str:
    """Positions under `docid-asc` from the stored trec_eval order, without sorting strings.

    Both orders sort by score descending and differ only within a group of equal scores, which
    trec_eval ranks by document id descending and trectools ascending: a group spanning eval
    ranks [a, b] is reversed, its entry at eval rank e going to a + b - e. So the top k under
    docid-asc are the top k by eval rank, plus the rest of the tie group where the k-th and the
    (k+1)-th entries tie ("straddle"); entries the snapshot lacks take their places as
    everywhere. Every step reads per (run, topic) ranges of the key, so the plan does not hinge
    on statistics of a table that was bulk-loaded a moment ago.
    """
    tables = [("run_entry", "e.document_id", "CAST(NULL AS TEXT)")]
    if with_unresolved:
        tables.append(("run_entry_unresolved", "CAST(NULL AS INTEGER)", "e.external_doc_id"))

    def columns(document: str, ext: str) -> str:
        return (f"e.run_id, e.topic_id, {document} AS document_id, {ext} AS ext, "
                "e.eval_rank, e.score")

    def rest_of_tie(table: str, document: str, ext: str) -> str:
        condition = ("e.run_id = s.run_id AND e.topic_id = s.topic_id AND e.eval_rank > :depth "
                     "AND e.score = s.score")
        if postgres:
            return (f"SELECT x.* FROM straddle s CROSS JOIN LATERAL (SELECT "
                    f"{columns(document, ext)} FROM {table} e WHERE {condition} OFFSET 0) x")
        return (f"SELECT {columns(document, ext)} FROM straddle s CROSS JOIN {table} e "
                f"WHERE {condition}")

    top = " UNION ALL ".join(_top_sql(table, columns(document, ext), "e.eval_rank <= :depth",
                                      postgres, runs) for table, document, ext in tables)
    boundary = " UNION ALL ".join(_top_sql(table, "e.run_id, e.topic_id, e.score",
                                           "e.eval_rank IN (:depth, :depth + 1)", postgres, runs)
                                  for table, _, _ in tables)
    rest = " UNION ALL ".join(rest_of_tie(*table) for table in tables)
    return (
        "WITH straddle AS (SELECT run_id, topic_id, MIN(score) AS score "
        f"FROM ({boundary}) b GROUP BY run_id, topic_id "
        "HAVING COUNT(*) = 2 AND MIN(score) = MAX(score)), "
        f"candidates AS ({top} UNION ALL {rest}), "
        "ranked AS (SELECT c.run_id, c.topic_id, c.document_id, c.ext, "
        "MIN(c.eval_rank) OVER w + MAX(c.eval_rank) OVER w - c.eval_rank AS rn "
        "FROM candidates c WINDOW w AS (PARTITION BY c.run_id, c.topic_id, c.score)) "
        + _with_external_ids("ranked", with_ext)
    )


def _with_external_ids(source: str, with_ext: bool) -> str:
    """SELECT run_id, topic_id, document_id, ext, rn FROM `source`, where `ext` is the
    external id of every entry if `with_ext`, else only of the entries the snapshot lacks."""
    if not with_ext:
        return f"SELECT run_id, topic_id, document_id, ext, rn FROM {source} r"
    return ("SELECT r.run_id, r.topic_id, r.document_id, COALESCE(sd.external_id, r.ext) AS ext, "
            f"r.rn FROM {source} r LEFT JOIN snapshot_document sd "
            "ON sd.snapshot_id = :snapshot_id AND sd.document_id = r.document_id")


def _ranked_sql(tie_order: str, postgres: bool, with_unresolved: bool, runs: str,
                with_ext: bool = False) -> str:
    """The candidate entries of the chosen runs with their position under the tie order (`rn`)
    and `ext`, their external id (`with_ext`; else only for entries the snapshot lacks).

    trec_eval's order is stored (`run_entry.eval_rank`): its top k is a range of the primary
    key, and entries the snapshot lacks already hold their places. `docid-asc` follows from it
    (`_docid_asc_sql`). The file-rank order needs the bounds table (`_create_bounds`), whose
    rows are exactly the chosen runs' topics; positions ≤ k are exact, entries below the bound
    never get one. The candidates are materialised first so the join for external ids sees ~k
    rows per topic, not every entry.
    """
    if tie_order == "trec_eval":
        top = _top_sql("run_entry", "e.run_id, e.topic_id, e.document_id, "
                       "CAST(NULL AS TEXT) AS ext, e.eval_rank AS rn",
                       "e.eval_rank <= :depth", postgres, runs)
        return _with_external_ids(f"({top})", with_ext)
    if tie_order == "docid-asc":
        return _docid_asc_sql(postgres, with_unresolved, with_ext, runs)
    bound = (f"JOIN {BOUNDS} b ON b.run_id = e.run_id AND b.topic_id = e.topic_id "
             "WHERE (b.n < :depth OR e.rank <= :depth)")
    candidates = (f"SELECT e.run_id, e.topic_id, e.document_id, e.rank, e.score "
                  f"FROM run_entry e {bound}")
    materialized = "MATERIALIZED " if postgres else ""
    ext = 'ext COLLATE "C"' if postgres else "ext COLLATE BINARY"  # byte order, as strcmp
    entries = (
        "SELECT c.run_id, c.topic_id, c.document_id, c.rank, c.score, sd.external_id AS ext "
        "FROM candidates c JOIN snapshot_document sd ON sd.snapshot_id = :snapshot_id "
        "AND sd.document_id = c.document_id"
    )
    if with_unresolved:
        entries += (
            " UNION ALL SELECT e.run_id, e.topic_id, NULL, e.rank, e.score, e.external_doc_id "
            f"FROM run_entry_unresolved e {bound}"
        )
    return (
        f"WITH candidates AS {materialized}({candidates}) "
        "SELECT run_id, topic_id, document_id, ext, ROW_NUMBER() OVER (PARTITION BY run_id, "
        f"topic_id ORDER BY rank ASC, score DESC, {ext} DESC) AS rn "
        f"FROM ({entries}) u"
    )


def _pool_sql(tie_order: str, postgres: bool, with_unresolved: bool, exclude: bool,
              max_per_topic: int | None, runs: str) -> str:
    """`INSERT INTO pool_entry … SELECT`: the union of the chosen runs' top-k per topic."""
    ranked = _ranked_sql(tie_order, postgres, with_unresolved, runs,
                         with_ext=max_per_topic is not None)
    where = "r.rn <= :depth AND r.document_id IS NOT NULL"
    if exclude:
        where += (" AND NOT EXISTS (SELECT 1 FROM judgment j WHERE j.qrels_set_id = :base_id "
                  "AND j.topic_id = r.topic_id AND j.document_id = r.document_id)")
    grouped = (
        "SELECT r.topic_id, r.document_id, MIN(r.rn) AS best_rank, COUNT(*) AS n_runs"
        f"{', MIN(r.ext) AS ext' if max_per_topic is not None else ''} "
        f"FROM ({ranked}) r WHERE {where} GROUP BY r.topic_id, r.document_id"
    )
    # Rows go in primary-key order: the B-tree then grows at its right edge.
    if max_per_topic is None:
        select_sql = ("SELECT :pool_id, topic_id, document_id, best_rank, n_runs "
                      f"FROM ({grouped}) g ORDER BY topic_id, document_id")
    else:
        ext = 'ext COLLATE "C"' if postgres else "ext"
        select_sql = (
            "SELECT :pool_id, topic_id, document_id, best_rank, n_runs FROM ("
            "SELECT g.*, ROW_NUMBER() OVER (PARTITION BY topic_id ORDER BY best_rank ASC, "
            f"n_runs DESC, {ext} ASC) AS k FROM ({grouped}) g) c WHERE c.k <= :max_per_topic "
            "ORDER BY topic_id, document_id"
        )
    return f"INSERT INTO pool_entry ({', '.join(ENTRY_COLUMNS)}) {select_sql}"


def _choose_runs(
    session: Session,
    snap: Snapshot,
    runs: Sequence[str] | None,
    contributed: bool,
    not_contributed: bool,
    all_runs: bool,
) -> tuple[list[Run], str]:
    """The runs a pool is built over, and how they were chosen (for the report)."""
    from tcdb.runs import get_runs

    modes = [bool(runs), contributed, not_contributed, all_runs]
    if sum(modes) != 1:
        raise InputError(None, None, "choose the runs with exactly one of --run TAG …, "
                         "--contributed, --not-contributed or --all-runs")
    if runs:
        return get_runs(session, snap, list(runs)), "runs"
    every = get_runs(session, snap)
    if all_runs:
        chosen, how = every, "all runs"
    elif contributed:
        chosen, how = [r for r in every if r.contributed], "contributed runs"
    else:
        chosen, how = [r for r in every if not r.contributed], "runs that did not contribute"
    if not chosen:
        raise InputError(None, None, f"snapshot {snap.label!r} has no {how} to pool "
                         f"({len(every)} run(s) imported)")
    return chosen, how


def build_pool(
    collection: str,
    snapshot: str,
    name: str,
    depth: int,
    *,
    runs: Sequence[str] | None = None,
    contributed: bool = False,
    not_contributed: bool = False,
    all_runs: bool = False,
    exclude_judged: str | None = None,
    tie_order: str = "trec_eval",
    max_per_topic: int | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """Build a depth-k pool in the database (see the module docstring); idempotent by name.

    The same name with the same parameters and runs again is a no-op ("unchanged"); with
    different ones it is a ConflictError, since assessors may already hold the first pool.
    """
    from tcdb.catalog import get_snapshot
    from tcdb.qrels import get_qrels_set

    started = time.perf_counter()
    if depth < 1:
        raise InputError("--depth", None, f"depth must be at least 1 (got {depth})")
    if tie_order not in TIE_ORDERS:
        raise InputError("--tie-order", None, f"{tie_order!r} is not one of "
                         f"{', '.join(TIE_ORDERS)}")
    if max_per_topic is not None and max_per_topic < 1:
        raise InputError("--max-per-topic", None,
                         f"max per topic must be at least 1 (got {max_per_topic})")
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        assert snap.id is not None
        chosen, how = _choose_runs(session, snap, runs, contributed, not_contributed, all_runs)
        base = get_qrels_set(session, snap, exclude_judged) if exclude_judged else None
        run_ids = sorted(r.id or 0 for r in chosen)
        existing = _find_pool(session, name)
        if existing is not None:
            same = (existing.snapshot_id == snap.id and existing.depth == depth
                    and existing.tie_order == tie_order
                    and existing.max_per_topic == max_per_topic
                    and existing.base_qrels_id == (base.id if base else None)
                    and _pool_run_ids(session, existing.id or 0) == run_ids)
            if not same:
                raise ConflictError(f"a pool {name!r} already exists with other parameters or "
                                    "runs (see `tcdb pool show`); choose another name")
            report = _build_report(session, existing, collection, snapshot, chosen, how, 0)
            report["status"] = "unchanged"
            report["seconds"] = time.perf_counter() - started
            return report
        pool = Pool(name=name, snapshot_id=snap.id, depth=depth, tie_order=tie_order,
                    max_per_topic=max_per_topic, base_qrels_id=base.id if base else None,
                    description=description)
        session.add(pool)
        session.flush()
        assert pool.id is not None
        conn = session.connection()
        bulk_insert(conn, "pool_run", ["pool_id", "run_id"], [(pool.id, r) for r in run_ids])
        postgres = is_postgres(conn)
        if postgres:
            # The window sorts the candidate entries: keep that sort in memory.
            conn.execute(text("SET LOCAL work_mem = '256MB'"))
            conn.execute(text("SET LOCAL jit = off"))  # compiling costs more than it saves here
            # Grouping by sorting yields the rows in pool_entry's key order, which the INSERT
            # wants anyway; hashing then sorting again was ~20 % slower (bench/pools.py).
            conn.execute(text("SET LOCAL enable_hashagg = off"))
        with_unresolved = any(r.n_unresolved for r in chosen)
        params: dict[str, Any] = {"pool_id": pool.id, "snapshot_id": snap.id, "depth": depth}
        if base is not None:
            params["base_id"] = base.id
        if max_per_topic is not None:
            params["max_per_topic"] = max_per_topic
        runs_sql = _runs_list(run_ids)
        if tie_order == "file-rank":
            _create_bounds(conn, snap.id, run_ids, depth, with_unresolved)
        conn.execute(text(_pool_sql(tie_order, postgres, with_unresolved, base is not None,
                                    max_per_topic, runs_sql)), params)
        skipped = 0
        if with_unresolved:
            skipped = _count_unresolved(conn, snap.id, tie_order, depth, runs_sql)
        _drop_bounds(conn)
        pool.n_documents = conn.execute(select(func.count()).select_from(PoolEntry).where(
            PoolEntry.pool_id == pool.id)).scalar_one()
        session.add(pool)
        session.flush()
        report = _build_report(session, pool, collection, snapshot, chosen, how, skipped)
        report["status"] = "built"
        report["seconds"] = time.perf_counter() - started
        return report


def _count_unresolved(conn: Connection, snapshot_id: int, tie_order: str, depth: int,
                      runs: str) -> int:
    """Distinct (topic, document) pairs in the top k that the snapshot does not have."""
    if tie_order == "trec_eval":
        sql = ("SELECT COUNT(*) FROM (SELECT DISTINCT topic_id, external_doc_id FROM "
               f"run_entry_unresolved WHERE run_id IN ({runs}) AND eval_rank <= :depth) d")
        return int(conn.execute(text(sql), {"depth": depth}).scalar_one())
    ranked = _ranked_sql(tie_order, is_postgres(conn), True, runs)
    sql = (f"SELECT COUNT(*) FROM (SELECT DISTINCT r.topic_id, r.ext FROM ({ranked}) r "
           "WHERE r.rn <= :depth AND r.document_id IS NULL) d")
    return int(conn.execute(text(sql), {"snapshot_id": snapshot_id, "depth": depth})
               .scalar_one())


def _build_report(session: Session, pool: Pool, collection: str, snapshot: str,
                  chosen: list[Run], how: str, skipped: int) -> dict[str, Any]:
    sizes = _topic_sizes(session.connection(), pool.id or 0)
    base = session.get(QrelsSet, pool.base_qrels_id) if pool.base_qrels_id else None
    return {
        "name": pool.name, "collection": collection, "snapshot": snapshot,
        "depth": pool.depth, "tie_order": pool.tie_order, "max_per_topic": pool.max_per_topic,
        "runs": [r.tag for r in chosen], "chosen": how,
        "exclude_judged": base.name if base else None,
        "n_documents": pool.n_documents, "n_topics": len(sizes), "size": _size_stats(sizes),
        "n_unresolved_skipped": skipped,
    }


# ------------------------------------------------------------------------------ list and show


def _find_pool(session: Session, name: str) -> Pool | None:
    return session.execute(select(Pool).where(Pool.name == name)).scalar_one_or_none()


def get_pool(session: Session, name: str) -> Pool:
    """A pool by name; NotFoundError names the pools that exist."""
    pool = _find_pool(session, name)
    if pool is None:
        names = session.execute(select(Pool.name).order_by(Pool.name)).scalars().all()
        known = ", ".join(names) or "none built yet"
        raise NotFoundError(f"no pool {name!r} (known: {known})")
    return pool


def _pool_run_ids(session: Session, pool_id: int) -> list[int]:
    return sorted(session.execute(select(PoolRun.run_id).where(
        PoolRun.pool_id == pool_id)).scalars().all())


def _topic_sizes(conn: Connection, pool_id: int) -> dict[int, int]:
    rows = conn.execute(select(PoolEntry.topic_id, func.count()).where(
        PoolEntry.pool_id == pool_id).group_by(PoolEntry.topic_id))
    return dict(rows.tuples().all())


def _size_stats(sizes: dict[int, int]) -> dict[str, float | int]:
    values = list(sizes.values())
    if not values:
        return {"min": 0, "max": 0, "mean": 0.0, "total": 0}
    return {"min": min(values), "max": max(values), "mean": sum(values) / len(values),
            "total": sum(values)}


def _n_judged(conn: Connection, pool: Pool) -> int:
    """Pooled documents that have a grade in the pool's `pooled` qrels set."""
    if pool.pooled_qrels_id is None:
        return 0
    sql = text("SELECT COUNT(*) FROM pool_entry pe JOIN judgment j ON j.qrels_set_id = :q "
               "AND j.topic_id = pe.topic_id AND j.document_id = pe.document_id "
               "WHERE pe.pool_id = :p")
    return int(conn.execute(sql, {"q": pool.pooled_qrels_id, "p": pool.id}).scalar_one())


def list_pools(collection: str | None = None) -> list[dict[str, Any]]:
    """Every pool with its parameters, size per topic, status and judged fraction."""
    with session_scope() as session:
        query = (select(Pool)
                 .join(Snapshot, Snapshot.id == Pool.snapshot_id)
                 .join(Collection, Collection.id == Snapshot.collection_id)
                 .order_by(Collection.name, Snapshot.ordinal, Pool.name))
        if collection is not None:
            from tcdb.catalog import get_collection

            query = query.where(Collection.id == get_collection(session, collection).id)
        return [_pool_row(session, pool) for pool in session.execute(query).scalars().all()]


def show_pool(name: str) -> dict[str, Any]:
    """One pool in detail: per-topic sizes and judged counts, and each run's unique documents.

    A run's unique documents are those of the pool that no other chosen run retrieved in its
    top k — recomputed here with the same window as the build.
    """
    with session_scope() as session:
        pool = get_pool(session, name)
        conn = session.connection()
        summary = _pool_row(session, pool)
        topics = dict(conn.execute(text(
            "SELECT topic_id, external_id FROM snapshot_topic WHERE snapshot_id = :s"),
            {"s": pool.snapshot_id}).tuples().all())
        judged_sql = ("SELECT pe.topic_id, COUNT(*), COUNT(j.grade) FROM pool_entry pe "
                      "LEFT JOIN judgment j ON j.qrels_set_id = :q AND j.topic_id = pe.topic_id "
                      "AND j.document_id = pe.document_id WHERE pe.pool_id = :p "
                      "GROUP BY pe.topic_id")
        per_topic = [
            {"topic": topics.get(t, str(t)), "n_documents": int(n), "n_judged": int(j)}
            for t, n, j in conn.execute(text(judged_sql), {
                "q": pool.pooled_qrels_id or -1, "p": pool.id}).tuples().all()
        ]
        per_topic.sort(key=lambda row: _natural(row["topic"]))
        summary["per_topic"] = per_topic
        summary["runs"] = _unique_per_run(conn, pool)
        summary["description"] = pool.description
        return summary


def _pool_row(session: Session, pool: Pool) -> dict[str, Any]:
    """A pool's parameters, sizes, status and judged fraction, inside an open session."""
    snap = session.get(Snapshot, pool.snapshot_id)
    assert snap is not None
    coll = session.get(Collection, snap.collection_id)
    assert coll is not None
    conn = session.connection()
    sizes = _topic_sizes(conn, pool.id or 0)
    judged = _n_judged(conn, pool)
    names = dict(conn.execute(select(QrelsSet.id, QrelsSet.name).where(
        QrelsSet.snapshot_id == snap.id)).tuples().all())
    return {
        "name": pool.name, "collection": coll.name, "snapshot": snap.label, "depth": pool.depth,
        "tie_order": pool.tie_order, "max_per_topic": pool.max_per_topic,
        "exclude_judged": names.get(pool.base_qrels_id) if pool.base_qrels_id else None,
        "pooled_qrels": names.get(pool.pooled_qrels_id) if pool.pooled_qrels_id else None,
        "n_runs": len(_pool_run_ids(session, pool.id or 0)), "status": pool.status.value,
        "n_documents": pool.n_documents, "n_topics": len(sizes), "size": _size_stats(sizes),
        "n_judged": judged,
        "judged_fraction": judged / pool.n_documents if pool.n_documents else 0.0,
        "created_at": pool.created_at, "exported_at": pool.exported_at,
    }


def _natural(value: str) -> tuple[int, int | str]:
    """Numeric topic ids in numeric order, then the others."""
    return (0, int(value)) if value.isdigit() else (1, value)


def _unique_per_run(conn: Connection, pool: Pool) -> list[dict[str, Any]]:
    """Per chosen run: pooled documents in its top k, and those no other chosen run had."""
    runs = conn.execute(select(Run.id, Run.n_unresolved).join(
        PoolRun, PoolRun.run_id == Run.id).where(PoolRun.pool_id == pool.id)).tuples().all()
    run_ids = [r for r, _ in runs]
    with_unresolved = any(n for _, n in runs)
    if pool.tie_order == "file-rank":
        _create_bounds(conn, pool.snapshot_id, run_ids, pool.depth, with_unresolved)
    ranked = _ranked_sql(pool.tie_order, is_postgres(conn), with_unresolved,
                         _runs_list(run_ids))
    sql = (
        "SELECT r.run_id, COUNT(*), SUM(CASE WHEN pe.n_runs = 1 THEN 1 ELSE 0 END) "
        f"FROM ({ranked}) r JOIN pool_entry pe ON pe.pool_id = :pool_id "
        "AND pe.topic_id = r.topic_id AND pe.document_id = r.document_id "
        "WHERE r.rn <= :depth GROUP BY r.run_id"
    )
    counts = {run_id: (int(n), int(u or 0)) for run_id, n, u in conn.execute(text(sql), {
        "pool_id": pool.id, "snapshot_id": pool.snapshot_id, "depth": pool.depth}).tuples()}
    _drop_bounds(conn)
    tags = conn.execute(select(Run.id, Run.tag).join(PoolRun, PoolRun.run_id == Run.id).where(
        PoolRun.pool_id == pool.id).order_by(Run.tag)).tuples().all()
    return [{"tag": tag, "n_pooled": counts.get(run_id, (0, 0))[0],
             "unique": counts.get(run_id, (0, 0))[1]} for run_id, tag in tags]


def pool_documents(name: str) -> dict[str, set[str]]:
    """The pool as external ids: topic → the set of documents to judge (tests, notebooks)."""
    with session_scope() as session:
        pool = get_pool(session, name)
        sql = text(
            "SELECT st.external_id, sd.external_id FROM pool_entry pe "
            "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
            "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = pe.document_id "
            "WHERE pe.pool_id = :p")
        result: dict[str, set[str]] = {}
        for topic, doc in session.connection().execute(
                sql, {"s": pool.snapshot_id, "p": pool.id}).tuples():
            result.setdefault(topic, set()).add(doc)
        return result


# -------------------------------------------------------------------------------------- export


def export_pool(
    name: str,
    fmt: str,
    out: Path | str,
    *,
    order: str = "docid",
    seed: int | None = None,
) -> dict[str, Any]:
    """Write the pool for assessors, blind (no run tags, ranks or scores); mark it `exported`.

    `docid` order sorts by (topic, document id); `shuffle` keeps topics in order and shuffles
    the documents of each topic with `seed` (chosen and reported when not given), so the file
    order says nothing about rank either way. JSONL and CSV carry the query, description and
    document text; a snapshot ingested without text cannot give them, and the documents
    lacking text are named.
    """
    from tcdb.collections.assessor_formats import PoolItem

    if fmt not in EXPORT_FORMATS:
        raise InputError("--format", None, f"{fmt!r} is not one of {', '.join(EXPORT_FORMATS)}")
    if order not in EXPORT_ORDERS:
        raise InputError("--order", None, f"{order!r} is not one of {', '.join(EXPORT_ORDERS)}")
    out = Path(out)
    if not out.parent.is_dir():
        raise NotFoundError(f"folder {out.parent} does not exist")
    with session_scope() as session:
        pool = get_pool(session, name)
        conn = session.connection()
        needs_text = fmt != "trec"
        sql = text(
            "SELECT st.external_id, st.query, st.description, sd.external_id, "
            + ("c.text " if needs_text else "NULL ")
            + "FROM pool_entry pe "
            "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
            "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = pe.document_id "
            + ("JOIN content c ON c.id = sd.content_id " if needs_text else "")
            + "WHERE pe.pool_id = :p")
        rows = conn.execute(sql, {"s": pool.snapshot_id, "p": pool.id}).tuples().all()
        if needs_text:
            missing = sorted((t, d) for t, _, _, d, body in rows if body is None)
            if missing:
                shown = ", ".join(d for _, d in missing[:10])
                more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
                snap = session.get(Snapshot, pool.snapshot_id)
                label = snap.label if snap else "?"
                raise InputError(None, None, f"{len(missing)} pooled document(s) of snapshot "
                                 f"{label!r} have no text (ingested with --no-text?): "
                                 f"{shown}{more}; export --format trec, or re-ingest with text")
        items = [PoolItem(t, q, desc, d, body or "") for t, q, desc, d, body in rows]
        used_seed = None
        if order == "shuffle":
            used_seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        n = _write(out, fmt, items, used_seed)
        status = PoolStatus.exported if pool.status == PoolStatus.open else pool.status
        pool.status = status
        pool.exported_at = pool.exported_at or utcnow()
        session.add(pool)
        return {"name": name, "format": fmt, "out": str(out), "n_documents": n,
                "n_topics": len({i.topic_id for i in items}), "order": order,
                "seed": used_seed, "status": status.value}


def _write(out: Path, fmt: str, items: list[Any], seed: int | None) -> int:
    from tcdb.collections import assessor_formats as af

    writer = {"trec": af.write_pool_trec, "jsonl": af.write_pool_jsonl,
              "csv": af.write_pool_csv}[fmt]
    return writer(out, items, seed)


