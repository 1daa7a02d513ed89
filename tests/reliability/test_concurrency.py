"""Two writers at once, and readers while a writer writes, with real processes (`python -m
tcdb`) on SQLite and PostgreSQL.

Deterministic tests hold a lock from this process to play "the other process" — the lock an
ingest of the same snapshot holds, or the database's write lock — and check what the CLI says
and that it says it at once. True races of two processes then check the invariants only: one
snapshot, one run, no duplicates, no traceback, scores equal to trec_eval's.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state, row_counts

pytestmark = [pytest.mark.server, pytest.mark.slow]

BUSY = ("error: snapshot 's1' of 'c' is being ingested by another process; try again when it "
        "has finished")
TOPICS = {f"q{t}": f"query {t}" for t in range(1, 6)}


def tcdb(*args: object) -> subprocess.Popen[str]:
    """`python -m tcdb ARGS…` as a process of its own (the database from the environment)."""
    return subprocess.Popen([sys.executable, "-m", "tcdb", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def docs(n: int) -> dict[str, str]:
    return {f"d{i}": f"document {i} about topic {i % 5} and words {i * 7}" for i in range(n)}


def snapshot_files(folder: Path, n_docs: int) -> list[str]:
    """`--docs … --topics … --qrels …` of a snapshot with `n_docs` documents."""
    documents = write_documents(folder / "docs.trec", docs(n_docs))
    topics = write_topics(folder / "topics.tsv", TOPICS)
    qrels = write_qrels_file(folder / "qrels.txt",
                             [(t, f"d{i}", i % 3) for t in TOPICS for i in range(0, 40, 3)])
    return ["--docs", str(documents), "--topics", str(topics), "--qrels", str(qrels)]


def run_rows(seed: int) -> list[tuple[str, str, float]]:
    """A run over 30 documents per topic, distinct scores (no ties to break)."""
    return [(t, f"d{(i + 7 * seed + k) % 60}", 100.0 - i - seed / 100)
            for k, t in enumerate(TOPICS) for i in range(30)]


def sqlite_file(url: str) -> Path:
    return Path(str(make_url(url).database))


@contextmanager
def holding_named_lock(url: str, name: str) -> Iterator[None]:
    """Hold what a running ingest holds: the advisory lock, or the SQLite lock file."""
    from tcdb.storage.locks import file_lock, lock_key

    if url.startswith("sqlite"):
        with file_lock(sqlite_file(url), name, "held by the test"):
            yield
        return
    engine = create_engine(url)
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": lock_key(name)})
        yield
    engine.dispose()


@contextmanager
def holding_write_lock(url: str, name: str) -> Iterator[None]:
    """Be another writer: SQLite's write lock itself, or the advisory lock `name` on PostgreSQL."""
    if not url.startswith("sqlite"):
        with holding_named_lock(url, name):
            yield
        return
    conn = sqlite3.connect(sqlite_file(url), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def stderr_lines(process: subprocess.Popen[str]) -> queue.Queue[str]:
    """The process's stderr, line by line as it comes (read by a thread)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    return lines


def ingest(folder: Path, label: str = "s1", n_docs: int = 60, *extra: str) -> tuple[int, str, str]:
    return finish(tcdb("snapshot", "ingest", "c", label, *snapshot_files(folder, n_docs), *extra))


@pytest.fixture
def collection(db: str) -> str:
    assert finish(tcdb("collection", "add", "c", "--grades", "0:2"))[0] == 0
    return db


# --- deterministic: the other process is this test ------------------------------------------

def test_a_second_ingest_of_the_same_snapshot_exits_at_once(collection: str,
                                                            tmp_path: Path) -> None:
    from tcdb.storage.locks import ingest_lock_name

    before = database_state(collection)
    with holding_named_lock(collection, ingest_lock_name("c", "s1")):
        started = time.monotonic()
        code, out, err = ingest(tmp_path)
        elapsed = time.monotonic() - started
    assert (code, out, err) == (1, "", BUSY + "\n")
    assert elapsed < 15  # at once: no waiting for the other ingest
    assert database_state(collection) == before
    code, out, _ = ingest(tmp_path)  # the other one is gone: this one goes through
    assert code == 0 and "c/s1 ingested" in out


def test_a_writer_waits_for_another_and_says_so(collection: str, tmp_path: Path) -> None:
    assert ingest(tmp_path)[0] == 0
    run = write_run_file(tmp_path / "runs", "r1", run_rows(1))
    with holding_write_lock(collection, "runs\x00c"):
        process = tcdb("run", "import", "c", "s1", run, "--json")
        lines = stderr_lines(process)
        waiting = lines.get(timeout=30)
        assert waiting.startswith("waiting") and ("'c'" in waiting or "database" in waiting)
        time.sleep(0.5)
        assert process.poll() is None  # still waiting while the lock is held
    code, out, _ = finish(process)
    assert code == 0 and [r["status"] for r in json.loads(out)["runs"]] == ["imported"]
    assert lines.get(timeout=5) == ""  # one line said it all


# --- true races: invariants only ---------------------------------------------------------------

def test_two_ingests_of_one_snapshot_race(collection: str, tmp_path: Path) -> None:
    args = ["snapshot", "ingest", "c", "s1", *snapshot_files(tmp_path, 20_000), "--json"]
    first, second = tcdb(*args), tcdb(*args)
    results = [finish(first), finish(second)]
    codes = sorted(code for code, _, _ in results)
    assert codes in ([0, 0], [0, 1]), results
    statuses = sorted(json.loads(out)["status"] for code, out, _ in results if code == 0)
    assert statuses in (["ingested"], ["ingested", "unchanged"]), results
    for code, _, err in results:
        assert "Traceback" not in err
        if code == 1:
            assert err == BUSY + "\n"
    counts = row_counts(collection)
    assert (counts["snapshot"], counts["snapshot_document"], counts["document"],
            counts["content"], counts["snapshot_topic"], counts["judgment"]) == (
        1, 20_000, 20_000, 20_000, len(TOPICS), len(TOPICS) * 14)


def test_two_imports_of_one_run_file_race(collection: str, tmp_path: Path) -> None:
    assert ingest(tmp_path)[0] == 0
    run = write_run_file(tmp_path / "runs", "r1", run_rows(1))
    results = [finish(p) for p in [tcdb("run", "import", "c", "s1", run, "--json")
                                   for _ in range(2)]]
    assert [code for code, _, _ in results] == [0, 0], results
    statuses = sorted(json.loads(out)["runs"][0]["status"] for _, out, _ in results)
    assert statuses == ["imported", "unchanged"]
    counts = row_counts(collection)
    assert (counts["run"], counts["run_entry"], counts["system"]) == (1, len(run_rows(1)), 1)


def test_evaluate_while_runs_are_imported_gives_trec_eval_scores(collection: str,
                                                                 tmp_path: Path) -> None:
    import ir_measures

    assert ingest(tmp_path)[0] == 0
    runs = [write_run_file(tmp_path / "runs", f"r{k}", run_rows(k)) for k in range(1, 7)]
    assert finish(tcdb("run", "import", "c", "s1", runs[0]))[0] == 0
    importing = tcdb("run", "import", "c", "s1", *runs[1:])
    evaluating = tcdb("evaluate", "c", "s1", "--measure", "AP", "--measure", "P@5", "--json")
    code, _, err = finish(importing)
    assert code == 0, err
    code, _, err = finish(evaluating)
    assert code == 0, err
    assert finish(tcdb("evaluate", "c", "s1", "--measure", "AP", "--measure", "P@5"))[0] == 0
    code, out, err = finish(tcdb("scores", "table", "c", "s1", "--measure", "AP", "--measure",
                                 "P@5", "--per-topic", "--json"))
    assert code == 0, err
    stored = {(row["run"], row["topic"], row["measure"]): row["value"]
              for row in json.loads(out)["scores"] if row["answered"]}
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    expected = {}
    for k, path in enumerate(runs, start=1):
        for metric in ir_measures.iter_calc([ir_measures.AP, ir_measures.P @ 5], qrels,
                                            list(ir_measures.read_trec_run(str(path)))):
            expected[(f"r{k}", metric.query_id, str(metric.measure))] = metric.value
    assert stored.keys() == expected.keys()
    assert all(stored[key] == pytest.approx(value, abs=1e-9) for key, value in expected.items())


def test_two_evaluations_of_a_new_measure_race(collection: str, tmp_path: Path) -> None:
    """Both finish; the scores are stored once (the second waits, or finds them)."""
    assert ingest(tmp_path)[0] == 0
    runs = [write_run_file(tmp_path / "runs", f"r{k}", run_rows(k)) for k in range(1, 4)]
    assert finish(tcdb("run", "import", "c", "s1", *runs))[0] == 0
    results = [finish(p) for p in [tcdb("evaluate", "c", "s1", "--measure", "RR@10")
                                   for _ in range(2)]]
    assert [code for code, _, _ in results] == [0, 0], results
    assert all("Traceback" not in err for _, _, err in results)
    counts = row_counts(collection)
    assert (counts["measure"], counts["evaluation"]) == (1, 3)
    assert counts["score"] == 3 * len(TOPICS)


def test_evaluate_while_a_run_is_replaced_keeps_no_stale_scores(collection: str,
                                                                tmp_path: Path) -> None:
    """Scores of a replaced run's old entries never stay: after both, a fresh evaluate finds
    every stored score equal to the new file's."""
    import ir_measures

    assert ingest(tmp_path)[0] == 0
    old = write_run_file(tmp_path / "old", "r1", run_rows(1))
    new = write_run_file(tmp_path / "new", "r1", run_rows(5))
    assert finish(tcdb("run", "import", "c", "s1", old))[0] == 0
    evaluating = tcdb("evaluate", "c", "s1", "--measure", "AP")
    replacing = tcdb("run", "import", "c", "s1", new, "--replace")
    results = [finish(evaluating), finish(replacing)]
    assert all(code in (0, 1) and "Traceback" not in err for code, _, err in results), results
    assert results[1][0] == 0, results[1]
    assert finish(tcdb("evaluate", "c", "s1", "--measure", "AP"))[0] == 0
    code, out, _ = finish(tcdb("scores", "table", "c", "s1", "--measure", "AP", "--per-topic",
                               "--json"))
    stored = {row["topic"]: row["value"] for row in json.loads(out)["scores"]
              if row["answered"]}
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    expected = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.AP], qrels, list(ir_measures.read_trec_run(str(new))))}
    assert stored == pytest.approx(expected, abs=1e-9)


