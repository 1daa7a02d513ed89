"""The database handle an operation is given: which database, opened how.

Why a handle rather than a global: the CLI, a notebook, a flow on a worker and a test each say
which database they mean, and an operation never guesses. The operation passes its handle to
everything it calls that reads or writes; nothing below finds a database on its own.
`Database()` is the configured one (`TCDB_DATABASE_URL`, else `sqlite:///tcdb.sqlite`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlmodel import Session


@dataclass(frozen=True, init=False)
class Database:
    """A database by URL, resolved when the handle is made (no URL: the configured one)."""

    url: str

    def __init__(self, url: str | None = None) -> None:
        from tcdb.storage.db import configured_url
        from tcdb.storage.urls import normalise_url

        object.__setattr__(self, "url", normalise_url(url) if url else configured_url())

    @property
    def shown(self) -> str:
        """The URL with its password hidden, for messages."""
        from tcdb.storage.urls import mask_url

        return mask_url(self.url)

    def engine(self, *, read_only: bool = False) -> Engine:
        """This database's engine (one per URL per process)."""
        from tcdb.storage.db import get_engine

        return get_engine(self.url, read_only=read_only)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed when the block ends, rolled back on an error."""
        from tcdb.storage.db import session_scope

        with session_scope(self.url) as session:
            yield session

    @contextmanager
    def write_session(self, lock: str | None = None, *, busy: str | None = None,
                      waiting: str | None = None, immediate: bool = True) -> Iterator[Session]:
        """A write transaction holding the locks its writes need (`tcdb.storage.locks`)."""
        from tcdb.storage.locks import locked_session

        with locked_session(self.url, lock, busy=busy, waiting=waiting,
                           immediate=immediate) as session:
            yield session
