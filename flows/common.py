"""What every tcdb flow shares: when a task may retry, and a stopwatch for the artifacts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tcdb.errors import TcdbError

# Failures a retry cannot fix even though they are OSErrors: the file is simply not there, or
# not ours to read. (A flaky network share or an interrupted download is worth another try.)
PERMANENT_OS_ERRORS: tuple[type[OSError], ...] = (
    FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError,
)
SOURCE_RETRIES = 2
SOURCE_RETRY_DELAYS = [5, 30]


def is_transient(exc: BaseException | None) -> bool:
    """True for failures worth another try: I/O hiccups and a database that went away.

    Bad input (`TcdbError`: InputError, NotFoundError, ConflictError, DatabaseError) is never
    transient: it fails at once with the same message the CLI prints.
    """
    if exc is None or isinstance(exc, TcdbError):
        return False
    if isinstance(exc, OSError):
        return not isinstance(exc, PERMANENT_OS_ERRORS)
    from sqlalchemy.exc import OperationalError

    return isinstance(exc, OperationalError)


def retry_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect `retry_condition_fn`: retry a failed task run only when its error is transient."""
    data = getattr(state, "data", None)
    if isinstance(data, BaseException):
        return is_transient(data)
    try:
        exc = state.result(raise_on_failure=False)
    except Exception as raised:  # noqa: BLE001 - the result itself may re-raise the failure
        exc = raised
    return is_transient(exc if isinstance(exc, BaseException) else None)


class Stopwatch:
    """Named timings for a flow's artifact (seconds, in the order the steps ran)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.steps: dict[str, float] = {}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.steps[name] = self.steps.get(name, 0.0) + time.perf_counter() - start

    @property
    def total(self) -> float:
        return time.perf_counter() - self.started
