"""A SQLite database the user may read but not write is read: listings, reports and `--json`
work, every write is refused in one line, and nothing is created beside the file.

The condition is real, not simulated: the files and folders get read-only modes, and the CLI
runs in a process whose capability bounding set lacks CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
(`setpriv`), so that root, too, is held to the modes, as any other user is.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import seed_collection

SETPRIV = shutil.which("setpriv")
pytestmark = [pytest.mark.skipif(SETPRIV is None, reason="needs util-linux's setpriv"),
              pytest.mark.slow]

READ_ONLY = 0o444
READ_ONLY_FOLDER = 0o555


def _held_to_modes(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`tcdb ARGS` in a process that file modes bind, root or not."""
    env = {k: v for k, v in os.environ.items() if k != "TCDB_DATABASE_URL"}
    env["COLUMNS"] = "200"
    return subprocess.run(
        [str(SETPRIV), "--bounding-set=-dac_override,-dac_read_search",
         sys.executable, "-m", "tcdb", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A seeded database (tests.builders: a collection, snapshots, runs, qrels), written by
    tcdb and closed, then made read-only; yields its folder."""
    from tcdb.storage import db, migrate

    folder = tmp_path / "published"
    folder.mkdir()
    url = f"sqlite:///{folder / 'tcdb.sqlite'}"
    migrate.upgrade(url)
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    seed_collection(tmp_path / "seed")
    db.dispose_engine(url)  # checkpointed: no -wal left beside the file
    (folder / "tcdb.sqlite").chmod(READ_ONLY)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def _entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("folder_writable", [False, True],
                         ids=["read-only folder", "writable folder"])
def test_a_read_only_sqlite_file_is_read_and_writes_are_refused(
    published: Path, folder_writable: bool
) -> None:
    if not folder_writable:
        published.chmod(READ_ONLY_FOLDER)
    before = _entries(published)
    probe = _held_to_modes("collection", "add", "probe", cwd=published)
    assert probe.returncode == 1  # the condition holds: this process cannot write there

    listed = _held_to_modes("run", "list", "--json", cwd=published)
    assert listed.returncode == 0, listed.stderr
    runs = json.loads(listed.stdout)
    assert runs and all(r["n_entries"] > 0 for r in runs)
    for args in (("collection", "list"), ("snapshot", "list"), ("info",),
                 ("qrels", "list", "--json")):
        shown = _held_to_modes(*args, cwd=published)
        assert shown.returncode == 0 and "Traceback" not in shown.stderr, (args, shown.stderr)

    for args in (("collection", "add", "another"),
                 ("collection", "add", "third", "--grades", "0:3")):
        refused = _held_to_modes(*args, cwd=published)
        assert refused.returncode == 1, (args, refused.stdout)
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "read-only" in lines[0] and "nothing was written" in lines[0], \
            (args, refused.stderr)
    assert _entries(published) == before  # no -wal, no -shm, no journal left behind
    assert stat.S_IMODE((published / "tcdb.sqlite").stat().st_mode) == READ_ONLY
