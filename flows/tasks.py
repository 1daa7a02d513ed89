"""A Prefect task for every operation, derived from the registry: `TASKS["pool_build"]`.

A task takes the operation's request (and optionally a database URL) and returns its typed
result; it retries only failures a retry can fix (`retry_transient`), never bad input. Flows
compose these tasks and add only orchestration: schedules, retries, fan-out, artifacts.
"""

from __future__ import annotations

from typing import Any

from prefect import Task, task
from prefect.cache_policies import NO_CACHE

from tcdb.flows.common import retry_transient
from tcdb.operations import Database, Operation, Request, Result, all_operations


def task_of(op: Operation[Any, Any]) -> Task[..., Result]:
    """The operation as a task named like its CLI command (`report-persistence`)."""
    def run(request: Request, database_url: str | None = None) -> Result:
        return op(request, Database(database_url))

    run.__name__ = op.name
    run.__doc__ = op.summary
    return task(name="-".join(op.command), retries=2, retry_delay_seconds=[5, 30],
                retry_condition_fn=retry_transient, cache_policy=NO_CACHE)(run)


TASKS: dict[str, Task[..., Result]] = {name: task_of(op) for name, op in all_operations().items()}
