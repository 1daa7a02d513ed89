"""Worker processes for CPU-bound work (scoring runs, simulating pools): one core each.

Python runs one thread of Python at a time, and ir_measures, the pooling strategies and the
simulations are mostly Python, so more cores means more processes. The processes start at once
— before the caller shows progress or starts another thread — forked where that is safe
(Linux, the calling thread the only one: the children inherit the loaded data and modules
without pickling or re-importing them), else from a fork server. What every task needs is
handed to each worker once (`shared`), not with every task; each worker forgets the parent's
database connections.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from typing import Any, TypeVar

Item = TypeVar("Item")
K = TypeVar("K", int, str)  # what `share_out` shares out: run ids, topic ids
Out = TypeVar("Out")

_SHARED: Any = None  # in a worker: what `run_in_processes` handed it


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_count(requested: int | None, n_tasks: int, *, worth_it: bool) -> int:
    """How many processes for `n_tasks` tasks: `requested` (never more than tasks), or, when
    not given, the available cores if the work is `worth_it` (big enough to pay for starting
    processes) and this process can fork them, else 1 (work in the calling process).

    Why not a fork server by default: a process with threads (the dashboard, a Prefect
    worker) cannot fork safely, and a fork server's workers re-run its `__main__` — under
    Streamlit the dashboard's script. There parallel work is asked for (`workers=N`) or
    orchestrated (Dask, `flows/evaluate.py`)."""
    from tcdb.ingest.readahead import fork_is_safe

    if requested is not None:
        return max(1, min(requested, n_tasks))
    if not worth_it or not fork_is_safe():
        return 1
    return max(1, min(available_cores(), n_tasks))


def share_out(work: Mapping[K, int], n_shares: int) -> list[list[K]]:
    """Items (item → its work) in up to `n_shares` shares of about equal work: the largest
    first to the lightest share (longest-processing-time), each share in item order."""
    shares: list[list[K]] = [[] for _ in range(max(1, n_shares))]
    load = [0] * len(shares)
    for item in sorted(work, key=lambda i: (-work[i], i)):
        lightest = load.index(min(load))
        shares[lightest].append(item)
        load[lightest] += work[item]
    return [sorted(share) for share in shares if share]


def run_in_processes(task: Callable[[Any, Item], Out], items: Sequence[Item], n_workers: int,
                     shared: Any = None) -> Iterator[tuple[int, Out]]:
    """`task(shared, item)` for every item in `n_workers` processes: (index, result) pairs in
    the order they finish. An error in a task re-raises here, and the rest are cancelled."""
    from tcdb.ingest.readahead import fork_is_safe

    fork = fork_is_safe()
    context = multiprocessing.get_context("fork" if fork else "forkserver")
    pool = ProcessPoolExecutor(max_workers=max(1, min(n_workers, len(items))),
                               mp_context=context, initializer=_start_worker,
                               initargs=(shared, os.getpid() if fork else None))
    with _no_main_to_rerun(not fork):
        futures = {pool.submit(_call, task, item): i for i, item in enumerate(items)}

    def results() -> Iterator[tuple[int, Out]]:
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        finally:
            pool.shutdown(cancel_futures=True)

    return results()


@contextmanager
def _no_main_to_rerun(active: bool) -> Iterator[None]:
    """While workers start from a fork server: `__main__` as a module without a file.

    A fork server's child runs the parent's `__main__` script again before its task, unless
    that has no file; in a dashboard the script is Streamlit's page, which must not run in a
    worker. The tasks live in tcdb's modules, so the workers need nothing of `__main__`.
    """
    if not active:
        yield
        return
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _start_worker(shared: Any, parent: int | None) -> None:
    """In a new worker: die with the process that started it (a killed parent cannot shut its
    pool down: the workers would wait forever and hold its pipes open), keep what every task
    needs, drop the parent's database engines."""
    global _SHARED
    from tcdb.storage.db import forget_inherited_engines

    _die_with_parent(parent)
    _SHARED = shared
    forget_inherited_engines()


def _die_with_parent(parent: int | None) -> None:
    """Linux: SIGKILL when the parent process ends (prctl PR_SET_PDEATHSIG). A forked worker
    whose parent (`parent`) ended before the request exits at once; a fork server's worker
    dies with the fork server, which ends with the process that started it."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def _call(task: Callable[[Any, Item], Out], item: Item) -> Out:
    return task(_SHARED, item)
