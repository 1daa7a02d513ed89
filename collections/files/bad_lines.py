"""Bad lines in big files: refused (the default), or set aside and said (`--on-bad-lines`).

Every reader raises `InputError` naming the file, the line and the reason. Under `error` that
stays the answer, as a `BadLine` (a front end that offers the flag names it: the CLI adds
"--on-bad-lines warn|skip sets such lines aside"); under `warn` or `skip` (pandas' words) a reader
that can go on after a bad line yields a `Rejected` in its place instead, and goes on. The
ingest counts them, writes each to the rejects file (`write_rejects`) and stores the count on
the snapshot: a line is never dropped without a word.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tcdb.collections.sources.records import Rejected
from tcdb.errors import InputError
from tcdb.vocabulary import OnBadLines

__all__ = ["REJECTS_HEADER", "BadLine", "BadLines", "keeps_going", "one_line",
           "rejects_target", "set_aside", "write_rejects"]
REJECTS_HEADER = ("file", "line", "reason")


def keeps_going(mode: OnBadLines | str) -> bool:
    """Whether a reader sets bad lines aside (warn, skip) rather than refusing the file."""
    return OnBadLines(mode) is not OnBadLines.error


class BadLine(InputError):
    """A bad line refused under `error` that `warn` or `skip` would have set aside: the same
    message, so a front end that offers the choice can say so (the CLI names its flag)."""


@dataclass
class BadLines:
    """What a reader called under `--on-bad-lines` does with a bad line: refuse it (as a
    `BadLine`), or (`keep_going`) set it aside — into `rejected`, or, for a streaming reader,
    as a `Rejected` in its stream. A reader called without one (`qrels import`, …) refuses
    as it always did: no flag there to hint at."""

    keep_going: bool = False
    rejected: list[Rejected] = field(default_factory=list)


def set_aside(error: InputError, bad: BadLines | None) -> Rejected:
    """The `Rejected` for a bad line when `bad` keeps going; else the error again (a `BadLine`
    when the reader was called under the choice)."""
    if bad is None or error.line is None or isinstance(error, BadLine):
        raise error
    if not bad.keep_going:
        raise BadLine(error.file, error.line, error.reason) from None
    return Rejected(error.file, error.line, error.reason)


@contextmanager
def one_line(bad: BadLines | None) -> Iterator[None]:
    """Around the reading of one line: its `InputError` is raised (`set_aside`), or set aside
    into `bad.rejected`, and reading goes on with the next line."""
    try:
        yield
    except InputError as exc:
        kept = set_aside(exc, bad)
        assert bad is not None  # set_aside raised otherwise
        bad.rejected.append(kept)


def rejects_target(mode: OnBadLines | str, given: Path | None, default: str) -> Path | None:
    """Where an import under `mode` writes the lines it sets aside (`given`, else `default` in
    the current folder), checked before any work; None under `error`, which sets none aside."""
    if not keeps_going(mode):
        return None
    from tcdb.collections.files.opening import check_output

    return check_output(given or Path(default), "rejects")


def write_rejects(path: Path, rejected: Iterable[Rejected]) -> str:
    """The set-aside lines as TSV (file, line, reason), cells neutralised for spreadsheets,
    written whole or not at all (callers write before their commit); returns the file's name
    as a summary says it (absolute, or `-` for standard output)."""
    from tcdb.collections.files.csv_safe import write_csv
    from tcdb.collections.files.opening import is_stdout

    write_csv(((r.file, "" if r.line is None else r.line, r.reason) for r in rejected), path,
              header=REJECTS_HEADER, delimiter="\t")
    return str(path if is_stdout(path) else path.absolute())
