"""Build an assessor pool over chosen runs of a snapshot, and optionally export it blind.

The flow's parameters are the `pool_build` operation's fields (`tcdb pool build`: a depth-k
pool, or the first N documents of a strategy's order within a budget, optionally its first
batch) plus the export's; it runs `TASKS["pool_build"]` and `TASKS["pool_export"]` and adds
only an artifact. Idempotent by pool name: the same parameters again are "unchanged",
different ones a ConflictError.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger

from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch

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
    return {"pool": built.to_json(),
            "export": exported.to_json() if exported is not None else None,
            "seconds": round(watch.total, 3)}
