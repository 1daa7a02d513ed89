"""`tcdb --version`, `db upgrade`, `info --json`, and one-line errors for bad databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import text

from tcdb.storage.db import get_engine
from tcdb.storage.urls import mask_url, normalise_url
from tests.databases import require_postgres


def test_version(cli) -> None:
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith("tcdb ")


def test_help_is_fast_and_imports_nothing_heavy(tmp_path: Path) -> None:
    probe = ("import sys; from tcdb.cli.app import app; "
             "heavy = [m for m in ('pandas', 'prefect', 'streamlit', 'ir_datasets', 'scipy', "
             "'ir_measures', 'sqlalchemy', 'sqlmodel', 'numpy') if m in sys.modules]; "
             "print(','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=tmp_path, check=True)
    assert result.stdout.strip() == ""


def test_upgrade_and_info_on_a_fresh_sqlite_file(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    code, _, err = cli("--database-url", url, "db", "upgrade")
    assert code == 0, err
    code, out, err = cli("--database-url", url, "info", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["backend"] == "sqlite" and info["revision"]
    assert info["tables"]["run_entry"] == 0 and "snapshot_document" in info["tables"]


def test_info_on_both_backends(cli, database_url: str) -> None:
    code, out, err = cli("--database-url", database_url, "info", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["revision"] and info["database_url"] == mask_url(normalise_url(database_url))
    assert info["backend"] == ("postgresql" if "postgresql" in database_url else "sqlite")


def test_info_masks_the_password(cli, database_url: str, monkeypatch) -> None:
    if "postgresql" not in database_url:
        return
    with_password = database_url.replace("postgres@", "postgres:hunter2@")
    code, out, err = cli("--database-url", with_password, "info", "--json")
    assert code == 0, err
    assert "hunter2" not in out and "***" in json.loads(out)["database_url"]


def test_malformed_url_is_one_line(tmp_path: Path) -> None:
    result = _tcdb(tmp_path, "--database-url", "this is not a url", "info")
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0 and "malformed database URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    result = _tcdb(tmp_path, "--database-url", "postgresql://postgres@127.0.0.1:1/none", "info")
    assert result.returncode != 0
    assert "cannot reach the database" in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_older_revision_is_refused(cli, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    assert cli("--database-url", url, "db", "upgrade")[0] == 0
    with get_engine(url).begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))  # an older one
    get_engine(url).dispose()  # as another process would: its connections were checked
    code, _, err = cli("--database-url", url, "info")
    assert code == 1 and "run `tcdb db upgrade`" in err


def test_empty_database_is_refused(cli, tmp_path: Path) -> None:
    (tmp_path / "empty.sqlite").touch()
    code, _, err = cli("--database-url", f"sqlite:///{tmp_path / 'empty.sqlite'}", "info")
    assert code == 1 and "no tcdb schema" in err
    code, _, err = cli("--database-url", f"sqlite:///{tmp_path / 'missing.sqlite'}", "info")
    assert code == 1 and "no tcdb database at" in err
    assert not (tmp_path / "missing.sqlite").exists()


def test_postgres_upgrade_from_the_cli(cli, database_url: str) -> None:
    if "postgresql" in database_url:
        require_postgres()
    code, out, err = cli("--database-url", database_url, "db", "current")
    assert code == 0 and "up to date" in out, err


def _tcdb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TCDB_DATABASE_URL"}
    return subprocess.run([sys.executable, "-m", "tcdb", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)
