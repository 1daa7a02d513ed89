"""Job 1 as it runs in production: a schedule fires on its own.

A real `prefect server start` (its scheduler service on; Prefect's own database on SQLite, or on
PostgreSQL beside tcdb's), `tcdb serve --spec my.yaml` registering the user's spec with a
schedule seconds apart, a real process worker on the work pool, and no manual trigger: the test
waits until the server's scheduler has created a flow run and the worker has completed it,
ingesting a new LongEval-shaped snapshot. The worker runs in a folder of its own and without
TCDB_DATABASE_URL, as a process worker does (each flow in a temporary folder): the deployment
must carry the database, its relative SQLite path made absolute.

On Prefect 3.8 with SQLAlchemy 2.1 the scheduler fails every loop ("Can't evaluate bulk DML
statement") and this test times out with no run created; requirements.lock pins the pair that
works.
"""

from __future__ import annotations

import json
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

import pytest

from tests.databases import BACKENDS, create_database, empty_postgres_database
from tests.scheduled import snapshot_rows, write_scheduled_spec

pytestmark = [pytest.mark.slow, pytest.mark.server]

BIN = Path(sys.executable).parent
INTERVAL = 15  # seconds between scheduled runs
WAIT = 420  # for the scheduler to create a run and the worker to finish it, on a busy host

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _base_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "TCDB_"))}
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", PYTHONUNBUFFERED="1",
               PREFECT_LOGGING_LEVEL="INFO", COLUMNS="80", **extra)
    return env


@contextmanager
def _process(args: list[str], cwd: Path, env: dict[str, str], log: Path) -> Iterator[None]:
    """A background process, its output in `log`, stopped (the whole group) at the end."""
    with log.open("w") as out:
        process = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            yield
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


@contextmanager
def _prefect_database(backend: str, home: Path) -> Iterator[dict[str, str]]:
    """Settings for the Prefect server's own database: SQLite in its home, or a fresh
    PostgreSQL database (through asyncpg, as Prefect requires)."""
    if backend == "sqlite":
        yield {}
        return
    with empty_postgres_database("prefect", driver="postgresql+asyncpg") as url:
        yield {"PREFECT_SERVER_DATABASE_CONNECTION_URL": url}


def _wait_healthy(api: str, log: Path, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"the Prefect server did not answer in {seconds} s:\n{log.read_text()}")


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_scheduler_creates_a_run_and_a_worker_ingests_the_new_snapshot(
    backend: str, tmp_path: Path
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "worker-folder"
    project.mkdir()
    elsewhere.mkdir()
    irds_home = tmp_path / "irds"
    spec = write_scheduled_spec(project, irds_home, INTERVAL)
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"

    with _prefect_database(backend, tmp_path / "prefect-server") as prefect_db, \
            _tcdb_database(backend, project) as (tcdb_url, tcdb_env):
        server_env = _base_env(PREFECT_HOME=str(tmp_path / "prefect-server"),
                               PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS="5",
                               **prefect_db)
        server_log = tmp_path / "server.log"
        with _process([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1",
                       "--port", str(port), "--no-ui", "--scheduler"],
                      tmp_path, server_env, server_log):
            _wait_healthy(api, server_log)
            client_env = _base_env(PREFECT_HOME=str(tmp_path / "prefect-client"),
                                   PREFECT_API_URL=api, IR_DATASETS_HOME=str(irds_home),
                                   **tcdb_env)
            served = _run([str(BIN / "tcdb"), "serve", "--spec", str(spec), "--json"],
                          project, client_env)
            assert served.returncode == 0, served.stderr + served.stdout
            registered = json.loads(served.stdout)
            names = {d["name"]: d for d in registered["deployments"]}
            # only what was asked: the spec given, and the hourly imports and evaluation
            assert set(names) == {"ingest-my-longeval", "import-runs", "evaluate"}
            assert names["ingest-my-longeval"]["schedule"] == f"every {INTERVAL} s"
            assert names["ingest-my-longeval"]["parameters"] == {"spec_path": str(spec)}
            assert registered["database_url"] == tcdb_url  # absolute, for any folder

            worker_env = _base_env(PREFECT_HOME=str(tmp_path / "prefect-worker"),
                                   PREFECT_API_URL=api, IR_DATASETS_HOME=str(irds_home),
                                   PREFECT_WORKER_QUERY_SECONDS="2")
            worker_log = tmp_path / "worker.log"
            with _process([str(BIN / "prefect"), "worker", "start", "--pool", "tcdb",
                           "--type", "process"], elsewhere, worker_env, worker_log):
                status = _wait_for_a_scheduled_run(project, client_env, worker_log,
                                                   server_log)
            ingest = next(d for d in status["deployments"] if d["name"] == "ingest-my-longeval")
            assert ingest["last_run"]["auto_scheduled"] is True  # the scheduler made it
            assert ingest["last_run"]["state"] == "Completed"
            assert "ingested 2022-06 (12 documents)" in ingest["last_run"]["outcome"]
            assert status["workers"]["tcdb"], status  # the worker was seen polling
            assert not status["problems"], status

            shown = _run([str(BIN / "tcdb"), "flows", "status"], project, client_env)
            assert shown.returncode == 0, shown.stderr
            assert "ingest-my-longeval" in shown.stdout and "Completed" in shown.stdout

        assert snapshot_rows(tcdb_url) == [("2022-06", "complete", 12)]


@contextmanager
def _tcdb_database(backend: str, project: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """tcdb's database: on SQLite the default relative `tcdb.sqlite` of the project folder
    (created by `tcdb db upgrade` there), which the deployment must name absolutely; on
    PostgreSQL a fresh database named by TCDB_DATABASE_URL."""
    if backend == "sqlite":
        created = _run([str(BIN / "tcdb"), "db", "upgrade"], project, _base_env())
        assert created.returncode == 0, created.stderr
        yield f"sqlite:///{(project / 'tcdb.sqlite').resolve()}", {}
        return
    generator = create_database("postgres", project)
    url = next(generator)
    try:
        yield url, {"TCDB_DATABASE_URL": url}
    finally:
        next(generator, None)


def _wait_for_a_scheduled_run(project: Path, env: dict[str, str], worker_log: Path,
                              server_log: Path) -> dict:
    """`tcdb flows status --json` until the ingest deployment's last run has completed."""
    deadline = time.monotonic() + WAIT
    last = ""
    while time.monotonic() < deadline:
        result = _run([str(BIN / "tcdb"), "flows", "status", "--json"], project, env)
        last = result.stdout + result.stderr
        if result.returncode == 0:
            status = json.loads(result.stdout)
            for deployment in status["deployments"]:
                run = deployment["last_run"]
                if deployment["name"] == "ingest-my-longeval" and run and \
                        run["state"] in ("Completed", "Failed", "Crashed"):
                    if run["state"] != "Completed":
                        pytest.fail(f"the scheduled run ended {run['state']}:\n"
                                    f"{worker_log.read_text()[-6000:]}")
                    return status
        time.sleep(5)
    pytest.fail(f"no scheduled run completed in {WAIT} s.\nstatus: {last}\n"
                f"server log (end):\n{server_log.read_text()[-6000:]}\n"
                f"worker log (end):\n{worker_log.read_text()[-3000:]}")
