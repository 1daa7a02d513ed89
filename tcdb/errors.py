"""Errors tcdb reports to people: each says what went wrong, where, and writes nothing."""

from __future__ import annotations

from pathlib import Path


class TcdbError(Exception):
    """An error the CLI prints as one clear line (no traceback) before exiting non-zero."""


class InputError(TcdbError):
    """Bad input data: names the file, the line (1-based, when there is one) and the reason."""

    def __init__(self, file: str | Path | None, line: int | None, reason: str) -> None:
        self.file = str(file) if file is not None else None
        self.line = line
        self.reason = reason
        super().__init__(self._format())

    def __reduce__(self) -> tuple[type, tuple[str | None, int | None, str]]:
        # pickled as its three parts, so it crosses from a reader process unchanged
        return (type(self), (self.file, self.line, self.reason))

    def _format(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.reason}"


class NotFoundError(TcdbError):
    """A named thing (collection, snapshot, qrels set, run, pool, …) does not exist."""


class ConflictError(TcdbError):
    """The request contradicts what is stored (a different source under an existing label, …)."""


class DatabaseError(TcdbError):
    """The database cannot be reached, or is not at the schema revision this tcdb expects."""
