"""Crash safety, tested by killing: the real CLI (`python -m tcdb`) gets SIGKILL at a random
moment of snapshot ingest (local files and `--irds`), run import of ten files, judgment import,
evaluate and pool build, on SQLite and PostgreSQL.

Each operation first runs once undisturbed from its starting database; that run's duration D
and resulting database are the reference. Then each trial starts from a fresh copy of the same
database, kills the command after a delay drawn by `random.Random(seed)` from [0, D], and checks:

* `tcdb.storage.consistency.check_database` finds nothing;
* the row counts are the starting database's or the reference's: all of the result or none;
* the same command again exits 0, and the database then equals the reference (row digests,
  surrogate ids by rank: see `kill_harness`).

Environment:

* `TCDB_KILL_TRIALS=N` — trials per operation and database (default 3);
* `TCDB_KILL_SEED=S` — the seed the delays derive from (default 19): the same seed, the same
  delays;
* `TCDB_KILL_REPORT=PATH` — also write the figures as JSON to PATH (rows merged by operation
  and database, so parallel workers add to one file).

The figures table (trials, kills that landed mid-write, consistent afterwards, all-or-nothing,
re-runs that completed, equal to the reference) is printed at the end of the session
(`tests/reliability/conftest.py`) and by each test under `pytest -s`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from tests.databases import BACKENDS
from tests.reliability.kill_harness import (
    Backend,
    PostgresBackend,
    SqliteBackend,
    comparable_state,
    kill_after,
    row_counts,
    run,
    start,
)
from tests.reliability.kill_operations import OPERATIONS, Inputs, Operation, Stages, write_inputs

pytestmark = [pytest.mark.kill, pytest.mark.slow]

TRIALS = int(os.environ.get("TCDB_KILL_TRIALS", "3"))
SEED = int(os.environ.get("TCDB_KILL_SEED", "19"))


@dataclass
class Figures:
    """One operation on one database, over all its trials."""

    operation: str
    database: str
    trials: int = 0
    mid_write: int = 0  # kills that landed while the process held a write transaction
    finished_first: int = 0  # the command had exited before its kill was due
    consistent: int = 0  # check_database found nothing after the kill
    all_or_nothing: int = 0  # row counts were the start's or the reference's
    full_result: int = 0  # … and of those, the reference's (the kill came after the commit)
    reruns_completed: int = 0  # the same command again exited 0
    equal_after_rerun: int = 0  # … and the database equalled the reference
    lingered: float = 0.0  # longest time a killed process's children outlived it (s)
    clean_seconds: float = 0.0  # D, the undisturbed run's duration


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    return write_inputs(tmp_path_factory.mktemp("kill-inputs"))


@pytest.fixture(scope="module")
def stages(inputs: Inputs, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Stages]]:
    """Per backend, the saved starting databases (built when a test first needs them)."""
    made: dict[str, Stages] = {}

    class Lazy(dict[str, Stages]):
        def __missing__(self, name: str) -> Stages:
            backend: Backend = (SqliteBackend(tmp_path_factory.mktemp("kill-sqlite"))
                                if name == "sqlite" else PostgresBackend())
            made[name] = self[name] = Stages(backend, inputs)
            return made[name]

    yield Lazy()
    for stage in made.values():
        stage.backend.close()


@pytest.mark.parametrize("database", BACKENDS)
@pytest.mark.parametrize("operation", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_a_killed_command_leaves_all_or_nothing_and_completes_when_run_again(
        operation: Operation, database: str, stages: dict[str, Stages], inputs: Inputs,
        record_property: pytest.RecordProperty) -> None:
    from tcdb.storage.consistency import check_database

    stage = stages[database]
    backend = stage.backend
    saved = stage.get(operation.stage)
    figures = Figures(operation.name, database)
    failures: list[str] = []

    # The reference: the command undisturbed, from a copy of its starting database.
    url = backend.restore(saved)
    args = operation.args(inputs, url)
    env = operation.env(inputs)
    start_counts = row_counts(url)
    code, figures.clean_seconds, err = run(args, url, env)
    assert code == 0, err
    assert check_database(url) == []
    reference_counts, reference = row_counts(url), comparable_state(url)
    assert reference_counts != start_counts  # the command did write something
    backend.drop(url)

    rng = random.Random(SEED * 1_000_003 + zlib.crc32(f"{operation.name}/{database}".encode()))
    for trial in range(TRIALS):
        url = backend.restore(saved)
        tag = f"tcdb-kill-{os.getpid()}-{trial}"
        delay = rng.uniform(0, figures.clean_seconds)
        killed = kill_after(start(args, url, {**env, **backend.env(tag)}), delay, backend, url,
                            tag)
        figures.trials += 1
        figures.mid_write += killed.mid_write
        figures.finished_first += killed.finished_first
        figures.lingered = max(figures.lingered, killed.lingered)
        findings = check_database(url)
        figures.consistent += not findings
        counts = row_counts(url)
        figures.all_or_nothing += counts in (start_counts, reference_counts)
        figures.full_result += counts == reference_counts
        code, _, err = run(args, url, env)
        figures.reruns_completed += code == 0
        final = comparable_state(url) if code == 0 else {}
        equal = final == reference
        figures.equal_after_rerun += equal
        if findings or counts not in (start_counts, reference_counts) or not equal:
            differ = sorted(t for t in reference if final.get(t) != reference[t])
            failures.append(f"trial {trial} (kill at {delay:.3f} s, mid-write "
                            f"{killed.mid_write}): findings {findings}; counts "
                            f"{_changed(start_counts, counts)}; re-run exit {code} {err!r}; "
                            f"tables unlike the reference's after it: {differ}")
        backend.drop(url)

    _report(figures, record_property)
    assert not failures, "\n".join(failures)
    assert figures.lingered < 10, "a killed command's reader process outlived it"


def _changed(before: dict[str, int], after: dict[str, int]) -> dict[str, tuple[int, int]]:
    return {t: (before[t], n) for t, n in after.items() if before.get(t) != n}


COLUMNS = [("operation", "operation"), ("database", "database"), ("trials", "trials"),
           ("mid_write", "mid-write"), ("consistent", "consistent"),
           ("all_or_nothing", "all/none"), ("full_result", "full"),
           ("reruns_completed", "re-runs ok"), ("equal_after_rerun", "= clean"),
           ("lingered", "lingered (s)"), ("clean_seconds", "D (s)")]


def format_table(rows: list[dict[str, object]]) -> str:
    """The figures as a plain text table."""
    header = [title for _, title in COLUMNS]
    cells = [[f"{row[key]:.2f}" if isinstance(row[key], float) else str(row[key])
              for key, _ in COLUMNS] for row in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def _report(figures: Figures, record_property: pytest.RecordProperty) -> None:
    row = asdict(figures)
    record_property("kill_figures", json.dumps(row))
    print("\n" + format_table([row]))
    path = os.environ.get("TCDB_KILL_REPORT")
    if path:
        merge_report(Path(path), row)


def merge_report(path: Path, row: dict[str, object]) -> None:
    """Add a row to the JSON report, replacing the same operation and database's: under a
    file lock, since several pytest workers may write at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        rows: list[dict[str, object]] = []
        with contextlib.suppress(ValueError):
            rows = json.loads(handle.read() or "[]")
        rows = [r for r in rows if (r["operation"], r["database"]) !=
                (row["operation"], row["database"])] + [row]
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(rows, indent=2) + "\n")
