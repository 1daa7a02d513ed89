"""A one-run import loads what it needs and no more (issue 41, Build 8): neither pandas nor
scipy, whose imports and teardown were most of a small import's 2.8 s. Checked in a fresh
process on both databases, by what it imported (`bench/one_run.py` measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROCESS = """
import sys
from tcdb.cli.app import run
code = run(sys.argv[1:])
print(code, *(m for m in ("pandas", "scipy", "ir_measures") if m in sys.modules))
"""


def test_a_run_import_loads_neither_pandas_nor_scipy(cli, db: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(f'{{"_id": "d{i}", "text": "t {i}"}}\n' for i in range(40)))
    topics = tmp_path / "topics.tsv"
    topics.write_text("1\tone\n2\ttwo\n")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics)[0] == 0
    run = tmp_path / "r.run"
    run.write_text("".join(f"{t} Q0 d{d} {r} {9 - r}.5 tagged\n"
                           for t in (1, 2) for r, d in enumerate(range(t, t + 8), start=1)))
    done = subprocess.run([sys.executable, "-c", PROCESS, "run", "import", "c", "s1", str(run),
                           "--database-url", db], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "0"  # exit 0, and none of the three loaded
    code, out, _ = cli("run", "list", "c", "s1", "--json")
    assert code == 0
    (listed,) = json.loads(out)
    assert listed["n_entries"] == 16
