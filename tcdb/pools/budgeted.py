"""Budgeted pools: a strategy's judging order per topic, cut at a budget, written with each
entry's place in the order so that an export can be cut again at any smaller budget.

Unlike a depth-k pool (one INSERT … SELECT), the order is computed in Python from the runs'
rankings (`tcdb.pools.rankings`), since adaptive strategies decide one document at a time.
Documents a base qrels set judged are left out of the order (a remainder pool) but teach the
adaptive strategies what they know; documents judged in this pool's earlier rounds do too.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
from sqlalchemy import Connection

from tcdb.pools.rankings import Rankings
from tcdb.pools.sql import ENTRY_COLUMNS
from tcdb.pools.strategies import Strategy, TopicRanking, cut
from tcdb.storage.bulk import bulk_insert

Grades = Mapping[str, Mapping[str, int]]  # topic → document → grade (external ids)


def strategy_orders(strategy: Strategy, rankings: Rankings, known: Grades,
                    exclude: Grades, limit: int | None) -> dict[str, list[str]]:
    """Each topic's judging order without the `exclude`d documents; the judge knows `known`
    (and `exclude`) and nothing else (None: not judged yet)."""
    orders = {}
    for topic, ranking in rankings.topics.items():
        grades = {**exclude.get(topic, {}), **known.get(topic, {})}
        left_out = exclude.get(topic, {})
        extra = len(left_out) if limit is not None else 0
        order = strategy.order(ranking, grades.get, None if limit is None else limit + extra)
        orders[topic] = [d for d in order if d not in left_out]
    return orders


def _rank_stats(ranking: TopicRanking) -> pd.DataFrame:
    """Per document of the topic: best rank in any run, and how many runs retrieved it."""
    runs = [r for r in ranking.runs if len(r.docs)]
    frame = pd.DataFrame({"doc": pd.concat([pd.Series(r.docs) for r in runs]).to_numpy(),
                          "rank": pd.concat([pd.Series(r.ranks) for r in runs]).to_numpy()})
    return frame.groupby("doc")["rank"].agg(["min", "size"])


def write_entries(conn: Connection, pool_id: int, rankings: Rankings,
                  orders: dict[str, list[str]], budget: int, per_topic: bool,
                  round_number: int = 1, first_position: Mapping[str, int] | None = None
                  ) -> int:
    """Insert the budget's cut of `orders` as pool entries; positions per topic start at
    `first_position[topic]` (1 by default). Returns the number written."""
    chosen = cut(orders, budget, per_topic, rankings.topic_order())
    rows = []
    for topic, docs in chosen.items():
        if not docs:
            continue
        stats = _rank_stats(rankings.topics[topic]).loc[docs]
        start = (first_position or {}).get(topic, 1)
        topic_id = rankings.topic_ids[topic]
        for i, (doc, best, n) in enumerate(zip(docs, stats["min"].tolist(),
                                               stats["size"].tolist(), strict=True)):
            rows.append((pool_id, topic_id, rankings.doc_ids[doc], int(best), int(n),
                         start + i, round_number))
    rows.sort(key=lambda r: (r[1], r[2]))  # the key's order: the B-tree grows at its edge
    return bulk_insert(conn, "pool_entry", [*ENTRY_COLUMNS, "position", "round"], rows)
