"""Pool simulation on a Dask cluster gives the `pool_simulation` operation's rows, on SQLite and
PostgreSQL: each strategy's units made and scored by workers that read the runs from the
database themselves (`tcdb.pools.simulation_jobs`), the rows assembled by the caller.

The collection is `test_pool_simulation_fast`'s (ties, graded and unjudged documents, a topic
without relevant documents, runs skipping a topic, a run without a group), whose operation rows
that module proves equal to the straightforward simulation.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.test_pool_simulation_fast import STRATEGIES, collection  # noqa: F401 - a fixture

pytestmark = [pytest.mark.server, pytest.mark.slow]

CASES = [("AP", False, [7, 40, 600]), ("Bpref", True, [3, 30])]


def _operation_rows(measure: str, per_topic: bool, budgets: list[int]) -> list[dict[str, Any]]:
    from tcdb import api

    report = api.pool_simulation("f", "s1", qrels="original", budgets=budgets,
                                 strategies=STRATEGIES, measure=measure, per_topic=per_topic,
                                 workers=1)
    return [row.model_dump() for row in report.rows]


@pytest.mark.parametrize(("measure", "per_topic", "budgets"), CASES)
def test_jobs_scored_anywhere_give_the_operations_rows(
        collection: str, measure: str, per_topic: bool, budgets: list[int]) -> None:  # noqa: F811
    """The units of every job, made in this process one job at a time, in reverse order."""
    from tcdb.operations import Database
    from tcdb.pools.simulate import SimulationRequest, plan_simulation
    from tcdb.pools.simulation_jobs import make_jobs, simulate_job, simulation_result

    request = SimulationRequest.of(collection="f", snapshot="s1", qrels="original",
                                   budgets=budgets, strategies=STRATEGIES, measure=measure,
                                   per_topic=per_topic)
    plan = plan_simulation(request, Database())
    jobs = make_jobs(Database().url, plan, parts=3)
    # a job per strategy (its 3 parts of the 5 groups and all runs) + the complete qrels
    assert len(jobs) == len(STRATEGIES) + 1
    assert all(len(job.units) == 4 for job in jobs[:-1]) and len(jobs[-1].units) == 1
    done = [simulate_job(job) for job in reversed(jobs)]
    result = simulation_result(plan, jobs, done, time.perf_counter())
    assert result.n_runs == 11 and result.n_groups == 5
    assert [r.model_dump() for r in result.rows] == _operation_rows(measure, per_topic, budgets)


@pytest.mark.parametrize(("measure", "per_topic", "budgets"), CASES)
def test_the_simulate_pools_flow_runs_on_a_dask_cluster(
        collection: str, prefect_api: None, dask_cluster: str,  # noqa: F811
        measure: str, per_topic: bool, budgets: list[int]) -> None:
    """The flow with a scheduler address: prefect-dask's task runner on the cluster's two
    worker processes; the rows equal the operation's in this process."""
    from tcdb.flows.pools import simulate_pools
    from tcdb.pools.simulate import SimulationRequest

    request = SimulationRequest.of(collection="f", snapshot="s1", budgets=budgets,
                                   strategies=STRATEGIES, measure=measure, per_topic=per_topic)
    out = simulate_pools(request, dask=dask_cluster)
    rows = out["simulation"]["rows"]
    assert rows == _operation_rows(measure, per_topic, budgets)
    assert len(rows) == len(STRATEGIES) * len(budgets)
    assert any(r["logo_tau_b"] != r["tau_b"] for r in rows)  # leave-out changed something


def test_the_flow_without_dask_runs_the_operation(collection: str,  # noqa: F811
                                                  prefect_api: None) -> None:
    from tcdb.flows.pools import simulate_pools
    from tcdb.pools.simulate import SimulationRequest

    out = simulate_pools(SimulationRequest.of(collection="f", snapshot="s1",
                                              budgets=[7, 40, 600], strategies=STRATEGIES,
                                              measure="AP"))
    assert out["simulation"]["rows"] == _operation_rows("AP", False, [7, 40, 600])
