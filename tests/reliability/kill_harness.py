"""The machinery of the kill suite: throw-away copies of a database, the real CLI as a process
of its own, SIGKILL at a chosen moment, and what "landed mid-write" and "the same database"
mean.

* A copy per trial: SQLite copies the file; PostgreSQL creates the database from a template
  (`CREATE DATABASE … TEMPLATE`), which takes a fraction of a second.
* Mid-write: at the moment of the kill the process held an open write transaction. SQLite in
  WAL mode: the process holds the WAL write lock, a POSIX lock on byte 120 of the `-shm` file,
  which `F_GETLK` reads without taking it. PostgreSQL: the process's backend (found by
  `application_name`, set through `PGAPPNAME`) has a transaction id, which PostgreSQL assigns
  at the first write.
* The same database: every table's rows with surrogate ids replaced by their rank among the
  table's ids (PostgreSQL's sequences skip the ids a killed transaction drew) and references
  mapped alike, time stamps left out; compared as a count and an order-free digest per table.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.databases import POSTGRES_URL, require_postgres

VOLATILE = {"created_at", "completed_at", "computed_at", "exported_at"}  # clock readings
WAL_WRITE_LOCK = 120  # SQLite's unix VFS: the write lock's byte in the -shm file
_FLOCK = "hh4xqqi4x"  # struct flock on Linux x86-64: type, whence, start, len, pid


class Backend:
    """Throw-away databases of one kind, made from saved ones."""

    name: str

    def save(self, url: str) -> str:
        """Freeze a database as the starting point of trials; returns what `restore` takes."""
        raise NotImplementedError

    def restore(self, saved: str) -> str:
        """A fresh copy of a saved database; returns its URL."""
        raise NotImplementedError

    def drop(self, url: str) -> None:
        raise NotImplementedError

    def env(self, tag: str) -> dict[str, str]:
        """Environment for a process whose writes `writing` must recognise by `tag`."""
        return {}

    def writing(self, url: str, process: subprocess.Popen[bytes], tag: str) -> bool:
        """Does the process hold an open write transaction right now?"""
        raise NotImplementedError

    def close(self) -> None:
        """Drop everything this backend created."""


class SqliteBackend(Backend):
    name = "sqlite"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def new(self) -> str:
        from tcdb.storage import migrate

        url = f"sqlite:///{self.folder / f'{uuid.uuid4().hex[:10]}.sqlite'}"
        migrate.upgrade(url)
        return url

    def save(self, url: str) -> str:
        from tcdb.storage.db import dispose_engine

        engine = create_engine(url)
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        engine.dispose()
        dispose_engine(url)
        return str(make_url(url).database)

    def restore(self, saved: str) -> str:
        copy = self.folder / f"{uuid.uuid4().hex[:10]}.sqlite"
        shutil.copyfile(saved, copy)
        return f"sqlite:///{copy}"

    def drop(self, url: str) -> None:
        from tcdb.storage.db import dispose_engine

        dispose_engine(url)
        path = Path(str(make_url(url).database))
        for file in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            file.unlink(missing_ok=True)
        shutil.rmtree(path.parent / f".{path.name}.locks", ignore_errors=True)

    def writing(self, url: str, process: subprocess.Popen[bytes], tag: str) -> bool:
        try:
            fd = os.open(f"{make_url(url).database}-shm", os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, WAL_WRITE_LOCK, 1, 0)
            kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, probe))
        finally:
            os.close(fd)
        return kind != fcntl.F_UNLCK and pid == process.pid


class PostgresBackend(Backend):
    name = "postgres"

    def __init__(self) -> None:
        require_postgres()
        self.admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
        self.created: list[str] = []
        # DROP DATABASE waits for a checkpoint (up to seconds): done beside the next trial.
        self.dropper = ThreadPoolExecutor(max_workers=1)
        self.drops: list[Future[None]] = []

    def _url(self, name: str) -> str:
        return make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)

    def _create(self, template: str | None = None) -> str:
        name = f"tcdb_kill_{uuid.uuid4().hex[:12]}"
        clause = f' TEMPLATE "{template}"' if template else ""
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        self.created.append(name)
        return self._url(name)

    def new(self) -> str:
        from tcdb.storage import migrate

        url = self._create()
        migrate.upgrade(url)
        return url

    def save(self, url: str) -> str:
        from tcdb.storage.db import dispose_engine

        dispose_engine(url)  # a template must have no connections
        return str(make_url(url).database)

    def restore(self, saved: str) -> str:
        return self._create(saved)

    def drop(self, url: str) -> None:
        from tcdb.storage.db import dispose_engine

        dispose_engine(url)
        name = str(make_url(url).database)
        if name in self.created:
            self.created.remove(name)
        self.drops.append(self.dropper.submit(self._drop, name))

    def _drop(self, name: str) -> None:
        with self.admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def env(self, tag: str) -> dict[str, str]:
        return {"PGAPPNAME": tag}

    def writing(self, url: str, process: subprocess.Popen[bytes], tag: str) -> bool:
        with self.admin.connect() as conn:
            return bool(conn.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = :tag "
                "AND backend_xid IS NOT NULL"), {"tag": tag}).scalar_one())

    def close(self) -> None:
        for name in list(self.created):
            self.drop(self._url(name))
        self.dropper.shutdown(wait=True)
        for done in self.drops:
            done.result()
        self.admin.dispose()


def start(args: list[str], url: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`python -m tcdb ARGS…` on `url`, in a process group of its own (its reader child too)."""
    environment = {**os.environ, **env, "TCDB_DATABASE_URL": url}
    return subprocess.Popen([sys.executable, "-m", "tcdb", *args], env=environment,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


@dataclass
class Kill:
    """What happened at one kill."""

    finished_first: bool  # the command had exited before the kill was due
    mid_write: bool
    lingered: float  # seconds the killed process's children outlived it


def kill_after(process: subprocess.Popen[bytes], delay: float, backend: Backend, url: str,
               tag: str) -> Kill:
    """SIGKILL the process `delay` seconds after it started (unless it exited before),
    noting whether it was writing, then wait for what it forked to go."""
    due = time.monotonic() + delay
    while process.poll() is None and time.monotonic() < due:
        time.sleep(min(0.005, max(0.0, due - time.monotonic())))
    if process.poll() is not None:
        process.communicate()
        return Kill(True, False, 0.0)
    mid_write = backend.writing(url, process, tag)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    return Kill(False, mid_write, _reap_group(process.pid))


def _reap_group(group: int, patience: float = 10.0) -> float:
    """Seconds until no live process of the group is left (a zombie, waiting for init to reap
    it, holds nothing); what is left after `patience` gets SIGKILL and counts as `patience`."""
    started = time.monotonic()
    while time.monotonic() - started < patience:
        if not _alive_in_group(group):
            return time.monotonic() - started
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    return patience


def _alive_in_group(group: int) -> bool:
    """Is any process of the group running (Linux: its state and group from /proc)?"""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # After "pid (command)": state, parent, group, …; the command may hold spaces.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == group and fields[0] not in ("Z", "X"):
                return True
    return False


def run(args: list[str], url: str, env: dict[str, str],
        timeout: float = 300) -> tuple[int, float, str]:
    """Run the command to its end: (exit code, seconds, stderr)."""
    started = time.monotonic()
    process = start(args, url, env)
    _, err = process.communicate(timeout=timeout)
    return process.returncode, time.monotonic() - started, err.decode(errors="replace")


def row_counts(url: str) -> dict[str, int]:
    """Rows per table, counted by the database."""
    from tcdb.schema import metadata
    from tcdb.storage.db import get_engine

    with get_engine(url).connect() as conn:
        return {table.name: int(conn.execute(text(f'SELECT COUNT(*) FROM "{table.name}"'))
                                .scalar_one()) for table in metadata.sorted_tables}


def comparable_state(url: str) -> dict[str, tuple[int, int]]:
    """Table → (rows, sum of row hashes mod 2⁶⁴), with ids as 1-based ranks and clocks left out.

    Hashes are Python's, so states compare within one test process only.
    """
    from tcdb.schema import metadata
    from tcdb.storage.consistency import IMPLIED_REFERENCES
    from tcdb.storage.db import get_engine

    state: dict[str, tuple[int, int]] = {}
    with get_engine(url).connect() as conn:
        raw: Any = conn.connection.driver_connection
        ranks = {table.name: {value: k for k, (value,) in enumerate(conn.execute(text(
                     f'SELECT id FROM "{table.name}" ORDER BY id')), start=1)}
                 for table in metadata.sorted_tables if "id" in table.columns}
        for table in metadata.sorted_tables:
            refers = {c.name: next(iter(c.foreign_keys)).column.table.name
                      for c in table.columns if c.foreign_keys}
            refers.update(IMPLIED_REFERENCES.get(table.name, []))
            names = [c.name for c in table.columns if c.name not in VOLATILE]
            listed = ", ".join(f'"{name}"' for name in names)
            cursor = raw.cursor()  # the driver's tuples: a fifth faster than Rows
            cursor.execute(f'SELECT {listed} FROM "{table.name}"')
            rows = cursor.fetchall()
            cursor.close()
            if not rows:
                state[table.name] = (0, 0)
                continue
            targets = [table.name if name == "id" else refers.get(name) for name in names]
            columns = [_comparable(list(values), ranks[target] if target else None)
                       for target, values in zip(targets, zip(*rows, strict=True), strict=True)]
            total = sum(map(hash, zip(*columns, strict=True))) & 0xFFFFFFFFFFFFFFFF
            state[table.name] = (len(rows), total)
    return state


def _comparable(values: list[Any], rank: dict[Any, int] | None) -> list[Any]:
    """A column's values as comparable across databases: ids (and references) by rank, an id
    that refers to nothing as its negative, 0 and NULL as they are (they refer to nothing)."""
    if rank is not None:
        return [rank.get(v, -v) if v else v for v in values]
    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, dict | list):
        return [None if v is None else json.dumps(v, sort_keys=True) for v in values]
    if isinstance(sample, memoryview):
        return [None if v is None else bytes(v) for v in values]
    return values
