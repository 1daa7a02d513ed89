"""What "the database is exactly as it was" means in these tests: every table of the model,
its row count and a digest of its rows, so an update that keeps the count shows too."""

from __future__ import annotations

import hashlib

from sqlalchemy import select


def database_state(url: str) -> dict[str, tuple[int, str]]:
    """Table name → (rows, sha1 of the rows in a fixed order), for every table tcdb defines."""
    from tcdb.schema import metadata
    from tcdb.storage.db import get_engine

    state: dict[str, tuple[int, str]] = {}
    with get_engine(url).connect() as conn:
        for table in metadata.sorted_tables:
            rows = sorted(repr(tuple(row)) for row in conn.execute(select(table)))
            digest = hashlib.sha1("\n".join(rows).encode(), usedforsecurity=False).hexdigest()
            state[table.name] = (len(rows), digest)
    return state


def row_counts(url: str) -> dict[str, int]:
    """Table name → rows, for every table tcdb defines."""
    return {name: n for name, (n, _) in database_state(url).items()}
