"""A real Prefect server for `tcdb serve` when no `PREFECT_API_URL` names one.

Prefect's embedded (ephemeral) API runs no scheduler service: deployments served against it
are never given a run by their schedules. So `tcdb serve` on its own starts `prefect server
start` (scheduler on, state in `PREFECT_HOME`, log in `PREFECT_HOME/server.log`) on this
machine, serves the deployments against it, and stops it when it stops.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tcdb.errors import TcdbError

DEFAULT_PORT = 4200
STARTUP_SECONDS = 180  # a first start migrates Prefect's database: 10-20 s, more when busy


def free_port(preferred: int = DEFAULT_PORT) -> int:
    """`preferred` when nothing listens there, else a port the system picks."""
    for port in (preferred, 0):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise TcdbError("no free local port for the Prefect server")


@contextmanager
def local_prefect_server(home: Path, port: int | None = None) -> Iterator[str]:
    """Start `prefect server start` on 127.0.0.1 and yield its API URL once it answers; stop
    it (SIGTERM, then SIGKILL) when the block ends."""
    port = port or free_port()
    api = f"http://127.0.0.1:{port}/api"
    home.mkdir(parents=True, exist_ok=True)
    log = home / "server.log"
    env = {**os.environ, "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
             "--port", str(port), "--scheduler", "--analytics-off"],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        _wait_until_healthy(api, process, log)
        yield api
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_healthy(api: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise TcdbError(f"the Prefect server stopped at start (exit {process.returncode}): "
                            f"{_last_line(log)} (log: {log})")
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise TcdbError(f"the Prefect server did not answer at {api} within {STARTUP_SECONDS} s "
                    f"(log: {log})")


def _last_line(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"
