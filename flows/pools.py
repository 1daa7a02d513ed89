"""Build an assessor pool over chosen runs of a snapshot, and optionally export it blind.

Thin over `tcdb.pools.build_pool` and `tcdb.pools.export_pool` (idempotent by pool name: the
same parameters again are "unchanged", different ones a ConflictError).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from tcdb.flows.artifacts import markdown_table, publish, render, timings_section
from tcdb.flows.common import Stopwatch, retry_transient


@task(name="build-pool", retries=2, retry_delay_seconds=[5, 30],
      retry_condition_fn=retry_transient, cache_policy=NO_CACHE)
def build_pool_task(collection: str, snapshot: str, name: str, depth: int,
                    options: dict[str, Any]) -> dict[str, Any]:
    from tcdb.pools import build_pool as build_core

    return dict(build_core(collection, snapshot, name, depth, **options))


@task(name="export-pool", retries=2, retry_delay_seconds=[5, 30],
      retry_condition_fn=retry_transient, cache_policy=NO_CACHE)
def export_pool_task(name: str, fmt: str, out: str, order: str, seed: int | None
                     ) -> dict[str, Any]:
    from tcdb.pools import export_pool

    return dict(export_pool(name, fmt, out, order=order, seed=seed))


@flow(name="build-pool", log_prints=True)
def build_pool(
    collection: str,
    snapshot: str,
    name: str,
    depth: int = 10,
    runs: list[str] | None = None,
    contributed: bool = False,
    not_contributed: bool = False,
    all_runs: bool = False,
    exclude_judged: str | None = None,
    tie_order: str = "trec_eval",
    max_per_topic: int | None = None,
    description: str | None = None,
    export: str | None = None,
    export_format: str = "trec",
    export_order: str = "docid",
    seed: int | None = None,
) -> dict[str, Any]:
    """Build a depth-k pool (as `tcdb pool build`); with `export`, write it for assessors."""
    logger = get_run_logger()
    watch = Stopwatch()
    options = {"runs": runs, "contributed": contributed, "not_contributed": not_contributed,
               "all_runs": all_runs, "exclude_judged": exclude_judged, "tie_order": tie_order,
               "max_per_topic": max_per_topic, "description": description}
    with watch.step("build"):
        report = build_pool_task(collection, snapshot, name, depth, options)
    logger.info("pool %s %s: %d documents over %d topics from %d runs", name, report["status"],
                report["n_documents"], report["n_topics"], len(report["runs"]))
    exported = None
    if export is not None:
        with watch.step("export"):
            exported = export_pool_task(name, export_format, export, export_order, seed)
    size = report.get("size") or {}
    sections = [
        f"**{report['n_documents']}** documents to judge over **{report['n_topics']}** topics "
        f"({report['status']}); depth {report['depth']}, runs chosen: {report['chosen']}"
        + (f", judged in {report['exclude_judged']} left out" if report["exclude_judged"]
           else ""),
        markdown_table(["per topic", "min", "mean", "max", "total"],
                       [["documents", size.get("min"), size.get("mean"), size.get("max"),
                         size.get("total")]]),
        markdown_table(["run"], [[tag] for tag in report["runs"]]),
    ]
    if exported is not None:
        sections.append(f"Exported blind to `{export}` ({export_format}, {export_order} order).")
    sections.append(timings_section(watch))
    publish(f"pool-{name}", render(f"Pool {name} ({collection} / {snapshot})", sections),
            f"assessor pool {name}")
    return {"pool": report, "export": exported, "seconds": round(watch.total, 3)}
