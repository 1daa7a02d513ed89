"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

PostgreSQL cases get a fresh database per test module on the server at
`TCDB_TEST_POSTGRES_URL` (default: the local server), dropped afterwards. Without a server they
skip with the reason, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

# Keep Prefect and ir_datasets out of the user's home, before anything imports them.
_SANDBOX = Path(tempfile.mkdtemp(prefix="tcdb-tests-"))
os.environ.setdefault("PREFECT_HOME", str(_SANDBOX / "prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_API_URL", "")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("IR_DATASETS_HOME", str(_SANDBOX / "ir_datasets"))
os.environ.pop("TCDB_DATABASE_URL", None)
if os.environ.get("PREFECT_API_URL") == "":
    del os.environ["PREFECT_API_URL"]

import pytest  # noqa: E402

from tests.builders import Seeded, seed_collection  # noqa: E402
from tests.databases import BACKENDS, create_database  # noqa: E402


@pytest.fixture(scope="module", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    """A migrated database shared by one test module, on each backend."""
    yield from create_database(request.param, tmp_path_factory.mktemp("db"))


@pytest.fixture
def db(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty migrated database, made the default (`TCDB_DATABASE_URL`) for this test."""
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    yield database_url


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run `tcdb ARGS…` in-process; returns (exit code, stdout, stderr)."""
    from tcdb.cli.app import run

    def invoke(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = run([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.fixture(scope="module")
def seeded_url(database_url: str, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[tuple[str, Seeded]]:
    """One seeded collection (`tests.builders.seed_collection`) per backend for a whole module
    whose tests only read it (the dashboard's pages)."""
    from tcdb.storage.db import truncate_all

    truncate_all(database_url)
    previous = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    try:
        seeded = seed_collection(tmp_path_factory.mktemp("seed"))
    finally:
        if previous is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = previous
    yield database_url, seeded


@pytest.fixture
def twins(db: str, tmp_path: Path) -> Path:
    """The source-bias corpus ingested as `cocktail/s1` with three runs
    (`tests.source_bias_corpus`)."""
    from tests.source_bias_corpus import ingest_twins

    return ingest_twins(tmp_path)


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[None]:
    """One throw-away Prefect API for the whole session (its start takes seconds)."""
    import tcdb.flows  # noqa: F401, I001 - configures Prefect's environment before prefect loads
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def dask_cluster() -> Iterator[str]:
    """A real Dask cluster: a scheduler and two worker processes on this machine; its
    scheduler's address."""
    from distributed import LocalCluster

    from tcdb.workers import _no_main_to_rerun

    # Dask spawns its workers, which would run this process's `__main__` again: under
    # pytest-xdist, after a dashboard test, that is Streamlit's page script
    with _no_main_to_rerun(True):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()
