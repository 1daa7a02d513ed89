"""Errors tcdb reports to people: each says what went wrong, where, and writes nothing."""

from __future__ import annotations

from pathlib import Path


class TcdbError(Exception):
    """An error the CLI prints as one clear line (no traceback) before exiting non-zero."""


class InputError(TcdbError):
    """Bad input data: names the file (or other source), the line (1-based, when there is
    one) and the reason."""

    def __init__(self, file: str | Path, line: int | None, reason: str) -> None:
        self.file = str(file)
        self.line = line
        self.reason = reason
        where = self.file if line is None else f"{self.file}:{line}"
        super().__init__(f"{where}: {reason}")

    def __reduce__(self) -> tuple[type, tuple[str, int | None, str]]:
        # pickled as its three parts, so it crosses from a reader process unchanged
        return (type(self), (self.file, self.line, self.reason))


class FieldError(InputError):
    """A bad value of a request's field: names the field (`depth`, or several that go together
    as `irds/docs`) and why. The core speaks in fields; each front end names them its own way
    (the CLI as its flags, `--depth`; the API as its parameters, `depth`).
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, None, reason)
        self.field = field

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # type: ignore[override]
        return (type(self), (self.field, self.reason))


class OptionError(InputError):
    """A bad option or argument: names it (`--depth`, or several that go together) and why.

    Input too, so whatever catches bad input catches it; what it names is an option, not a file.
    """

    def __init__(self, option: str, reason: str) -> None:
        super().__init__(option, None, reason)
        self.option = option

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # type: ignore[override]
        return (type(self), (self.option, self.reason))


class NotFoundError(TcdbError):
    """A named thing (collection, snapshot, qrels set, run, pool, …) does not exist."""


class ConflictError(TcdbError):
    """The request contradicts what is stored (a different source under an existing label, …)."""


class BusyError(ConflictError):
    """Another process is writing the same thing right now (an ingest of this snapshot, or
    SQLite's single writer past its busy timeout): the same request later will go through."""


class DatabaseError(TcdbError):
    """The database cannot be reached, or is not at the schema revision this tcdb expects."""
