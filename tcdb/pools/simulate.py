"""`tcdb pool simulate`: read a snapshot's runs and a complete qrels set, and simulate pooling
strategies at several budgets (`tcdb.pools.simulation`). Reads only; stores nothing."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TypedDict

from tcdb.catalog.collections import get_snapshot
from tcdb.errors import OptionError
from tcdb.pools.simulation import SimulationRow, simulate_strategies
from tcdb.pools.strategies import make_strategy, strategy_names
from tcdb.storage.db import session_scope
from tcdb.vocabulary import TieOrder, one_of


class SimulationReport(TypedDict):
    collection: str
    snapshot: str
    qrels: str
    measure: str
    per_topic: bool
    tie_order: str
    depth: int | None
    n_runs: int
    n_groups: int
    n_topics: int
    relevant_total: int
    rows: list[SimulationRow]
    seconds: float


def parse_budgets(values: Sequence[int | str], option: str = "--budgets") -> list[int]:
    """Budgets from numbers or comma lists ("500,1000"), each ≥ 1, sorted, de-duplicated."""
    budgets: set[int] = set()
    for value in values:
        for part in str(value).split(","):
            part = part.strip().replace("_", "")
            if not part:
                continue
            if not part.isdigit() or int(part) < 1:
                raise OptionError(option, f"{part!r} is not a budget (a whole number ≥ 1)")
            budgets.add(int(part))
    if not budgets:
        raise OptionError(option, "give at least one budget")
    return sorted(budgets)


def simulate_pool(
    collection: str,
    snapshot: str,
    qrels: str,
    budgets: Sequence[int | str],
    *,
    strategies: Sequence[str] | None = None,
    per_topic: bool = False,
    runs: Sequence[str] | None = None,
    measure: str = "AP",
    tie_order: TieOrder | str = TieOrder.trec_eval,
    depth: int | None = None,
    leave_out: bool = True,
) -> SimulationReport:
    """For each strategy and budget: relevant found, τ-b and τ_AP against the ranking under the
    complete qrels `qrels`, and the leave-one-group-out τ (see `tcdb.pools.simulation`).

    `runs` (tags; default every run of the snapshot) are pooled and ranked; a run's group is
    its `group_name` (a run without one is a group of its own). `depth` limits how deep the
    strategies read each run (default: whole runs).
    """
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.pools.rankings import load_rankings
    from tcdb.queries.qrels import qrels_frame
    from tcdb.queries.runs import read_runs
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import qrels_dict
    from tcdb.scoring.measures import parse_measures

    started = time.perf_counter()
    chosen_budgets = parse_budgets(budgets)
    made = [make_strategy(s) for s in (strategies or strategy_names())]
    tie_order = one_of(TieOrder, tie_order, "--tie-order")
    if depth is not None and depth < 1:
        raise OptionError("--depth", f"depth must be at least 1 (got {depth})")
    (name,) = parse_measures([measure])
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        chosen = get_runs(session, snap, list(runs) if runs else None)
        if len(chosen) < 2:
            raise OptionError("--run", f"a simulation ranks systems: it needs at least two "
                              f"runs (snapshot {snapshot!r} has {len(chosen)} chosen)")
        conn = session.connection()
        run_ids = [r.pk for r in chosen]
        rankings = load_rankings(conn, snap.pk, run_ids, tie_order,
                                 any(r.n_unresolved for r in chosen), depth)
        full = qrels_dict(qrels_frame(conn, qset.pk))
        tag_of = {r.pk: r.tag for r in chosen}
        run_dicts = {tag_of[run_id]: run for run_id, run in read_runs(conn, snap.pk, run_ids)}
    if not full:
        raise OptionError("--qrels", f"qrels set {qrels!r} has no judgments to simulate with")
    tags = [tag_of[r] for r in run_ids]
    groups = {r.tag: r.group_name or r.tag for r in chosen}
    rows, context = simulate_strategies(
        rankings.topics, rankings.topic_order(), tags, groups, run_dicts, full, made,
        chosen_budgets, per_topic, name, leave_out)
    result: dict[str, Any] = {
        "collection": collection, "snapshot": snapshot, "qrels": qrels, "measure": name,
        "per_topic": per_topic, "tie_order": str(tie_order), "depth": depth,
        "n_runs": context["n_runs"], "n_groups": context["n_groups"],
        "n_topics": context["n_topics"], "relevant_total": context["relevant_total"],
        "rows": rows, "seconds": time.perf_counter() - started,
    }
    return result  # type: ignore[return-value]
