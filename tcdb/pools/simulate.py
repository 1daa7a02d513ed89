"""`tcdb pool simulate`: read a snapshot's runs and a complete qrels set, and simulate pooling
strategies at several budgets (`tcdb.pools.simulation`). Reads only; stores nothing."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator

from tcdb.catalog.collections import get_snapshot
from tcdb.errors import FieldError
from tcdb.operations import (
    Database,
    Labels,
    Name,
    Names,
    Request,
    Result,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.pools.simulation import simulate_in_processes
from tcdb.pools.simulation_layout import SimulationRow
from tcdb.pools.strategies import Strategy, make_strategy, strategy_names
from tcdb.reports.fields import qrels_option
from tcdb.scoring.measures import MeasureName
from tcdb.vocabulary import TieOrder

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection

    from tcdb.pools.rankings import Rankings
    from tcdb.pools.simulation import Qrels, RunDict


def parse_budgets(values: Sequence[int | str] | int | str) -> list[int]:
    """Budgets from numbers or comma lists ("500,1000"), each ≥ 1, sorted, de-duplicated.

    Why text too: people type budgets as one comma list, on the command line and in a form.
    A ValueError (the request's validation names the field `budgets`).
    """
    budgets: set[int] = set()
    for value in [values] if isinstance(values, int | str) else values:
        for part in str(value).split(","):
            part = part.strip().replace("_", "")
            if not part:
                continue
            if not part.isdigit() or int(part) < 1:
                raise ValueError(f"{part!r} is not a budget (a whole number ≥ 1)")
            budgets.add(int(part))
    if not budgets:
        raise ValueError("give at least one budget")
    return sorted(budgets)


# Budgets as numbers or comma lists of them (`--budgets 500,1000`); the request holds ints.
Budgets = Annotated[list[str | int], BeforeValidator(parse_budgets)]


class SimulationRequest(Request):
    """Which runs, complete qrels, strategies and budgets a pool simulation tries."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()  # the complete set the simulation reads grades from
    strategies: Labels | None = option(
        None, help="A strategy, NAME or NAME:key=value,… (repeatable; default all: depth, "
        "rrf, rbp, mtf, maxmean).")
    budgets: Budgets = option(flag="--budgets", help="Budgets to simulate, e.g. "
                              "500,1000,2000 (repeatable).")
    per_topic: bool = option(False, help="Budgets per topic (default: in total).")
    runs: Names | None = option(None, help="A run tag to pool and rank (repeatable; default "
                                 "every run).")
    measure: MeasureName = option("AP", help="The measure systems are ranked by.")
    tie_order: TieOrder = option(TieOrder.trec_eval,
                                 help="How runs are ranked (as in `pool build`).")
    depth: int | None = option(None, ge=1, help="Read each run to this depth only (default: "
                               "whole runs).")
    leave_out: bool = option(True, help="Also the leave-one-group-out τ (--no-leave-out: "
                             "skip it, faster).")
    workers: int | None = option(
        None, ge=1, metavar="N",
        help="Worker processes making the strategies' pools and scoring shares of the "
        "topics (default: the cores available once the runs hold a million entries, from a "
        "command line or script; 1: in this process). The rows are the same.")


class SimulationResult(Result):
    """What each strategy finds at each budget, and how well it ranks the systems."""

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
    lineage: Lineage | None = None  # the runs pooled, the complete qrels, the measure

    def to_frame(self) -> pd.DataFrame:
        """One row per strategy × budget: judged, relevant found (and its fraction), τ-b and
        τ_AP against the complete ranking, and their leave-one-group-out values."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.rows],
                            columns=list(SimulationRow.model_fields))


@dataclass(frozen=True)
class SimulationPlan:
    """What a simulation reads, found without reading any run entry: the snapshot, the
    complete qrels set, the runs (ids, tags, groups) and how they are ranked; with what the
    request asks of them. A worker elsewhere (Dask, `tcdb.pools.simulation_jobs`) loads its
    data by it; `result` turns the simulation's rows into the operation's result."""

    request: SimulationRequest
    strategies: tuple[Strategy, ...]
    budgets: tuple[int, ...]
    measure: str
    snapshot_id: int
    qrels_set_id: int
    run_ids: tuple[int, ...]
    tags: tuple[str, ...]
    groups: dict[str, str]  # tag → group (a run without one is a group of its own)
    unresolved: bool  # some entry names a document the snapshot lacks
    lineage: Lineage

    def result(self, rows: list[SimulationRow], context: dict[str, Any], started: float
               ) -> SimulationResult:
        request = self.request
        figures = {k: context[k] for k in ("n_runs", "n_groups", "n_topics", "relevant_total")}
        return SimulationResult(
            collection=request.collection, snapshot=request.snapshot, qrels=request.qrels,
            measure=self.measure, per_topic=request.per_topic,
            tie_order=str(request.tie_order), depth=request.depth, **figures,
            rows=rows,
            seconds=time.perf_counter() - started, lineage=self.lineage)


def plan_simulation(request: SimulationRequest, db: Database) -> SimulationPlan:
    """The simulation `request` asks for, checked (at least two runs, a qrels set with
    judgments) without reading the runs' entries."""
    from tcdb.analysis.means import counts_unanswered
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import provider_data
    from tcdb.scoring.measures import check_providers, parse_measures

    made = [make_strategy(s, "strategies") for s in (request.strategies or strategy_names())]
    (name,) = parse_measures([request.measure], "measure")
    if counts_unanswered(name):
        raise FieldError("measure", f"{name} does not rank systems: trec_eval -c gives every "
                         "run the same figure (the qrels' count, whatever the run retrieves); "
                         "rank by a measure of the ranking, e.g. AP or nDCG@10")
    with db.session() as session:
        snap = get_snapshot(session, request.collection, request.snapshot)
        qset = get_qrels_set(session, snap, request.qrels)
        chosen = get_runs(session, snap, request.runs or None)
        if len(chosen) < 2:
            raise FieldError("runs", f"a simulation ranks systems: it needs at least two "
                             f"runs (snapshot {request.snapshot!r} has {len(chosen)} chosen)")
        check_providers([name], lambda: provider_data(session.connection(), snap.pk, qset.pk),
                        "measure")
        lineage = lineage_of(db, request.collection,
                             runs=[(snap.label, r.tag) for r in chosen],
                             qrels=[(snap.label, qset.name)], measures=[name], session=session)
        return SimulationPlan(
            request=request, strategies=tuple(made),
            budgets=tuple(int(b) for b in request.budgets), measure=name,
            snapshot_id=snap.pk, qrels_set_id=qset.pk, run_ids=tuple(r.pk for r in chosen),
            tags=tuple(r.tag for r in chosen),
            groups={r.tag: r.group_name or r.tag for r in chosen},
            unresolved=any(r.n_unresolved for r in chosen), lineage=lineage)


def load_simulation(conn: Connection, plan: SimulationPlan
                    ) -> tuple[Rankings, dict[str, RunDict], Qrels]:
    """The plan's rankings, its runs (tag → ir_measures dict) and the complete qrels."""
    from tcdb.pools.rankings import load_rankings, load_rankings_and_runs
    from tcdb.queries.qrels import qrels_of
    from tcdb.queries.runs import read_runs

    request = plan.request
    run_ids = list(plan.run_ids)
    if request.tie_order == TieOrder.trec_eval and request.depth is None and not plan.unresolved:
        rankings, by_id = load_rankings_and_runs(conn, plan.snapshot_id, run_ids)  # one read
    else:
        rankings = load_rankings(conn, plan.snapshot_id, run_ids, request.tie_order,
                                 plan.unresolved, request.depth)
        by_id = dict(read_runs(conn, plan.snapshot_id, run_ids))
    tag_of = dict(zip(plan.run_ids, plan.tags, strict=True))
    runs = {tag_of[run_id]: run for run_id, run in by_id.items()}
    full = qrels_of(conn, plan.qrels_set_id)
    if not full:
        raise FieldError("qrels", f"qrels set {request.qrels!r} has no judgments to simulate "
                         "with")
    return rankings, runs, full


@operation("pool_simulation", command="pool simulate")
def pool_simulation(request: SimulationRequest, db: Database) -> SimulationResult:
    """Simulate pooling strategies on a complete qrels set before anyone judges: relevant
    found, τ-b and τ_AP against the complete ranking, leave-one-group-out τ.

    Why: which strategy and budget to pay assessors for is cheapest decided on a collection
    already judged completely. Runs are pooled and ranked (default every run of the snapshot);
    a run's group is its `group_name` (a run without one is a group of its own). On a Dask
    cluster: the `simulate-pools` flow (`tcdb.pools.simulation_jobs`), the same rows.
    """
    started = time.perf_counter()
    plan = plan_simulation(request, db)
    with db.session() as session:
        rankings, runs, full = load_simulation(session.connection(), plan)
    rows, context = simulate_in_processes(
        rankings.topics, rankings.topic_order(), list(plan.tags), plan.groups, runs, full,
        list(plan.strategies), list(plan.budgets), request.per_topic, plan.measure,
        request.leave_out, request.workers)
    return plan.result(rows, context, started)
