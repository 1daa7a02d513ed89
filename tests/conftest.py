"""Shared fixtures: every database test runs on SQLite and on PostgreSQL.

PostgreSQL cases get a fresh database per test module on the server at
`TCDB_TEST_POSTGRES_URL` (default: the local server), dropped afterwards. Without a server they
skip with the reason, except under `CI=true`, where they fail.
"""

from __future__ import annotations

import os
import tempfile
import uuid
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
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

POSTGRES_URL = os.environ.get(
    "TCDB_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
IN_CI = os.environ.get("CI", "").lower() == "true"
BACKENDS = ["sqlite", "postgres"]


def _postgres_unavailable() -> str | None:
    try:
        engine = create_engine(POSTGRES_URL, connect_args={"connect_timeout": 3})
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        engine.dispose()
    except Exception as exc:  # noqa: BLE001 - any failure means "no server"
        return f"no PostgreSQL at {POSTGRES_URL}: {str(exc).splitlines()[0]}"
    return None


_PG_REASON: str | None | bool = False


def require_postgres() -> None:
    """Skip (or, under CI=true, fail) when no PostgreSQL server answers."""
    global _PG_REASON
    if _PG_REASON is False:
        _PG_REASON = _postgres_unavailable()
    if _PG_REASON:
        if IN_CI:
            pytest.fail(f"PostgreSQL is required under CI=true: {_PG_REASON}")
        pytest.skip(str(_PG_REASON))


def _reset_caches() -> None:
    from tcdb.settings import get_settings

    get_settings.cache_clear()


def create_database(backend: str, folder: Path) -> Iterator[str]:
    """A fresh, migrated database; yields its URL and removes it afterwards."""
    from tcdb import db, migrate

    if backend == "sqlite":
        url = f"sqlite:///{folder / f'tcdb-{uuid.uuid4().hex[:8]}.sqlite'}"
        migrate.upgrade(url)
        yield url
        db.dispose_engine(url)
        return
    require_postgres()
    name = f"tcdb_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(url)
        yield url
    finally:
        db.dispose_engine(url)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[str]:
    """A migrated database shared by one test module, on each backend."""
    yield from create_database(request.param, tmp_path_factory.mktemp("db"))


@pytest.fixture
def db(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """An empty migrated database, made the default (`TCDB_DATABASE_URL`) for this test."""
    from tcdb.db import truncate_all

    truncate_all(database_url)
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    _reset_caches()
    yield database_url
    _reset_caches()


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


def repro_eval_anchors() -> Path:
    """The repro_eval anchor data (`shared/anchors/repro_eval`), read in place, never copied.

    `TCDB_REPRO_EVAL_ANCHORS`, else `shared/` beside the checkout (where CI puts it), else the
    workplace's `/work/shared`. Missing: skip, except under CI=true, where it is a failure.
    """
    candidates = [Path(p) for p in [os.environ.get("TCDB_REPRO_EVAL_ANCHORS")] if p] + [
        Path(__file__).resolve().parents[2] / "shared" / "anchors" / "repro_eval",
        Path("/work/shared/anchors/repro_eval"),
    ]
    for folder in candidates:
        if (folder / "per_topic_scores").is_dir():
            return folder
    where = ", ".join(str(c) for c in candidates)
    if IN_CI:
        pytest.fail(f"repro_eval anchors are required under CI=true; looked in {where}")
    pytest.skip(f"repro_eval anchors not found (looked in {where})")
