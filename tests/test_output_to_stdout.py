"""`--out -` and `--out /dev/stdout` write the data to standard output and nothing else, as the
file would hold it; what the command says of it goes to standard error. Piping a file output
into the next program is common (`tcdb qrels export … --out - | gzip`), and `/dev/stdout` was
refused ("no such file or directory"), or, redirected to a file, replaced the file the shell
had opened. Real processes, on both databases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import Seeded

pytestmark = pytest.mark.slow


def _tcdb(url: str, *args: str, stdout: int | object = subprocess.PIPE
          ) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "TCDB_DATABASE_URL": url}
    return subprocess.run([sys.executable, "-m", "tcdb", *args], env=env, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=180)


@pytest.fixture(scope="module")
def exports(seeded_url: tuple[str, Seeded]) -> dict[str, list[str]]:
    url, seeded = seeded_url
    snapshot = seeded.labels[-1]
    return {"qrels": ["qrels", "export", seeded.collection, snapshot, "original"],
            "run": ["run", "export", seeded.collection, snapshot, seeded.systems[0]],
            "pool": ["pool", "export", seeded.pool, "--format", "csv"]}


@pytest.mark.parametrize("what", ["qrels", "run", "pool"])
def test_out_to_standard_output_carries_the_data_alone(
    what: str, exports: dict[str, list[str]], seeded_url: tuple[str, Seeded], tmp_path: Path
) -> None:
    url, _ = seeded_url
    args = exports[what]
    to_file = _tcdb(url, *args, "--out", str(tmp_path / "file"))
    assert to_file.returncode == 0, to_file.stderr
    expected = (tmp_path / "file").read_bytes()
    assert expected
    for target in ("-", "/dev/stdout"):
        piped = _tcdb(url, *args, "--out", target)
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout == expected, target  # the data, and nothing said in between
        assert piped.stderr.strip(), target  # the summary, on standard error
    redirected = tmp_path / "redirected"
    with redirected.open("wb") as out:  # the shell's `> redirected`
        done = _tcdb(url, *args, "--out", "/dev/stdout", stdout=out)
    assert done.returncode == 0, done.stderr
    assert redirected.read_bytes() == expected
    assert not Path("-").exists()
