"""Judging in rounds: an adaptive strategy's next batch, built from what the rounds before
taught it.

Round 1 is the first batch of a budgeted pool (`pool build --budget N --batch B`). Once its
judgments are imported, `next_round` replays the strategy with every grade known so far (the
pool's pooled set, and the base set a remainder pool leaves out), and adds the first `batch`
documents of the new order that are not pooled yet — per topic if the pool's budget is —
never past the budget. Entries record their round; judgments imported on them record it as
their iteration, so the pooled set says which round judged what.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from tcdb.errors import ConflictError, FieldError
from tcdb.operations import Database, operation, option
from tcdb.pools.inspect import PoolRef, get_pool, topic_sizes
from tcdb.pools.results import PoolRoundResult


class PoolNextRoundRequest(PoolRef):
    """Which budgeted pool gets its next round, and how large."""

    batch: int = option(help="Documents to add (per topic if the pool's budget is).")


def _grades(conn: Any, qrels_id: int | None) -> dict[str, dict[str, int]]:
    if qrels_id is None:
        return {}
    from tcdb.queries.qrels import qrels_of

    return qrels_of(conn, qrels_id)


@operation("pool_next_round", command="pool next-round", writes=True)
def pool_next_round(request: PoolNextRoundRequest, db: Database) -> PoolRoundResult:
    """Add a budgeted pool's next round: the strategy replayed on every judgment so far.

    At most `batch` documents (see the module), never past the budget.
    """
    from tcdb.pools.budgeted import strategy_orders, write_entries
    from tcdb.pools.rankings import load_rankings
    from tcdb.pools.strategies import make_strategy
    from tcdb.schema import PoolStatus

    name, batch = request.name, request.batch
    if batch < 1:
        raise FieldError("batch", f"batch must be at least 1 (got {batch})")
    with db.write_session(f"pool\x00{name}") as session:
        pool = get_pool(session, name, request.collection, request.snapshot)
        if pool.budget is None or pool.parameters is None:
            raise FieldError("name", f"pool {name!r} is a depth-k pool: rounds need a "
                             "budgeted one (`pool build --strategy … --budget N --batch B`)")
        conn = session.connection()
        known = _grades(conn, pool.pooled_qrels_id)
        unjudged = int(conn.execute(text(
            "SELECT COUNT(*) FROM pool_entry pe JOIN snapshot_topic st ON st.snapshot_id = "
            ":s AND st.topic_id = pe.topic_id WHERE pe.pool_id = :p AND NOT EXISTS (SELECT 1 "
            "FROM judgment j WHERE j.qrels_set_id = :q AND j.topic_id = pe.topic_id AND "
            "j.document_id = pe.document_id)"),
            {"s": pool.snapshot_id, "p": pool.id, "q": pool.pooled_qrels_id or -1}
        ).scalar_one())
        if unjudged:
            raise ConflictError(f"pool {name!r} has {unjudged:,} document(s) not judged yet: "
                                "import their judgments before the next round")
        last = int(conn.execute(text("SELECT COALESCE(MAX(round), 0) FROM pool_entry "
                                     "WHERE pool_id = :p"), {"p": pool.id}).scalar_one())
        runs = session.execute(text("SELECT r.id, r.n_unresolved FROM run r JOIN pool_run pr "
                                    "ON pr.run_id = r.id WHERE pr.pool_id = :p ORDER BY r.tag"),
                               {"p": pool.id}).tuples().all()
        rankings = load_rankings(conn, pool.snapshot_id, [r for r, _ in runs], pool.tie_order,
                                 any(n for _, n in runs), pool.depth)
        exclude = _grades(conn, pool.base_qrels_id)
        pooled: dict[str, list[tuple[int, str]]] = {}
        for topic, doc, position in conn.execute(text(
                "SELECT st.external_id, sd.external_id, pe.position FROM pool_entry pe "
                "JOIN snapshot_topic st ON st.snapshot_id = :s AND st.topic_id = pe.topic_id "
                "JOIN snapshot_document sd ON sd.snapshot_id = :s "
                "AND sd.document_id = pe.document_id WHERE pe.pool_id = :p"),
                {"s": pool.snapshot_id, "p": pool.id}).tuples():
            pooled.setdefault(topic, []).append((position or 0, doc))
        strategy = make_strategy(pool.parameters)
        sizes = {t: len(v) for t, v in pooled.items()}
        orders = strategy_orders(strategy, rankings, known, exclude, None)
        fresh = {t: [d for d in o if d not in {doc for _, doc in pooled.get(t, [])}]
                 for t, o in orders.items()}
        if pool.budget_per_topic:
            fresh = {t: o[:max(0, pool.budget - sizes.get(t, 0))] for t, o in fresh.items()}
            spent = all(sizes.get(t, 0) >= pool.budget for t in orders)
            size = 0 if spent else batch
        else:
            size = min(batch, pool.budget - pool.n_documents)
        if size <= 0 or not any(fresh.values()):
            raise ConflictError(f"pool {name!r} has spent its budget of {pool.budget:,}"
                                if size <= 0 else f"pool {name!r}: the runs have no document "
                                "left to pool")
        start = {t: max((p for p, _ in v), default=0) + 1 for t, v in pooled.items()}
        added = write_entries(conn, pool.pk, rankings, fresh, size, pool.budget_per_topic,
                              last + 1, start)
        pool.n_documents += added
        pool.status = PoolStatus.open
        session.add(pool)
        session.flush()
        return PoolRoundResult(name=pool.name, round=last + 1, n_added=added,
                               n_documents=pool.n_documents, budget=pool.budget,
                               budget_per_topic=pool.budget_per_topic,
                               n_topics=len(topic_sizes(conn, pool.pk)),
                               status=pool.status.value)
