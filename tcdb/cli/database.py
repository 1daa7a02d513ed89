"""The database a command runs on: `--database-url` (or `TCDB_DATABASE_URL`), read once by
the root callback and kept in Click's root context, never written into the environment."""

from __future__ import annotations

import os

# Typer's own Click (not the `click` package): its context stack is the one commands run in
from typer._click.globals import get_current_context

from tcdb.operations.database import Database


def given_url() -> str | None:
    """The database URL as the user gave it (`--database-url` or `TCDB_DATABASE_URL`; outside a
    command, the environment's), None when neither was given."""
    ctx = get_current_context(silent=True)
    url = ctx.find_root().obj if ctx is not None else os.environ.get("TCDB_DATABASE_URL")
    return url if isinstance(url, str) and url else None


def cli_database() -> Database:
    """The handle of this command's database (the configured one outside a command)."""
    return Database(given_url())
