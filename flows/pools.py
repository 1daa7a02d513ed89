"""Build an assessor pool over chosen runs of a snapshot, and optionally export it blind;
simulate pooling strategies, on a Dask cluster when one is configured.

`build-pool` takes the `pool_build` operation's request (`tcdb pool build`: a depth-k pool,
or the first N documents of a strategy's order within a budget, optionally its first batch)
and, to export the pool, the `pool_export` operation's; it runs `TASKS["pool_build"]` and
`TASKS["pool_export"]` and adds only an artifact. Idempotent by pool name: the same request
again is "unchanged", a different one a ConflictError. `simulate-pools` takes
`pool_simulation`'s request, and where it runs (`dask`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from pydantic import BeforeValidator

from tcdb.errors import FieldError
from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch, retry_transient
from tcdb.pools.build import PoolBuildRequest
from tcdb.pools.export import PoolExportRequest
from tcdb.pools.simulate import SimulationRequest
from tcdb.settings import DaskAddress

if TYPE_CHECKING:
    from tcdb.pools.simulate import SimulationResult
    from tcdb.pools.simulation_jobs import SimulationJob
    from tcdb.pools.simulation_layout import Unit

DEFAULT_DEPTH = 10  # a depth-k pool's depth when neither a depth nor a budget is given


def default_depth(fields: Any) -> Any:
    """A pool request's fields with depth `DEFAULT_DEPTH` when they give neither a depth nor a
    budget (a request already built is left as it is)."""
    if isinstance(fields, dict) and fields.get("depth") is None \
            and fields.get("budget") is None:
        return {**fields, "depth": DEFAULT_DEPTH}
    return fields


# The flow's request: `pool_build`'s, built from its fields (by Prefect from a deployment's or
# `tcdb flows run`'s parameters) with the default depth.
PoolBuild = Annotated[PoolBuildRequest, BeforeValidator(default_depth)]


def export_of(request: PoolBuildRequest, export: PoolExportRequest) -> PoolExportRequest:
    """The export of the pool `request` builds: its collection and snapshot filled in; an
    export naming another pool is refused."""
    pool = {"name": request.name, "collection": request.collection,
            "snapshot": request.snapshot}
    for field, value in pool.items():
        if getattr(export, field) not in (None, value):
            raise FieldError(f"export.{field}", f"the export is of the pool built, "
                             f"{field} {value!r}, not {getattr(export, field)!r}")
    return export.model_copy(update=pool)


@flow(name="build-pool", log_prints=True)
def build_pool(request: PoolBuild, export: PoolExportRequest | None = None) -> dict[str, Any]:
    """Build a pool (as `tcdb pool build`: depth-k, or a strategy within a budget, in batches);
    with `export`, write it for assessors (as `tcdb pool export`). Built from its fields
    without a depth or a budget: depth 10."""
    from tcdb.flows.tasks import TASKS
    from tcdb.pools.results import PoolBuildResult, PoolExportResult

    logger = get_run_logger()
    watch = Stopwatch()
    name, collection, snapshot = request.name, request.collection, request.snapshot
    export = export_of(request, export) if export is not None else None
    with watch.step("build"):
        built: PoolBuildResult = TASKS["pool_build"](request)  # type: ignore[assignment]
    logger.info("pool %s %s: %d documents over %d topics from %d runs", name, built.status,
                built.n_documents, built.n_topics, len(built.runs))
    exported: PoolExportResult | None = None
    if export is not None:
        with watch.step("export"):
            exported = TASKS["pool_export"](export)  # type: ignore[assignment]
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
    if exported is not None and export is not None:
        sections.append(f"Exported blind to `{export.out}` ({export.format}, "
                        f"{export.order} order).")
    sections.append(timings_section(watch))
    publish(f"pool-{name}", render(f"Pool {name} ({collection} / {snapshot})", sections),
            f"assessor pool {name}")
    return {"pool": built.to_data(),
            "export": exported.to_data() if exported is not None else None,
            "seconds": round(watch.total, 3)}


@flow(name="simulate-pools", log_prints=True)
def simulate_pools(request: SimulationRequest, dask: DaskAddress | None = None
                   ) -> dict[str, Any]:
    """Simulate pooling strategies (as `tcdb pool simulate`); on a Dask cluster when `dask`
    (or the setting `TCDB_DASK_ADDRESS`) names a scheduler, `local` for a local cluster."""
    from tcdb.flows.tasks import TASKS
    from tcdb.settings import get_settings

    logger = get_run_logger()
    watch = Stopwatch()
    collection, snapshot = request.collection, request.snapshot
    dask = dask or get_settings().dask_address
    with watch.step("simulate"):
        result: SimulationResult = (
            simulate_on_dask(request, dask) if dask
            else TASKS["pool_simulation"](request))  # type: ignore[assignment]
    logger.info("%d strategies × %d budgets over %d runs, %d topics%s",
                len({r.strategy for r in result.rows}), len(request.budgets), result.n_runs,
                result.n_topics, f" on Dask ({dask})" if dask else "")
    publish(f"simulation-{collection}-{snapshot}", render(
        f"Pool simulation ({collection} / {snapshot}, {result.measure}, qrels "
        f"{request.qrels})", [
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

