"""Work fanned out on a Dask cluster: a task for every item, on prefect-dask's task runner.

Used where an operation is planned by the core, done in shares anywhere and put together by
the core again: evaluation (`flows/evaluate.py`) and pool simulation (`flows/pools.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefect import Task, flow


def on_dask(task: Task[..., Any], items: Sequence[Any], dask: str) -> list[Any]:
    """`task` for each item on a Dask cluster, the results in the items' order. `dask` is a
    scheduler's address (`tcp://host:8786`), or `local` for a local cluster of worker
    processes, one per core."""
    from prefect_dask import DaskTaskRunner

    runner = (DaskTaskRunner(cluster_kwargs={"processes": True, "threads_per_worker": 1})
              if dask == "local" else DaskTaskRunner(address=dask))
    each = _each.with_options(name=f"{task.name}-on-dask",
                              task_runner=runner)  # type: ignore[arg-type]
    return each(task, list(items))


@flow(name="each-on-dask", validate_parameters=False)
def _each(task: Task[..., Any], items: list[Any]) -> list[Any]:
    """Every item as a task on the flow's task runner (a Dask cluster)."""
    return [future.result() for future in task.map(items)]
