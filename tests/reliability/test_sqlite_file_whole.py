"""A SQLite database file is whole once the command or script that wrote it has ended.

tcdb opens SQLite in WAL mode: writes go to `tcdb.sqlite-wal` first and reach `tcdb.sqlite` at a
checkpoint, which the last connection to close makes. A process that ends with its connections
open leaves its writes in the `-wal` file, and a `tcdb.sqlite` copied, mailed or backed up on its
own silently lacks them (it did: `tcdb collection add` then a copy of the file showed no
collection). Each case runs in a real process, as a user would, and reads a copy of the file
alone.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = ("from tcdb import api\n"
          "api.collection_add('from-api', description='written by a script')\n")


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "TCDB_DATABASE_URL": url}


def _collections_of_copy(path: Path, tmp_path: Path) -> list[str]:
    """The collections a copy of the database file alone holds (plain sqlite3, no tcdb)."""
    copy = tmp_path / "copy" / path.name
    copy.parent.mkdir()
    shutil.copyfile(path, copy)
    with sqlite3.connect(copy) as conn:
        return sorted(name for (name,) in conn.execute("SELECT name FROM collection"))


@pytest.mark.parametrize("writer", ["cli", "api"])
def test_the_file_alone_holds_every_write(writer: str, tmp_path: Path) -> None:
    path = tmp_path / "tcdb.sqlite"
    url = f"sqlite:///{path}"
    tcdb = [sys.executable, "-m", "tcdb"]
    subprocess.run([*tcdb, "db", "upgrade"], env=_env(url), check=True, capture_output=True)
    if writer == "cli":
        done = subprocess.run([*tcdb, "collection", "add", "from-cli"], env=_env(url),
                              capture_output=True, text=True)
    else:
        done = subprocess.run([sys.executable, "-c", SCRIPT], env=_env(url),
                              capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not path.with_name(path.name + "-wal").exists()  # checkpointed and removed
    assert _collections_of_copy(path, tmp_path) == [f"from-{writer}"]
