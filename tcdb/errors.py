"""Errors tcdb reports to people: each says what went wrong, where, and writes nothing."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# A message quotes data (an id, a line, a value): a run of text longer than WORD_LIMIT without a
# space keeps its first WORD_KEEP characters, and a message still longer than MESSAGE_LIMIT keeps
# its start and its end, so a 10 MB identifier makes a line of a few hundred characters.
WORD_LIMIT = 200
WORD_KEEP = 80
MESSAGE_LIMIT = 2000
_LONG_WORD = re.compile(rf"\S{{{WORD_LIMIT + 1},}}")


def cut(text: str) -> str:
    """`text` with each over-long run of data cut to its start and its length: `abcd… (N
    characters)`. Every TcdbError's message goes through here, so no call site has to."""
    if len(text) <= WORD_LIMIT:
        return text
    text = _LONG_WORD.sub(lambda m: f"{m.group()[:WORD_KEEP]}… ({len(m.group()):,} characters)",
                          text)
    if len(text) > MESSAGE_LIMIT:
        head, tail = MESSAGE_LIMIT * 3 // 4, MESSAGE_LIMIT // 8
        text = f"{text[:head]}… ({len(text) - head - tail:,} characters) …{text[-tail:]}"
    return text


class TcdbError(Exception):
    """An error the CLI prints as one clear line (no traceback) before exiting non-zero."""

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str):
            args = (cut(args[0]), *args[1:])
        super().__init__(*args)


class InputError(TcdbError):
    """Bad input data: names the file (or other source), the line (1-based, when there is
    one) and the reason."""

    def __init__(self, file: str | Path, line: int | None, reason: str) -> None:
        self.file = str(file)
        self.line = line
        self.reason = cut(reason)  # the data it quotes, not the file it names, is cut
        where = self.file if line is None else f"{self.file}:{line}"
        Exception.__init__(self, f"{where}: {self.reason}")

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
    """The database cannot be reached, or is not at the schema revision this tcdb expects, or
    refused the work (not a database, read-only, full): one line, nothing written.

    `transient`: the same request later may go through (Prefect tasks retry those)."""

    transient = False


class DatabaseReadOnlyError(DatabaseError):
    """The database refuses writes: a read-only file, folder or mount, or a read-only
    PostgreSQL transaction or role. Nothing was written."""


class DatabaseFullError(DatabaseError):
    """The disk that holds the database is full. Nothing was written."""


class DatabaseNewerError(DatabaseError):
    """The database's schema is at a revision this tcdb does not know: a newer tcdb wrote it."""


class DatabaseUnavailableError(DatabaseError):
    """The server cannot be reached, or ended the connection mid-work (a terminated backend, a
    restart): nothing was written, and the same request later may well go through."""

    transient = True


class SourceUnavailableError(TcdbError):
    """A source's data is neither here nor fetchable now: an ir_datasets download that failed
    (offline, a mirror down). Nothing was written; the same request succeeds once the files
    are in place."""


SHOWN_NAMES = 5  # how many names a message lists before "and N more"


def some(names: Iterable[object], shown: int = SHOWN_NAMES) -> str:
    """Names for a message, the first few of them and a count of the rest: `a, b, c, d, e and
    4,995 more`. Every message that lists names from the data (runs, topics, snapshots, qrels
    sets, …) goes through here, so 5,000 unknown run tags make one short line, not 1,780
    characters of tags."""
    items = [str(name) for name in names]
    if len(items) <= shown + 1:  # "and 1 more" says no less than the name itself
        return ", ".join(items)
    return f"{', '.join(items[:shown])} and {len(items) - shown:,} more"
