"""Build an assessor pool over chosen runs of a snapshot, and optionally export it blind;
simulate pooling strategies, on a Dask cluster when one is configured.

`build-pool`'s parameters are the `pool_build` operation's fields (`tcdb pool build`: a depth-k
pool, or the first N documents of a strategy's order within a budget, optionally its first
batch) plus the export's; it runs `TASKS["pool_build"]` and `TASKS["pool_export"]` and adds
only an artifact. Idempotent by pool name: the same parameters again are "unchanged",
different ones a ConflictError. `simulate-pools` takes `pool_simulation`'s fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch, retry_transient
from tcdb.settings import DaskAddress

if TYPE_CHECKING:
    from tcdb.pools.simulate import SimulationRequest, SimulationResult
    from tcdb.pools.simulation_jobs import SimulationJob
    from tcdb.pools.simulation_layout import Unit

DEFAULT_DEPTH = 10  # a depth-k pool's depth when neither a depth nor a budget is given


@flow(name="build-pool", log_prints=True)
def build_pool(
    collection: str,
    snapshot: str,
    name: str,
    depth: int | None = None,
    runs: list[str] | None = None,
    contributed: bool = False,
    not_contributed: bool = False,
    all_runs: bool = False,
    exclude_judged: str | None = None,
    tie_order: str = "trec_eval",
    max_per_topic: int | None = None,
    description: str | None = None,
    strategy: str | None = None,
    budget: int | None = None,
    per_topic: bool = False,
    batch: int | None = None,
    export: str | None = None,
    export_format: str = "trec",
    export_order: str = "docid",
    seed: int | None = None,
) -> dict[str, Any]:
    """Build a pool (as `tcdb pool build`: depth-k, or a strategy within a budget, in batches);
    with `export`, write it for assessors. Without a depth or a budget: depth 10."""
    from tcdb.flows.tasks import TASKS
    from tcdb.pools.build import PoolBuildRequest
    from tcdb.pools.export import PoolExportRequest
    from tcdb.pools.results import PoolBuildResult, PoolExportResult

    logger = get_run_logger()
    watch = Stopwatch()
    request = PoolBuildRequest.of(
        collection=collection, snapshot=snapshot, name=name,
        depth=DEFAULT_DEPTH if depth is None and budget is None else depth, runs=runs,
        contributed=contributed, not_contributed=not_contributed, all_runs=all_runs,
        exclude_judged=exclude_judged, tie_order=tie_order, max_per_topic=max_per_topic,
        description=description, strategy=strategy, budget=budget, per_topic=per_topic,
        batch=batch)
    with watch.step("build"):
        built: PoolBuildResult = TASKS["pool_build"](request)  # type: ignore[assignment]
    logger.info("pool %s %s: %d documents over %d topics from %d runs", name, built.status,
                built.n_documents, built.n_topics, len(built.runs))
    exported: PoolExportResult | None = None
    if export is not None:
        with watch.step("export"):
            exported = TASKS["pool_export"](PoolExportRequest.of(  # type: ignore[assignment]
                name=name, collection=collection, snapshot=snapshot, format=export_format,
                out=export, order=export_order, seed=seed))
    size = built.size
    how = (f"{built.strategy}, budget {built.budget}"
           f"{' per topic' if built.budget_per_topic else ''}" if built.budget
           else f"depth {built.depth}")
    sections = [
        f"**{built.n_documents}** documents to judge over **{built.n_topics}** topics "
        f"({built.status}); {how}, runs chosen: {built.chosen}"
        + (f", judged in {built.exclude_judged} left out" if built.exclude_judged else ""),
        markdown_table(["per topic", "min", "mean", "max", "total"],
                       [["documents", size.min, size.mean, size.max, size.total]]),
        markdown_table(["run"], [[tag] for tag in built.runs]),
    ]
    if exported is not None:
        sections.append(f"Exported blind to `{export}` ({export_format}, {export_order} order).")
    sections.append(timings_section(watch))
    publish(f"pool-{name}", render(f"Pool {name} ({collection} / {snapshot})", sections),
            f"assessor pool {name}")
    return {"pool": built.to_data(),
            "export": exported.to_data() if exported is not None else None,
            "seconds": round(watch.total, 3)}


@flow(name="simulate-pools", log_prints=True)
def simulate_pools(
    collection: str,
    snapshot: str,
    budgets: list[int],
    qrels: str = "original",
    strategies: list[str] | None = None,
    per_topic: bool = False,
    runs: list[str] | None = None,
    measure: str = "AP",
    tie_order: str = "trec_eval",
    depth: int | None = None,
    leave_out: bool = True,
    dask: DaskAddress | None = None,
) -> dict[str, Any]:
    """Simulate pooling strategies (as `tcdb pool simulate`); on a Dask cluster when `dask`
    (or the setting `TCDB_DASK_ADDRESS`) names a scheduler, `local` for a local cluster."""
    from tcdb.flows.tasks import TASKS
    from tcdb.pools.simulate import SimulationRequest
    from tcdb.settings import get_settings

    logger = get_run_logger()
    watch = Stopwatch()
    request = SimulationRequest.of(
        collection=collection, snapshot=snapshot, qrels=qrels, strategies=strategies,
        budgets=budgets, per_topic=per_topic, runs=runs, measure=measure, tie_order=tie_order,
        depth=depth, leave_out=leave_out)
    dask = dask or get_settings().dask_address
    with watch.step("simulate"):
        result: SimulationResult = (
            simulate_on_dask(request, dask) if dask
            else TASKS["pool_simulation"](request))  # type: ignore[assignment]
    logger.info("%d strategies × %d budgets over %d runs, %d topics%s",
                len({r.strategy for r in result.rows}), len(request.budgets), result.n_runs,
                result.n_topics, f" on Dask ({dask})" if dask else "")
    publish(f"simulation-{collection}-{snapshot}", render(
        f"Pool simulation ({collection} / {snapshot}, {result.measure}, qrels {qrels})", [
            markdown_table(["strategy", "budget", "judged", "relevant found", "τ-b", "τ_AP",
                            "leave-one-group-out τ-b"],
                           [[r.strategy, r.budget, r.n_judged, r.relevant_found, r.tau_b,
                             r.tau_ap, r.logo_tau_b] for r in result.rows]),
            timings_section(watch)]), "pool simulation")
    return {"simulation": result.to_data(), "seconds": round(watch.total, 3)}


def simulate_on_dask(request: SimulationRequest, dask: str) -> SimulationResult:
    """`pool_simulation` on a Dask cluster: the core plans (`plan_simulation`), Dask workers
    make and score the strategies' units as Prefect tasks (prefect-dask's `DaskTaskRunner`),
    each reading the runs from the database itself, and the core assembles the rows.

    `dask` is a scheduler's address (`tcp://host:8786`), or `local` for a local cluster of
    worker processes, one per core."""
    import time

    from tcdb.flows.dask_runner import on_dask
    from tcdb.operations import Database
    from tcdb.pools.simulate import plan_simulation
    from tcdb.pools.simulation_jobs import make_jobs, simulation_result
    started = time.perf_counter()
    db = Database()
    plan = plan_simulation(request, db)
    jobs = make_jobs(db.url, plan)
    return simulation_result(plan, jobs, on_dask(simulate_units_task, jobs, dask), started)


@task(name="simulate-units", retries=2, retry_delay_seconds=5,
      retry_condition_fn=retry_transient, cache_policy=NO_CACHE)
def simulate_units_task(job: SimulationJob) -> list[tuple[Unit, Any]]:
    """Some units of a simulation made and scored on a worker (`simulate_job`)."""
    from tcdb.pools.simulation_jobs import simulate_job

    return simulate_job(job)

