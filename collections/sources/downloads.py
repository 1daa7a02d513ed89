"""A download ir_datasets had to make and could not (offline, a mirror down), said in one line.

ir_datasets raises `RuntimeError('All download sources failed', [(source, error), …])`, or the
one source's own connection error, and logs a line per failed try; tcdb says it once, naming the
dataset, each source tried and what to do offline (`SourceUnavailableError`).
"""

from __future__ import annotations

import logging
import re
import urllib.error
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tcdb.errors import SourceUnavailableError

DOWNLOAD_LOGGERS = ("ir_datasets", "ir_datasets.util.download")


@contextmanager
def quiet_download_failures() -> Iterator[None]:
    """Leave out ir_datasets' log lines of each failed download try ("Download failed: …",
    "download error: … Retrying"); its progress and other messages stay."""
    def keep(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("Download failed", "download error"))

    # ir_datasets names each module's logger after it and does not propagate its records
    loggers = [logging.getLogger(name) for name in DOWNLOAD_LOGGERS]
    for logger in loggers:
        logger.addFilter(keep)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(keep)


def download_failure(dataset_id: str, exc: BaseException) -> SourceUnavailableError | None:
    """The error to say when `exc` is ir_datasets failing to download a file it needs
    (`RuntimeError('All download sources failed', [(source, error), …])`, or the one source's
    own connection error); None for any other error."""
    import ir_datasets

    if isinstance(exc, RuntimeError) and exc.args[:1] == ("All download sources failed",):
        tried = [(getattr(source, "url", None) or str(source), error)
                 for source, error in (exc.args[1] if len(exc.args) > 1 else [])]
    elif _is_connection_error(exc):
        tried = [(None, exc)]
    else:
        return None
    reasons = "; ".join(f"{url}: {_first_line(error)}" if url else _first_line(error)
                        for url, error in tried) or "no source answered"
    home = ir_datasets.util.home_path()
    return SourceUnavailableError(
        f"ir_datasets {dataset_id}: its files are not in {home} and could not be downloaded "
        f"(tried {reasons}). Offline, copy the files into {home} where ir_datasets keeps them "
        "(IR_DATASETS_HOME), or declare the snapshot from local files (docs, topics, qrels)")


def _is_connection_error(exc: BaseException) -> bool:
    """A failure to reach a server (requests' or urllib's), not a local file's error."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, urllib.error.URLError | ConnectionError | TimeoutError) or \
        bool(names & {"ConnectionError", "ConnectTimeout", "ReadTimeout", "SSLError"})


def _first_line(error: BaseException) -> str:
    """A connection error's gist: requests nests the resolver's words deep in its text."""
    text = str(error)
    for pattern in (r"Failed to resolve '[^']+'", r"Name or service not known",
                    r"Connection refused", r"timed out"):
        found = re.search(pattern, text)
        if found:
            return found.group()
    return text.strip().splitlines()[0][:200] if text.strip() else type(error).__name__


def fetched(dataset_id: str, records: Callable[[], Iterator[Any]]) -> Iterator[Any]:
    """ir_datasets' records; a download it had to make and could not is one line naming the
    dataset, the sources tried and what to do offline (never its traceback, nor its log lines
    for each failed try, which that line repeats)."""
    try:
        with quiet_download_failures():
            yield from records()
    except (RuntimeError, OSError) as exc:
        failure = download_failure(dataset_id, exc)
        if failure is None:
            raise
        raise failure from None
