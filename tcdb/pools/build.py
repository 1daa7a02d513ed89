"""Building a pool: choose the runs, compute their union of top-k per topic in the database.

The `pool_build` operation (`tcdb pool build`, `tcdb.api.pool_build`, `TASKS["pool_build"]`,
the `build-pool` flow): a depth-k pool, or with a budget the first N documents of a pooling
strategy's judging order, optionally only its first batch (round 1).
"""

from __future__ import annotations

import time
from typing import Any, Self

from pydantic import field_validator, model_validator
from sqlalchemy import Connection, func, select, text
from sqlmodel import Session, col

from tcdb.catalog.collections import get_snapshot
from tcdb.errors import ConflictError, FieldError
from tcdb.judging.qrels import get_qrels_set
from tcdb.operations import Database, Name, Names, Request, argument, operation, option
from tcdb.pools.inspect import find_pool, pool_run_ids, size_stats, topic_sizes
from tcdb.pools.results import PoolBuildResult
from tcdb.pools.sql import create_bounds, drop_bounds, pool_sql, ranked_sql, runs_list
from tcdb.pools.strategies import Strategy, describe, make_strategy
from tcdb.runs import get_runs
from tcdb.schema import Pool, PoolEntry, QrelsSet, Run, Snapshot
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.db import is_postgres
from tcdb.vocabulary import TieOrder

RUN_CHOICE = "runs/contributed/not_contributed/all_runs"


def word(kind: type[Any], value: Any) -> Any:
    """`value` as a member of the enum `kind`; a ValueError naming the choices (the field's
    validator turns it into a FieldError)."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(member.value for member in kind)
        raise ValueError(f"{value!r} is not one of {choices}") from None


def strategy_of(spec: str) -> Strategy:
    """A strategy from its spec; a bad spec is a FieldError of `strategy`."""
    return make_strategy(spec, "strategy")


class PoolBuildRequest(Request):
    """Which runs of which snapshot to pool, how deep or within which budget."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    name: Name = argument(help="Name of the new pool.")
    depth: int | None = option(
        None, short="-k", help="Top K documents of each run per topic (with a budget: read "
        "runs only this deep; default whole runs).")
    runs: Names | None = option(None, flag="--run", help="A run tag to pool (repeatable).")
    contributed: bool = option(False, help="Pool the runs that fed the official pools.")
    not_contributed: bool = option(False, help="Pool the runs that did not contribute.")
    all_runs: bool = option(False, help="Pool every run of the snapshot.")
    exclude_judged: Name | None = option(
        None, help="Leave out what this qrels set judged (remainder pool).")
    tie_order: TieOrder = option(
        TieOrder.trec_eval, help="Rank by score then doc id descending (trec_eval), score "
        "then doc id ascending (docid-asc, trectools), or the file's rank column (file-rank).")
    max_per_topic: int | None = option(
        None, help="Cap each topic at N documents: best rank first, then more runs, then doc "
        "id.")
    description: str | None = option(None, help="Free text.")
    strategy: str | None = option(
        None, help="With a budget: the judging order, NAME or NAME:key=value,… (depth, rrf, "
        "rbp, mtf, maxmean; default depth).")
    budget: int | None = option(
        None, help="At most N documents, the first N of the strategy's order (kept, so an "
        "export can be cut at any smaller budget).")
    per_topic: bool = option(False, help="The budget is per topic (default: in total).")
    batch: int | None = option(
        None, help="Pool only the first N now (round 1); `pool next-round` adds the next "
        "rounds, learning from their judgments, up to the budget.")

    @field_validator("tie_order", mode="before")
    @classmethod
    def _tie_order(cls, value: Any) -> TieOrder:
        return word(TieOrder, value)

    @field_validator("depth", "max_per_topic", "budget")
    @classmethod
    def _at_least_one(cls, value: int | None, info: Any) -> int | None:
        if value is not None and value < 1:
            what = info.field_name.replace("_", " ")
            raise ValueError(f"{what} must be at least 1 (got {value})")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if sum([bool(self.runs), self.contributed, self.not_contributed, self.all_runs]) != 1:
            raise FieldError(RUN_CHOICE, "choose the runs with exactly one of them")
        if self.budget is None:
            if self.strategy is not None or self.per_topic:
                raise FieldError("budget", "a strategy and a budget per topic need a budget "
                                 "(how many documents to judge)")
            if self.depth is None:
                raise FieldError("depth", "give a depth K, or a budget N with a strategy")
            if self.batch is not None:
                raise FieldError("batch", "a batch N goes with a budget: the first round")
            return self
        if self.max_per_topic is not None:
            raise FieldError("max_per_topic", "a budgeted pool is cut by its budget (per "
                             "topic for a cap per topic), not by a maximum per topic")
        if self.batch is not None and self.batch < 1:
            raise FieldError("batch", f"batch must be at least 1 (got {self.batch})")
        strategy_of(self.strategy or "depth")
        return self

    def made_strategy(self) -> Strategy | None:
        """The strategy of a budgeted pool; None for a depth-k pool."""
        return strategy_of(self.strategy or "depth") if self.budget is not None else None


def _choose_runs(session: Session, snap: Snapshot, request: PoolBuildRequest
                 ) -> tuple[list[Run], str]:
    """The runs a pool is built over, and how they were chosen (for the report)."""
    if request.runs:
        return get_runs(session, snap, list(request.runs)), "runs"
    every = get_runs(session, snap)
    if request.all_runs:
        chosen, how, field = every, "all runs", "all_runs"
    elif request.contributed:
        chosen, how, field = [r for r in every if r.contributed], "contributed runs", \
            "contributed"
    else:
        chosen, how, field = [r for r in every if not r.contributed], \
            "runs that did not contribute", "not_contributed"
    if not chosen:
        raise FieldError(field, f"snapshot {snap.label!r} has no {how} to pool "
                         f"({len(every)} run(s) imported)")
    return chosen, how


