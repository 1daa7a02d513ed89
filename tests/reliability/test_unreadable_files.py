"""An input file the user may not read is one `error:` line naming it, exit 1, like every other
bad input: typer checked readability itself and printed its usage box (exit 2). The condition is
real: mode 000, and the CLI in a process whose capability bounding set lacks CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH (`setpriv`), so that root too is held to the modes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import Seeded

SETPRIV = shutil.which("setpriv")
pytestmark = [pytest.mark.skipif(SETPRIV is None, reason="needs util-linux's setpriv"),
              pytest.mark.slow]


def _held_to_modes(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TCDB_DATABASE_URL": url, "COLUMNS": "200"}
    return subprocess.run([str(SETPRIV), "--bounding-set=-dac_override,-dac_read_search",
                           sys.executable, "-m", "tcdb", *args],
                          env=env, capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("command", ["run import", "qrels import", "scores import",
                                     "topics set create", "collection sync",
                                     "snapshot ingest --topics"])
def test_an_unreadable_input_file_is_one_line(
    command: str, seeded_url: tuple[str, Seeded], tmp_path: Path
) -> None:
    url, seeded = seeded_url
    c, s = seeded.collection, seeded.labels[0]
    locked = tmp_path / "locked.txt"
    locked.write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    locked.chmod(0)
    docs = tmp_path / "docs.trec"
    docs.write_text("<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>x</TEXT>\n</DOC>\n", encoding="utf-8")
    args = {
        "run import": ["run", "import", c, s, str(locked)],
        "qrels import": ["qrels", "import", c, s, "extra", str(locked)],
        "scores import": ["scores", "import", c, s, "--qrels", "original", "--run",
                          seeded.systems[0], str(locked)],
        "topics set create": ["topics", "set", "create", "subset", c, s, "--from-file",
                              str(locked)],
        "collection sync": ["collection", "sync", str(locked)],
        "snapshot ingest --topics": ["snapshot", "ingest", c, "new", "--docs", str(docs),
                                     "--topics", str(locked)],
    }[command]
    done = _held_to_modes(url, *args)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and len(lines) == 1, (done.returncode, done.stderr)
    assert lines[0].startswith("error: ") and str(locked) in lines[0], lines[0]
    assert "permission denied" in lines[0] or "not readable" in lines[0], lines[0]
