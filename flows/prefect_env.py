"""Prefect's environment for tcdb, set before anything imports prefect.

Prefect reads its settings once, when it is first imported, and by default keeps its state
(SQLite database, profiles, local result storage) under `~/.prefect` and reports analytics.
tcdb keeps that state in the project (`./.prefect`) unless `PREFECT_HOME` says otherwise, turns
analytics off (server and client) and chooses logging that says what the flows did without
drowning it. Every command that uses Prefect calls `configure_prefect()` first; `tcdb.flows`
does so on import.

This module must not import prefect itself.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PREFECT_HOME = ".prefect"

# Settings applied unless the environment already sets them.
DEFAULTS: dict[str, str] = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # The client's side of the same: no usage data sent, and no notice about it on stdout
    # (which `tcdb flows status --json` and friends keep for their JSON).
    "DO_NOT_TRACK": "1",
    "PREFECT_LOGGING_LEVEL": "INFO",
    # Flow-run logs go to the API; logs outside a run (imports, CLI) stay on the console only.
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
    # The embedded (ephemeral) server starts in 10–20 s on a cold machine; don't give up at 20.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_CLI_PROMPT": "false",
}


def configure_prefect(home: str | Path | None = None) -> Path:
    """Point Prefect at a project-local home and quiet defaults; returns the home folder.

    Existing environment variables win, so a deployment (docker compose, CI) can override any of
    them. Called after prefect was imported it still sets the variables, but Prefect has already
    read its settings — hence callers do it first.
    """
    if "PREFECT_HOME" not in os.environ or not os.environ["PREFECT_HOME"]:
        folder = Path(home) if home is not None else Path.cwd() / DEFAULT_PREFECT_HOME
        os.environ["PREFECT_HOME"] = str(folder.expanduser().resolve())
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ.get("PREFECT_API_URL", None) == "":
        # An empty URL is "unset" to people but an invalid URL to Prefect.
        del os.environ["PREFECT_API_URL"]
    return Path(os.environ["PREFECT_HOME"])


def api_url() -> str | None:
    """The Prefect server to register with, or None for the embedded (local) API."""
    return os.environ.get("PREFECT_API_URL") or None