@operation("pool_build", command="pool build", writes=True)
def pool_build(request: PoolBuildRequest, db: Database) -> PoolBuildResult:
    """Build a depth-k pool over chosen runs, computed in the database; or, with a budget,
    the first N documents of a pooling strategy's order.

    With a `budget`, the pool is the first `budget` documents (in total, or `per_topic`) of a
    `strategy`'s judging order (`tcdb.pools.strategies`; default `depth`), stored with each
    entry's place in the order (`tcdb.pools.budgeted`); `depth` then only limits how deep the
    runs are read (default: whole runs). With a `batch`, only the first `batch` documents are
    pooled now, as round 1; `tcdb.pools.rounds` adds the next rounds up to the budget.

    Idempotent by name: the same parameters and runs again are "unchanged"; different ones a
    ConflictError, since assessors may already hold the first pool.
    """
    started = time.perf_counter()
    made = request.made_strategy()
    depth, tie_order = request.depth, request.tie_order.value
    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        assert snap.id is not None
        chosen, how = _choose_runs(session, snap, request)
        base = (get_qrels_set(session, snap, request.exclude_judged)
                if request.exclude_judged else None)
        run_ids = sorted(r.pk for r in chosen)
        existing = find_pool(session, request.name, snap.pk)
        if existing is not None:
            wanted = describe(made) if made is not None else None
            same = (existing.snapshot_id == snap.id
                    and (existing.depth == depth or (made is not None and depth is None))
                    and existing.parameters == wanted and existing.budget == request.budget
                    and existing.budget_per_topic == request.per_topic
                    and existing.tie_order == tie_order
                    and existing.max_per_topic == request.max_per_topic
                    and existing.base_qrels_id == (base.id if base else None)
                    and pool_run_ids(session, existing.pk) == run_ids)
            if not same:
                raise ConflictError(f"snapshot {request.snapshot!r} already has a pool "
                                    f"{request.name!r} with other parameters or runs (see "
                                    "`tcdb pool show`); choose another name")
            return _build_report(session, existing, request, chosen, how, 0, "unchanged",
                                 started)
        pool = Pool(name=request.name, snapshot_id=snap.id, depth=depth or 0,
                    tie_order=tie_order, max_per_topic=request.max_per_topic,
                    base_qrels_id=base.id if base else None, description=request.description)
        session.add(pool)
        session.flush()
        assert pool.id is not None
        conn = session.connection()
        bulk_insert(conn, "pool_run", ["pool_id", "run_id"], [(pool.id, r) for r in run_ids])
        if made is not None:
            assert request.budget is not None
            _build_budgeted(session, pool, made, request.budget, request.per_topic, chosen,
                            base, depth, request.batch)
            return _build_report(session, pool, request, chosen, how, 0, "built", started)
        assert depth is not None
        skipped = _build_depth_k(conn, pool, snap.pk, chosen, run_ids, base, request)
        pool.n_documents = conn.execute(select(func.count()).select_from(PoolEntry).where(
            col(PoolEntry.pool_id) == pool.id)).scalar_one()
        session.add(pool)
        session.flush()
        return _build_report(session, pool, request, chosen, how, skipped, "built", started)


def _build_depth_k(conn: Connection, pool: Pool, snapshot_id: int, chosen: list[Run],
                   run_ids: list[int], base: QrelsSet | None, request: PoolBuildRequest
                   ) -> int:
    """One INSERT … SELECT of the runs' top k; returns the unresolved documents left out."""
    depth, tie_order, max_per_topic = request.depth, request.tie_order.value, \
        request.max_per_topic
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
    params: dict[str, Any] = {"pool_id": pool.id, "snapshot_id": snapshot_id, "depth": depth}
    if base is not None:
        params["base_id"] = base.id
    if max_per_topic is not None:
        params["max_per_topic"] = max_per_topic
    runs_sql = runs_list(run_ids)
    if tie_order == "file-rank":
        create_bounds(conn, snapshot_id, run_ids, depth, with_unresolved)
    conn.execute(text(pool_sql(tie_order, postgres, with_unresolved, base is not None,
                               max_per_topic, runs_sql)), params)
    skipped = 0
    if with_unresolved:
        skipped = _count_unresolved(conn, snapshot_id, tie_order, depth, runs_sql)
    drop_bounds(conn)
    return skipped


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


def _build_report(session: Session, pool: Pool, request: PoolBuildRequest, chosen: list[Run],
                  how: str, skipped: int, status: str, started: float) -> PoolBuildResult:
    sizes = topic_sizes(session.connection(), pool.pk)
    base = session.get(QrelsSet, pool.base_qrels_id) if pool.base_qrels_id else None
    made = request.made_strategy()
    return PoolBuildResult(
        name=pool.name, collection=request.collection, snapshot=request.snapshot,
        depth=pool.depth, tie_order=pool.tie_order, max_per_topic=pool.max_per_topic,
        runs=[r.tag for r in chosen], chosen=how, exclude_judged=base.name if base else None,
        strategy=pool.parameters or pool.method, budget=pool.budget,
        budget_per_topic=pool.budget_per_topic, n_documents=pool.n_documents,
        n_topics=len(sizes), size=size_stats(sizes), n_unresolved_skipped=skipped,
        status=status, seconds=time.perf_counter() - started,
        adaptive_without_rounds=bool(made is not None and request.strategy
                                     and request.batch is None and made.adaptive))
