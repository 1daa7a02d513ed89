"""Building a pool: choose the runs, compute their union of top-k per topic in the database.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, func, select, text
from sqlmodel import Session, col

from tcdb.catalog.collections import get_snapshot
from tcdb.errors import ConflictError, OptionError
from tcdb.judging.qrels import get_qrels_set
from tcdb.pools.inspect import find_pool, pool_run_ids, size_stats, topic_sizes
from tcdb.pools.results import PoolBuildReport
from tcdb.pools.sql import create_bounds, drop_bounds, pool_sql, ranked_sql, runs_list
from tcdb.pools.strategies import Strategy, describe, make_strategy
from tcdb.runs import get_runs
from tcdb.schema import Pool, PoolEntry, QrelsSet, Run, Snapshot
from tcdb.storage.db import bulk_insert, is_postgres, session_scope
from tcdb.vocabulary import TieOrder, one_of


def _choose_runs(
    session: Session,
    snap: Snapshot,
    runs: Sequence[str] | None,
    contributed: bool,
    not_contributed: bool,
    all_runs: bool,
) -> tuple[list[Run], str]:
    """The runs a pool is built over, and how they were chosen (for the report)."""
    modes = [bool(runs), contributed, not_contributed, all_runs]
    if sum(modes) != 1:
        raise OptionError("--run/--contributed/--not-contributed/--all-runs",
                          "choose the runs with exactly one of them")
    if runs:
        return get_runs(session, snap, list(runs)), "runs"
    every = get_runs(session, snap)
    if all_runs:
        chosen, how, option = every, "all runs", "--all-runs"
    elif contributed:
        chosen, how, option = [r for r in every if r.contributed], "contributed runs", \
            "--contributed"
    else:
        chosen, how, option = [r for r in every if not r.contributed], \
            "runs that did not contribute", "--not-contributed"
    if not chosen:
        raise OptionError(option, f"snapshot {snap.label!r} has no {how} to pool "
                          f"({len(every)} run(s) imported)")
    return chosen, how


def build_pool(
    collection: str,
    snapshot: str,
    name: str,
    depth: int | None,
    *,
    runs: Sequence[str] | None = None,
    contributed: bool = False,
    not_contributed: bool = False,
    all_runs: bool = False,
    exclude_judged: str | None = None,
    tie_order: TieOrder | str = TieOrder.trec_eval,
    max_per_topic: int | None = None,
    description: str | None = None,
    strategy: str | None = None,
    budget: int | None = None,
    per_topic: bool = False,
    batch: int | None = None,
) -> PoolBuildReport:
    """Build a depth-k pool in the database (see the module docstring); idempotent by name.

    With a `budget`, the pool is the first `budget` documents (in total, or `per_topic`) of a
    `strategy`'s judging order (`tcdb.pools.strategies`; default `depth`), stored with each
    entry's place in the order (`tcdb.pools.budgeted`); `depth` then only limits how deep the
    runs are read (default: whole runs). With a `batch`, only the first `batch` documents are
    pooled now, as round 1; `tcdb.pools.rounds` adds the next rounds up to the budget.

    The same name with the same parameters and runs again is a no-op ("unchanged"); with
    different ones it is a ConflictError, since assessors may already hold the first pool.
    """
    started = time.perf_counter()
    made = _check_strategy(strategy, budget, per_topic, depth, max_per_topic)
    if batch is not None and (budget is None or batch < 1):
        raise OptionError("--batch", "--batch N (≥ 1) goes with --budget: the first round")
    if depth is not None and depth < 1:
        raise OptionError("--depth", f"depth must be at least 1 (got {depth})")
    tie_order = one_of(TieOrder, tie_order, "--tie-order")
    if max_per_topic is not None and max_per_topic < 1:
        raise OptionError("--max-per-topic", f"max per topic must be at least 1 (got "
                          f"{max_per_topic})")
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        assert snap.id is not None
        chosen, how = _choose_runs(session, snap, runs, contributed, not_contributed, all_runs)
        base = get_qrels_set(session, snap, exclude_judged) if exclude_judged else None
        run_ids = sorted(r.pk for r in chosen)
        existing = find_pool(session, name, snap.pk)
        if existing is not None:
            wanted = describe(made) if made is not None else None
            same = (existing.snapshot_id == snap.id
                    and (existing.depth == depth or (made is not None and depth is None))
                    and existing.parameters == wanted and existing.budget == budget
                    and existing.budget_per_topic == per_topic
                    and existing.tie_order == tie_order
                    and existing.max_per_topic == max_per_topic
                    and existing.base_qrels_id == (base.id if base else None)
                    and pool_run_ids(session, existing.pk) == run_ids)
            if not same:
                raise ConflictError(f"snapshot {snapshot!r} already has a pool {name!r} with other "
                                    "parameters or runs (see `tcdb pool show`); choose another "
                                    "name")
            return _build_report(session, existing, collection, snapshot, chosen, how, 0,
                                 "unchanged", started)
        pool = Pool(name=name, snapshot_id=snap.id, depth=depth or 0, tie_order=tie_order,
                    max_per_topic=max_per_topic, base_qrels_id=base.id if base else None,
                    description=description)
        session.add(pool)
        session.flush()
        assert pool.id is not None
        conn = session.connection()
        bulk_insert(conn, "pool_run", ["pool_id", "run_id"], [(pool.id, r) for r in run_ids])
        if made is not None:
            assert budget is not None
            _build_budgeted(session, pool, made, budget, per_topic, chosen, base, depth,
                            batch)
            return _build_report(session, pool, collection, snapshot, chosen, how, 0,
                                 "built", started)
        assert depth is not None
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
        runs_sql = runs_list(run_ids)
        if tie_order == "file-rank":
            create_bounds(conn, snap.id, run_ids, depth, with_unresolved)
        conn.execute(text(pool_sql(tie_order, postgres, with_unresolved, base is not None,
                                   max_per_topic, runs_sql)), params)
        skipped = 0
        if with_unresolved:
            skipped = _count_unresolved(conn, snap.id, tie_order, depth, runs_sql)
        drop_bounds(conn)
        pool.n_documents = conn.execute(select(func.count()).select_from(PoolEntry).where(
            col(PoolEntry.pool_id) == pool.id)).scalar_one()
        session.add(pool)
        session.flush()
        return _build_report(session, pool, collection, snapshot, chosen, how, skipped, "built",
                             started)


def _check_strategy(strategy: str | None, budget: int | None, per_topic: bool,
                    depth: int | None, max_per_topic: int | None) -> Strategy | None:
    """The strategy of a budgeted pool (None for a plain depth-k pool), its options checked."""
    if budget is None:
        if strategy is not None or per_topic:
            raise OptionError("--budget", "--strategy and --per-topic need --budget N (how "
                              "many documents to judge)")
        if depth is None:
            raise OptionError("--depth", "give --depth K, or --budget N with a --strategy")
        return None
    if budget < 1:
        raise OptionError("--budget", f"budget must be at least 1 (got {budget})")
    if max_per_topic is not None:
        raise OptionError("--max-per-topic", "a budgeted pool is cut by --budget (with "
                          "--per-topic for a cap per topic), not --max-per-topic")
    return make_strategy(strategy or "depth")


def _build_budgeted(session: Session, pool: Pool, strategy: Strategy, budget: int,
                    per_topic: bool, chosen: list[Run], base: QrelsSet | None,
                    depth: int | None, batch: int | None = None) -> None:
    """Write a budgeted pool's entries (the first `batch` of them when given: round 1) and
    record its strategy (`tcdb.pools.budgeted`)."""
    from tcdb.pools.budgeted import strategy_orders, write_entries
    from tcdb.pools.rankings import load_rankings
    from tcdb.queries.qrels import qrels_of

    conn = session.connection()
    rankings = load_rankings(conn, pool.snapshot_id, [r.pk for r in chosen], pool.tie_order,
                             any(r.n_unresolved for r in chosen), depth)
    exclude = qrels_of(conn, base.pk) if base is not None else {}
    first = budget if batch is None else min(batch, budget)
    orders = strategy_orders(strategy, rankings, {}, exclude, first)
    pool.n_documents = write_entries(conn, pool.pk, rankings, orders, first, per_topic)
    pool.method = strategy.name
    pool.parameters = describe(strategy)
    pool.budget = budget
    pool.budget_per_topic = per_topic
    pool.depth = depth or max((int(r.ranks[-1]) for t in rankings.topics.values()
                               for r in t.runs if len(r.ranks)), default=0)
    session.add(pool)
    session.flush()


def _count_unresolved(conn: Connection, snapshot_id: int, tie_order: str, depth: int,
                      runs: str) -> int:
    """Distinct (topic, document) pairs in the top k that the snapshot does not have."""
    if tie_order == "trec_eval":
        sql = ("SELECT COUNT(*) FROM (SELECT DISTINCT topic_id, external_doc_id FROM "
               f"run_entry_unresolved WHERE run_id IN ({runs}) AND eval_rank <= :depth) d")
        return int(conn.execute(text(sql), {"depth": depth}).scalar_one())
    ranked = ranked_sql(tie_order, is_postgres(conn), True, runs)
    sql = (f"SELECT COUNT(*) FROM (SELECT DISTINCT r.topic_id, r.ext FROM ({ranked}) r "
           "WHERE r.rn <= :depth AND r.document_id IS NULL) d")
    return int(conn.execute(text(sql), {"snapshot_id": snapshot_id, "depth": depth})
               .scalar_one())


def _build_report(session: Session, pool: Pool, collection: str, snapshot: str,
                  chosen: list[Run], how: str, skipped: int, status: str,
                  started: float) -> PoolBuildReport:
    sizes = topic_sizes(session.connection(), pool.pk)
    base = session.get(QrelsSet, pool.base_qrels_id) if pool.base_qrels_id else None
    return {
        "name": pool.name, "collection": collection, "snapshot": snapshot,
        "depth": pool.depth, "tie_order": pool.tie_order, "max_per_topic": pool.max_per_topic,
        "runs": [r.tag for r in chosen], "chosen": how,
        "exclude_judged": base.name if base else None,
        "strategy": pool.parameters or pool.method, "budget": pool.budget,
        "budget_per_topic": pool.budget_per_topic, "n_documents": pool.n_documents,
        "n_topics": len(sizes), "size": size_stats(sizes),
        "n_unresolved_skipped": skipped, "status": status,
        "seconds": time.perf_counter() - started,
    }