def test_readers_while_a_snapshot_is_ingested_see_all_of_it_or_nothing(collection: str, cli,
                                                                        tmp_path: Path) -> None:
    assert ingest(tmp_path / "one")[0] == 0
    runs = [write_run_file(tmp_path / "runs", f"r{k}", run_rows(k)) for k in (1, 2)]
    assert cli("run", "import", "c", "s1", *runs)[0] == 0
    assert cli("evaluate", "c", "s1", "--measure", "P@5")[0] == 0
    n_docs = 100_000
    writer = tcdb("snapshot", "ingest", "c", "s2", *snapshot_files(tmp_path / "two", n_docs))
    seen_while_writing = 0
    while writer.poll() is None:
        code, out, err = cli("snapshot", "list", "--json")
        assert code == 0, err
        snapshots = {row["label"]: row for row in json.loads(out)}
        if "s2" in snapshots:
            assert snapshots["s2"]["status"] == "complete"
            assert snapshots["s2"]["documents"] == n_docs
        for command in (["info", "--json"], ["run", "list", "--json"],
                        ["scores", "table", "c", "s1", "--measure", "P@5", "--json"],
                        ["report", "compare", "c", "s1", "--run", "r1", "--run", "r2",
                         "--measure", "P@5", "--json"]):
            code, _, err = cli(*command)
            assert code == 0, (command, err)
            seen_while_writing += writer.poll() is None  # each read that overlapped the write
    assert finish(writer)[0] == 0
    assert seen_while_writing >= 2  # the readers did overlap the write


