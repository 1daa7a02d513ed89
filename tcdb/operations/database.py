"""The database handle an operation is given: which database, opened how.

Why a handle rather than a global: the CLI, a notebook, a flow on a worker and a test each say
which database they mean, and an operation never guesses. `Database()` is the default one
(`TCDB_DATABASE_URL`, else `sqlite:///tcdb.sqlite`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlmodel import Session


@dataclass(frozen=True)
class Database:
    """A database by URL; `None` is the configured default."""

    url: str | None = None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back on an error."""
        from tcdb.storage.db import session_scope

        with session_scope(self.url) as session:
            yield session
