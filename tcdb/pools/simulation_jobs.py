"""A pool simulation's work on a Dask cluster: each strategy's units in tasks anywhere.

Local worker processes share the parent's loaded runs (`tcdb.pools.simulation`); a Dask worker
has none of them, and sending ~6 million entries to each would cost more than it saves. So a
`SimulationJob` carries the plan (which snapshot, qrels set and runs; ids, not data) and one
strategy's units (its pools over all runs and without each group), or the complete qrels: the
worker reads the runs and qrels from the database itself, once per process however many of the
simulation's jobs it gets, makes the units' pooled sets and scores them together
(`simulate_units`: a run's topic is prepared once for all of a strategy's sets). The parent
only plans and assembles the rows (`assemble_units`), which are `pool_simulation`'s: a run's
value on a pooled set is trec_eval's on that set alone, wherever it is computed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tcdb.pools.simulation import Pooling, simulate_units
from tcdb.pools.simulation_layout import COMPLETE, Layout, Unit, assemble_units

if TYPE_CHECKING:
    from tcdb.pools.simulate import SimulationPlan, SimulationResult

# Parts the left-out groups are split into within a strategy's job (the units it makes one
# after another; one scoring of them all).
DASK_PARTS = 1


@dataclass(frozen=True)
class SimulationJob:
    """Some units of one simulation (`simulation`, its id), for a worker that opens `url`
    itself."""

    simulation: str
    url: str
    plan: SimulationPlan
    parts: int
    units: tuple[Unit, ...]


def make_jobs(url: str, plan: SimulationPlan, parts: int = DASK_PARTS) -> list[SimulationJob]:
    """A job per strategy of `plan` (its left-out groups in `parts` parts), and one of the
    complete qrels."""
    import uuid

    layout = Layout.of(plan.tags, plan.groups, plan.request.leave_out, parts)
    per_strategy: dict[int, list[Unit]] = {}
    for unit in layout.units(len(plan.strategies)):
        per_strategy.setdefault(unit[0], []).append(unit)
    simulation = uuid.uuid4().hex
    return [SimulationJob(simulation, url, plan, parts, tuple(units))
            for units in [*per_strategy.values(), [COMPLETE]]]


def simulate_job(job: SimulationJob) -> list[tuple[Unit, Any]]:
    """The job's units made and scored in this process (a Dask worker, or the caller)."""
    plan, request = job.plan, job.plan.request
    rankings, runs, qrels = _loaded(job)
    pooling = Pooling(rankings.topics, rankings.topic_order(), qrels, plan.strategies,
                      plan.budgets, request.per_topic,
                      Layout.of(plan.tags, plan.groups, request.leave_out, job.parts))
    return simulate_units(pooling, plan.tags, runs, plan.measure, job.units)


def simulation_result(plan: SimulationPlan, jobs: Sequence[SimulationJob],
                      done: Iterable[list[tuple[Unit, Any]]], started: float
                      ) -> SimulationResult:
    """The operation's result from every job's units."""
    results = {unit: value for units in done for unit, value in units}
    layout = Layout.of(plan.tags, plan.groups, plan.request.leave_out, jobs[0].parts)
    rows, context = assemble_units(plan.strategies, plan.budgets, plan.tags, layout, results)
    return plan.result(rows, context, started)


# The last simulation's data in this process: a worker given several of its jobs reads once.
_LOADED: dict[str, Any] = {}


def _loaded(job: SimulationJob) -> Any:
    """The plan's rankings, runs and qrels (`load_simulation`), read once per simulation and
    process (a later simulation reads again: runs may have been replaced meanwhile)."""
    from tcdb.pools.simulate import load_simulation
    from tcdb.storage.db import get_engine

    if job.simulation not in _LOADED:
        _LOADED.clear()  # one simulation's data at a time
        with get_engine(job.url).connect() as conn:
            _LOADED[job.simulation] = load_simulation(conn, job.plan)
    return _LOADED[job.simulation]
