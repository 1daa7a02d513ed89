"""What every tcdb flow shares: when a task may retry, user errors logged in one line, and a
stopwatch for the artifacts."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
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
SOURCE_RETRY_DELAYS: list[float] = [5, 30]


def is_transient(exc: BaseException | None) -> bool:
    """True for failures worth another try: I/O hiccups and a database that went away.

    Bad input (`TcdbError`: InputError, NotFoundError, ConflictError, DatabaseError) is never
    transient: it fails at once with the same message the CLI prints. The exception is an
    error that says so (`transient`): a database the server disconnected or could not yet
    serve (`DatabaseUnavailableError`: a terminated backend, a restart), which wrote nothing.
    """
    if exc is None:
        return False
    if isinstance(exc, TcdbError):
        return bool(getattr(exc, "transient", False))
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


# Prefect's loggers of flow and task runs: the ones that log a failing run's exception.
RUN_LOGGERS = ("prefect.flow_runs", "prefect.task_runs")


class UserErrorsInOneLine(logging.Filter):
    """Prefect logs the exception that ends a flow or task run with its full traceback; for a
    `TcdbError` (bad input, an unknown name: the user's to fix) its one-line message says all.

    Such a record loses its traceback and becomes the message itself, and is dropped when the
    same run already logged that error (a flow that logs each bad file, then fails with the
    first). Everything else passes unchanged: a bug keeps its traceback.
    """

    KEEP_RUNS = 256  # runs whose logged errors are remembered (a server runs flows for weeks)

    def __init__(self) -> None:
        super().__init__()
        self._errors: OrderedDict[str, list[str]] = OrderedDict()  # run id → messages
        self._lock = threading.Lock()  # task runs may log from several threads

    def filter(self, record: logging.LogRecord) -> bool:
        run = str(getattr(record, "flow_run_id", None) or getattr(record, "task_run_id", ""))
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, TcdbError):
            record.msg, record.args = "%s", (str(error),)
            record.exc_info = record.exc_text = record.stack_info = None
            with self._lock:
                if any(str(error) in said for said in self._errors.get(run, [])):
                    return False
        if record.levelno >= logging.ERROR:
            try:
                message = record.getMessage()
            except (TypeError, ValueError):  # a malformed record: logging reports it itself
                return True
            with self._lock:
                self._errors.setdefault(run, []).append(message)
                self._errors.move_to_end(run)
                while len(self._errors) > self.KEEP_RUNS:
                    self._errors.popitem(last=False)
        return True


def quiet_user_errors() -> None:
    """Install `UserErrorsInOneLine` on Prefect's run loggers (once; before or after Prefect
    configured its logging: its dictConfig keeps a logger's filters)."""
    loggers = [logging.getLogger(name) for name in RUN_LOGGERS]
    if any(isinstance(f, UserErrorsInOneLine) for lg in loggers for f in lg.filters):
        return
    shared = UserErrorsInOneLine()  # one memory: a task's error line counts for its flow run
    for logger in loggers:
        logger.addFilter(shared)


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
