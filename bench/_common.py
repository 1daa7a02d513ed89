"""Shared set-up for the benchmarks: throw-away databases on both backends, timing, RSS."""

from __future__ import annotations

import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ADMIN_URL = os.environ.get(
    "TCDB_BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def temporary_database(backend: str, migrate: bool = True) -> Iterator[str]:
    """A fresh tcdb database (SQLite file or PostgreSQL database), migrated unless `migrate` is
    False (another checkout migrates it to its own schema), removed afterwards."""
    from tcdb.storage import db
    from tcdb.storage import migrate as migrations

    if backend == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix="tcdb-bench-"))
        url = f"sqlite:///{folder / 'bench.sqlite'}"
        if migrate:
            migrations.upgrade(url)
        try:
            yield url
        finally:
            db.dispose_engine(url)
            shutil.rmtree(folder)  # the database, its WAL and its lock folder
        return
    name = f"tcdb_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        if migrate:
            migrations.upgrade(url)
        yield url
    finally:
        db.dispose_engine(url)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def write_snapshot_files(folder: Path, n_docs: int, topic_ids: list[str]) -> tuple[Path, Path]:
    """(docs.trec, topics.tsv) of a synthetic snapshot: documents `doc0`… with one-line texts,
    and a query per topic id — what the run, pool and reusability benchmarks ingest."""
    docs = folder / "docs.trec"
    with docs.open("w") as out:
        for i in range(n_docs):
            out.write(f"<DOC>\n<DOCNO>doc{i}</DOCNO>\n<TEXT>\ndocument {i}\n</TEXT>\n</DOC>\n")
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{t}\tquery {t}\n" for t in topic_ids))
    return docs, topics


@contextmanager
def timer() -> Iterator[list[float]]:
    """`with timer() as t: …` then `t[0]` holds the elapsed seconds."""
    elapsed: list[float] = [0.0]
    start = time.perf_counter()
    try:
        yield elapsed
    finally:
        elapsed[0] = time.perf_counter() - start


def median(values: list[float], fmt: str = "{:.2f}") -> str:
    """The median of repeated rounds, with their range when there are several:
    `2.09 (1.98–2.31)`. A shared machine's speed drifts; one round can mislead."""
    import statistics

    text = fmt.format(statistics.median(values))
    if len(values) > 1:
        text += f" ({fmt.format(min(values))}–{fmt.format(max(values))})"
    return text


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB.

    VmHWM, not getrusage's ru_maxrss: on Linux a child started with fork + exec inherits the
    parent's ru_maxrss, so a benchmark's child would report the parent's memory.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:>12,.0f} rows/s"


def children_peak_rss_mb() -> float:
    """The largest peak RSS among this process's waited-for children, in MB (a forked reader:
    its figure starts at this process's size at the fork, shared pages included, so it is an
    upper bound of what the child added)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run_step(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, dict]:
    """Run one benchmark step in a fresh Python process: (wall seconds, the JSON object its last
    line of stdout prints). A process per step makes each peak RSS the step's own."""
    import json
    import subprocess
    import sys

    started = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], env={**os.environ, **(env or {})},
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"step {argv[1:3]} failed:\n{done.stderr[-4000:]}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])
@contextmanager
def dask_cluster(n_workers: int, module: str) -> Iterator[str]:
    """A scheduler and `n_workers` single-threaded worker processes, `module` imported in
    each; yields its address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(sys.executable).with_name("dask"))
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port",
                                  str(port), "--dashboard-address", ":0"], **quiet)
    workers = subprocess.Popen([dask, "worker", address, "--nworkers", str(n_workers),
                                "--nthreads", "1", "--no-dashboard"], **quiet)
    try:
        from distributed import Client

        with Client(address, timeout=60) as client:
            deadline = time.monotonic() + 120
            while len(client.scheduler_info()["workers"]) < n_workers:
                if time.monotonic() > deadline:
                    raise RuntimeError("the Dask workers did not start")
                time.sleep(0.5)
            # the workers import tcdb and ir_measures before the clock starts, as a long-lived
            # cluster has
            client.run(lambda: __import__(module))
        yield address
    finally:
        for process in (workers, scheduler):
            process.terminate()
            process.wait(timeout=60)