def test_two_imports_of_one_qrels_file_race(collection: str, tmp_path: Path) -> None:
    assert ingest(tmp_path)[0] == 0
    extra = write_qrels_file(tmp_path / "extra.txt", [("q1", "d1", 2), ("q2", "d5", 1)])
    results = [finish(p) for p in [tcdb("qrels", "import", "c", "s1", "extra", extra, "--json")
                                   for _ in range(2)]]
    assert [code for code, _, _ in results] == [0, 0], results
    assert sorted(json.loads(out)["status"] for _, out, _ in results) == ["imported", "unchanged"]
    assert row_counts(collection)["qrels_set"] == 2


@pytest.mark.parametrize("command", [["run", "import", "c", "s1", "RUN"],
                                     ["collection", "add", "other"]])
def test_a_writer_kept_waiting_too_long_fails_in_one_line(
        collection: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        command: list[str]) -> None:
    """SQLite: past the busy timeout (here 1 s instead of 30), one line, not a traceback —
    through a write transaction that took the lock first, or any other write."""
    from tcdb.storage import db, locks

    if not collection.startswith("sqlite"):
        pytest.skip("the busy timeout is SQLite's")
    assert ingest(tmp_path)[0] == 0
    run = write_run_file(tmp_path / "runs", "r1", run_rows(1))
    for module in (db, locks):
        monkeypatch.setattr(module, "SQLITE_BUSY_TIMEOUT_MS", 1000)
    db.dispose_engine(collection)  # a new engine, with the short timeout
    before = database_state(collection)
    with holding_write_lock(collection, "unused"):
        code, _, err = cli(*[str(run) if arg == "RUN" else arg for arg in command])
    assert code == 1
    lines = err.strip().splitlines()
    assert lines[-1] == ("error: the database is still locked by another process that is "
                         "writing to it after 1 s (an ingest or an import?); try again when it "
                         "has finished")
    assert all(line.startswith("waiting: ") for line in lines[:-1])
    assert database_state(collection) == before
    db.dispose_engine(collection)
