"""The database a command runs on: `--database-url` (or `TCDB_DATABASE_URL`), read once by
the root callback and kept in Click's root context, never written into the environment."""

from __future__ import annotations

# Typer's own Click (not the `click` package): its context stack is the one commands run in
from typer._click.globals import get_current_context

from tcdb.operations.database import Database


def cli_database() -> Database:
    """The handle of this command's database (the configured one outside a command)."""
    ctx = get_current_context(silent=True)
    url = ctx.find_root().obj if ctx is not None else None
    return Database(url if isinstance(url, str) else None)
