"""Starting the dashboard: the `streamlit run` command line and its environment.

Kept free of Streamlit imports so that `tcdb dashboard --help` stays fast.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

from sqlalchemy.engine import make_url

APP = Path(__file__).with_name("app.py")


def read_only_url(url: str) -> str:
    """The database URL with read-only sessions where the URL can say so (PostgreSQL).

    Why: the dashboard only reads; on PostgreSQL `default_transaction_read_only` makes the
    server refuse any write, whichever code path opens the session.
    """
    from tcdb.storage.urls import normalise_url

    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql" or "options" in parsed.query:
        return url
    return parsed.update_query_dict(
        {"options": "-c default_transaction_read_only=on"}).render_as_string(
        hide_password=False)


# Streamlit configured for a tool, not an app store: no Deploy button or developer menu, no
# "Ask Google / Ask ChatGPT" under errors, a calm primary colour (progress bars and chips are
# not alarm-red), no usage statistics, no file watcher.
TOOL_CONFIG = {
    "client.toolbarMode": "viewer",
    "client.showErrorLinks": "false",
    "theme.primaryColor": "#1f6fb2",
    "browser.gatherUsageStats": "false",
    "server.fileWatcherType": "none",
    "global.developmentMode": "false",
}
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def error_details(address: str) -> str:
    """How much of an unexpected error the browser shows: everything (type, message and
    traceback) to the person on this machine; only the error's type when the dashboard serves
    other machines (a traceback can show SQL, paths and the database's name)."""
    return "full" if address in LOOPBACK else "type"


def streamlit_command(port: int = 8501, address: str = "127.0.0.1") -> list[str]:
    """`python -m streamlit run dashboard/app.py` headless on `address:port`, configured for a
    tool (`TOOL_CONFIG`)."""
    options = {**TOOL_CONFIG, "client.showErrorDetails": error_details(address),
               "server.headless": "true", "server.port": str(port), "server.address": address}
    flags = [part for key, value in options.items() for part in (f"--{key}", value)]
    return [sys.executable, "-m", "streamlit", "run", str(APP), *flags]


def dashboard_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TCDB_DATABASE_URL"] = read_only_url(database_url)
    env.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    return env


def run_dashboard(database_url: str, port: int = 8501, address: str = "127.0.0.1") -> int:
    """Run Streamlit until it exits or this process gets SIGTERM / Ctrl-C; its exit code."""
    child = subprocess.Popen(streamlit_command(port, address), env=dashboard_env(database_url))

    def _stop(signum: int, frame: FrameType | None) -> None:
        child.terminate()

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.terminate()
        return child.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
