"""Work fanned out on a Dask cluster: a task for every item, on prefect-dask's task runner.

Used where an operation is planned by the core, done in shares anywhere and put together by
the core again: evaluation (`flows/evaluate.py`) and pool simulation (`flows/pools.py`).
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from prefect import Task, flow

from tcdb.errors import TcdbError

# How long a scheduler may take to answer before it is said to be unreachable (Dask's own
# default is 30 s, which a mistyped address cost on every run).
CONNECT_SECONDS = 5.0


def on_dask(task: Task[..., Any], items: Sequence[Any], dask: str) -> list[Any]:
    """`task` for each item on a Dask cluster, the results in the items' order. `dask` is a
    scheduler's address (`tcp://host:8786`), or `local` for a local cluster of worker
    processes, one per core."""
    from prefect_dask import DaskTaskRunner

    if dask != "local":
        reach_scheduler(dask)
    runner = (DaskTaskRunner(cluster_kwargs={"processes": True, "threads_per_worker": 1})
              if dask == "local" else
              DaskTaskRunner(address=dask, client_kwargs={"timeout": f"{CONNECT_SECONDS:g}s"}))
    each = _each.with_options(name=f"{task.name}-on-dask",
                              task_runner=runner)  # type: ignore[arg-type]
    return each(task, list(items))


def reach_scheduler(address: str, seconds: float = CONNECT_SECONDS) -> None:
    """That something listens at a Dask scheduler's address (checked in `seconds`), else one
    line naming the address, the reason and where it was set. `address` is a checked one
    (`tcdb.settings.dask_address`); inproc:// and ucx:// are left to Dask."""
    parts = urlsplit(address)
    if parts.scheme not in ("tcp", "tls", "ws", "wss") or not parts.hostname or not parts.port:
        return
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=seconds):
            pass
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else \
            (exc.strerror or str(exc)).lower()
        raise TcdbError(f"no Dask scheduler at {address} ({reason}; waited at most "
                        f"{seconds:g} s): start one there, or set TCDB_DASK_ADDRESS (or the "
                        "flow's `dask` parameter) to a running scheduler's address, or to "
                        "`local`") from None


@flow(name="each-on-dask", validate_parameters=False)
def _each(task: Task[..., Any], items: list[Any]) -> list[Any]:
    """Every item as a task on the flow's task runner (a Dask cluster)."""
    return [future.result() for future in task.map(items)]
