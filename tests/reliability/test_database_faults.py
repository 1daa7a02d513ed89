"""Faults of the database itself, made for real: a file that is not SQLite, a directory, a
read-only file and a read-only mount, a disk that fills (a small tmpfs under SQLite, a
tablespace on one under PostgreSQL), a PostgreSQL backend terminated mid-write from a second
connection, a server that refuses connections, and a schema newer than this tcdb.

Each is one `error:` line from the CLI saying what happened and that nothing was written (exit
code 1), a typed `DatabaseError` from the API, zero rows changed (every table's rows compared),
`tcdb db check` clean, and the same command going through once the fault is gone. The CLI runs
as a process of its own, as a user runs it. Mounting needs root (CAP_SYS_ADMIN): without it the
read-only cases use permissions instead, and the full-disk cases are skipped with the reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tcdb.errors import (
    DatabaseError,
    DatabaseFullError,
    DatabaseNewerError,
    DatabaseReadOnlyError,
    DatabaseUnavailableError,
)
from tcdb.storage.db import dispose_engine
from tcdb.storage.guard import unguarded
from tests.databases import BACKENDS, POSTGRES_URL, create_database, require_postgres
from tests.reliability.rows import database_state

pytestmark = pytest.mark.slow

N_DOCS = 30_000  # a write of a few MB, over a second: room to fill a disk or end a backend
N_RUNS, DEPTH = 6, 400
TOPICS = [f"q{t}" for t in range(1, 51)]


# --- the CLI as a process, and what every fault must look like ---------------------------


def run_process(url: str, *args: str) -> tuple[int, str, str]:
    """`tcdb --database-url URL ARGS…` as a process of its own: (exit code, stdout, stderr)."""
    done = subprocess.run([sys.executable, "-m", "tcdb", "--database-url", url, *args],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def tcdb(cli: Callable[..., tuple[int, str, str]]) -> Callable[..., tuple[int, str, str]]:
    """`tcdb --database-url URL ARGS…` in this process (the CLI's own `run`): (exit code,
    stdout, stderr). Each call starts from fresh connections, as a new process would."""
    def invoke(url: str, *args: str) -> tuple[int, str, str]:
        dispose_engine(url)
        try:
            return cli("--database-url", url, *args)
        finally:
            dispose_engine(url)

    return invoke


Tcdb = Callable[..., tuple[int, str, str]]


def start(url: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tcdb", "--database-url", url, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **env})


def one_line(code: int, err: str, *words: str) -> str:
    """The fault was reported as one `error:` line naming `words` and that nothing was
    written, with exit code 1; returns the line."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, (code, err)
    line = lines[0]
    assert line.startswith("error: ") and "Traceback" not in err, err
    assert "nothing was written" in line, line
    for word in words:
        assert word in line, (word, line)
    return line


def changed_rows(before: dict[str, tuple[int, str]], url: str) -> int:
    """Rows added or removed (or, at the same count, changed tables) since `before`."""
    after = database_state(url)
    dispose_engine(url)
    return sum(abs(after[t][0] - n) or int(after[t][1] != digest)
               for t, (n, digest) in before.items())


FIGURES: list[str] = []


def report(fault: str, backend: str, message: str, rows: int, check: int, retry: int) -> None:
    """One line of the figures the issue asks to see (printed with `pytest -s`)."""
    line = (f"{fault:<28} {backend:<8} rows changed {rows}  db check exit {check}  "
            f"retry exit {retry}\n    {message}")
    FIGURES.append(line)
    print("\n" + line)


# --- inputs ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("fault-inputs")
    docs = folder / "docs.trec"
    with docs.open("w", encoding="utf-8") as out:
        for i in range(N_DOCS):
            out.write(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\ntext {i} about topic {i % 50} "
                      f"and words {i * 7} {i * 13} {'filler ' * 8}\n</TEXT>\n</DOC>\n")
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"{t}\tquery {t}\n" for t in TOPICS), encoding="utf-8")
    small = folder / "small.trec"
    small.write_text("<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>\nshort\n</TEXT>\n</DOC>\n",
                     encoding="utf-8")
    runs = []
    for r in range(N_RUNS):
        path = folder / f"r{r}.run"
        path.write_text("".join(f"{t} Q0 d{(k * 7 + r * 13 + j) % N_DOCS} {k + 1} "
                                f"{DEPTH - k}.5 r{r}\n"
                                for j, t in enumerate(TOPICS) for k in range(DEPTH)),
                        encoding="utf-8")
        runs.append(path)
    return {"docs": docs, "topics": topics, "small": small,
            **{f"run{r}": p for r, p in enumerate(runs)}}


def ingest_args(files: dict[str, Path], label: str = "big") -> list[str]:
    return ["snapshot", "ingest", "c", label, "--docs", str(files["docs"]),
            "--topics", str(files["topics"])]


def import_args(files: dict[str, Path]) -> list[str]:
    return ["run", "import", "c", "base", *(str(files[f"run{r}"]) for r in range(N_RUNS))]


# --- mounts ------------------------------------------------------------------------------


def _may_mount() -> str | None:
    """None when this process may mount a tmpfs, else why not."""
    if shutil.which("mount") is None:
        return "no mount command"
    probe = Path(f"/tmp/tcdb-mount-probe-{uuid.uuid4().hex[:8]}")
    probe.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return f"mounting a tmpfs is not permitted here: {done.stderr.strip()}"
        subprocess.run(["umount", str(probe)], check=True)
        return None
    finally:
        probe.rmdir()


MOUNT_REFUSED = _may_mount()
needs_mount = pytest.mark.skipif(MOUNT_REFUSED is not None, reason=str(MOUNT_REFUSED))


@contextmanager
def tmpfs(folder: Path, size: str = "64m") -> Iterator[Path]:
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                   check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        if made:
            folder.rmdir()


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def used_kib(folder: Path) -> int:
    stat = os.statvfs(folder)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize // 1024


def sqlite_database(path: Path, tcdb: Tcdb) -> str:
    """A migrated SQLite database at `path` holding collection `c`."""
    from tcdb.storage import migrate

    url = f"sqlite:///{path}"
    migrate.upgrade(url)
    dispose_engine(url)
    assert tcdb(url, "collection", "add", "c")[0] == 0
    return url


# --- not a database, a directory ----------------------------------------------------------

NOT_SQLITE = {
    "random bytes": os.urandom(8192),
    "a text file": b"collection,snapshot\nrobust04,2004\n" * 50,
    "a SQLite header, then noise": b"SQLite format 3\x00" + bytes(range(256)) * 16,
    "an empty-looking page": b"\x00" * 4096 + b"tcdb",
}


@pytest.mark.parametrize("kind", list(NOT_SQLITE))
def test_a_file_that_is_not_sqlite(kind: str, tmp_path: Path, files: dict[str, Path],
                                   tcdb: Tcdb) -> None:
    path = tmp_path / "tcdb.sqlite"
    path.write_bytes(NOT_SQLITE[kind])
    url = f"sqlite:///{path}"
    for args in (["collection", "list"], ["collection", "add", "d"], ["db", "upgrade"],
                 ["db", "check"], ["snapshot", "ingest", "c", "s", "--docs",
                                   str(files["small"]), "--topics", str(files["topics"])]):
        code, _, err = tcdb(url, *args)
        message = one_line(code, err, str(path), "not a SQLite database")
    assert path.read_bytes() == NOT_SQLITE[kind]  # nothing was written
    assert {p.name for p in tmp_path.iterdir()} == {"tcdb.sqlite"}  # no journal left behind
    from tcdb import api

    with pytest.raises(DatabaseError, match="not a SQLite database"):
        api.collections(database=url)
    report(f"not SQLite: {kind}", "sqlite", message, 0, -1, -1)


def test_a_directory_as_the_database(tmp_path: Path, tcdb: Tcdb) -> None:
    folder = tmp_path / "tcdb.sqlite"
    folder.mkdir()
    url = f"sqlite:///{folder}"
    for args in (["collection", "list"], ["collection", "add", "d"], ["db", "upgrade"],
                 ["db", "current"]):
        code, _, err = tcdb(url, *args)
        message = one_line(code, err, str(folder), "is a directory")
    code, _, err = run_process(url, "collection", "add", "d")  # the same from a process
    assert one_line(code, err) == message
    assert list(folder.iterdir()) == []
    from tcdb import api

    with pytest.raises(DatabaseError, match="is a directory"):
        api.collection_add("d", database=url)
    report("directory as the database", "sqlite", message, 0, -1, -1)


# --- read-only --------------------------------------------------------------------------


@contextmanager
def read_only_file(path: Path) -> Iterator[None]:
    """chmod 444; as root, whom permissions do not stop, also a read-only bind mount of the
    file itself (the folder stays writable, so SQLite's -wal and -shm can be made)."""
    path.chmod(0o444)
    mounted = os.geteuid() == 0
    if mounted:
        if MOUNT_REFUSED:
            pytest.skip(f"running as root, chmod does not stop writes and {MOUNT_REFUSED}")
        subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
    try:
        yield
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], check=False)
        path.chmod(0o644)


def test_a_read_only_sqlite_file(tmp_path: Path, files: dict[str, Path], tcdb: Tcdb) -> None:
    path = tmp_path / "tcdb.sqlite"
    url = sqlite_database(path, tcdb)
    before = database_state(url)
    dispose_engine(url)
    with read_only_file(path):
        with pytest.raises(OSError):  # the file refuses writes, even root's
            path.open("ab").close()
        assert tcdb(url, "collection", "list")[0] == 0  # reading works
        for args in (["collection", "add", "d"], ["snapshot", "ingest", "c", "s", "--docs",
                                                 str(files["small"]), "--topics",
                                                 str(files["topics"])]):
            code, _, err = tcdb(url, *args)
            message = one_line(code, err, str(path), "read-only")
        from tcdb import api

        with pytest.raises(DatabaseReadOnlyError):
            api.collection_add("d", database=url)
        dispose_engine(url)
    rows = changed_rows(before, url)
    check = tcdb(url, "db", "check")[0]
    retry = tcdb(url, "collection", "add", "d")[0]
    report("read-only file", "sqlite", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


def test_a_read_only_folder_or_mount(tmp_path: Path, tcdb: Tcdb) -> None:
    folder = tmp_path / "mnt"
    with ExitStack() as stack:
        if MOUNT_REFUSED is None:
            stack.enter_context(tmpfs(folder))
            how = "read-only mount"
        else:  # permissions stop a user who is not root
            folder.mkdir()
            how = "read-only folder"
        path = folder / "tcdb.sqlite"
        url = sqlite_database(path, tcdb)
        before = database_state(url)
        dispose_engine(url)
        if MOUNT_REFUSED is None:
            remount(folder, "ro")
        else:
            folder.chmod(0o555)
        try:
            for args in (["collection", "list"], ["db", "check"], ["db", "upgrade"]):
                code, _, err = tcdb(url, *args)  # reading works; at head, upgrade writes nothing
                assert code == 0 and not err.strip(), (args, err)
            code, _, err = tcdb(url, "collection", "add", "d")
            message = one_line(code, err, "tcdb.sqlite", "read-only")
            from tcdb import api

            with pytest.raises(DatabaseReadOnlyError):
                api.collection_add("d", database=url)
            dispose_engine(url)
        finally:
            if MOUNT_REFUSED is None:
                remount(folder, "rw")
            else:
                folder.chmod(0o755)
        rows = changed_rows(before, url)
        check = tcdb(url, "db", "check")[0]
        retry = tcdb(url, "collection", "add", "d")[0]
        dispose_engine(url)
    report(how, "sqlite", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    yield from create_database("postgres", tmp_path)


def test_a_read_only_postgres_database(pg_url: str, files: dict[str, Path],
                                       tcdb: Tcdb) -> None:
    """`default_transaction_read_only`: the server refuses every write (SQLSTATE 25006)."""
    assert tcdb(pg_url, "collection", "add", "c")[0] == 0
    before = database_state(pg_url)
    dispose_engine(pg_url)
    name = make_url(pg_url).database
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'))
    try:
        assert tcdb(pg_url, "collection", "list")[0] == 0
        for args in (["collection", "add", "d"], ["snapshot", "ingest", "c", "s", "--docs",
                                                 str(files["small"]), "--topics",
                                                 str(files["topics"])]):
            code, _, err = tcdb(pg_url, *args)
            message = one_line(code, err, "read-only")
        from tcdb import api

        with pytest.raises(DatabaseReadOnlyError):
            api.collection_add("d", database=pg_url)
        dispose_engine(pg_url)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" RESET default_transaction_read_only'))
        admin.dispose()
    rows = changed_rows(before, pg_url)
    check = tcdb(pg_url, "db", "check")[0]
    retry = tcdb(pg_url, "collection", "add", "d")[0]
    report("read-only database", "postgres", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


# --- a full disk ------------------------------------------------------------------------


@needs_mount
def test_a_full_disk_under_sqlite(tmp_path: Path, files: dict[str, Path], tcdb: Tcdb) -> None:
    folder = tmp_path / "small-disk"
    with tmpfs(folder):
        path = folder / "tcdb.sqlite"
        url = sqlite_database(path, tcdb)
        before = database_state(url)
        dispose_engine(url)
        remount(folder, f"size={used_kib(folder) + 1024}k")  # 1 MB free: the ingest needs more
        code, _, err = run_process(url, *ingest_args(files))
        message = one_line(code, err, str(path), "full")
        rows = changed_rows(before, url)
        check = tcdb(url, "db", "check")[0]
        remount(folder, "size=256m")  # space freed: the same command again
        retry = tcdb(url, *ingest_args(files))[0]
        dispose_engine(url)
    report("full disk (tmpfs)", "sqlite", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


@contextmanager
def postgres_on_small_disk(folder: Path) -> Iterator[str]:
    """A migrated PostgreSQL database whose tables live on a tablespace on a tmpfs: the
    server's own files fill, as on a full disk (SQLSTATE 53100, "could not extend file")."""
    require_postgres()
    host = make_url(POSTGRES_URL).host
    if host not in ("127.0.0.1", "localhost", None):
        pytest.skip("the PostgreSQL server is not on this machine: no tablespace on a tmpfs")
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no postgres user on this machine to own a tablespace")
    suffix = uuid.uuid4().hex[:10]
    space, name = f"tcdb_small_{suffix}", f"tcdb_fault_{suffix}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with tmpfs(folder, "256m"):
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        with admin.connect() as conn:
            conn.execute(text(f"CREATE TABLESPACE {space} LOCATION '{folder}'"))
            conn.execute(text(f'CREATE DATABASE "{name}" TABLESPACE {space}'))
        url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
        try:
            from tcdb.storage import migrate

            migrate.upgrade(url)
            dispose_engine(url)
            yield url
        finally:
            dispose_engine(url)
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                conn.execute(text(f"DROP TABLESPACE IF EXISTS {space}"))
            admin.dispose()


def checkpoint() -> None:
    """Write every dirty page to disk. A new database's pages sit in shared buffers (and its
    files are sparse until then): shrinking the tmpfs before they are written would make the
    server's checkpoints fail, and with them every other test's DROP DATABASE."""
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("CHECKPOINT"))
    admin.dispose()


@needs_mount
def test_a_full_disk_under_postgres(files: dict[str, Path], tcdb: Tcdb) -> None:
    # the server's user must reach the folder: not under pytest's private tmp_path
    folder = Path(f"/tmp/tcdb-small-disk-{uuid.uuid4().hex[:10]}")
    with postgres_on_small_disk(folder) as url:
        assert tcdb(url, "collection", "add", "c")[0] == 0
        before = database_state(url)
        dispose_engine(url)
        checkpoint()  # else the server's own dirty pages find the disk full, not only the ingest
        remount(folder, f"size={used_kib(folder) + 1024}k")
        code, _, err = run_process(url, *ingest_args(files))
        message = one_line(code, err, "full")
        checkpoint()  # the server itself is unharmed: its checkpoints still succeed
        rows = changed_rows(before, url)
        check = tcdb(url, "db", "check")[0]
        remount(folder, "size=256m")
        retry = tcdb(url, *ingest_args(files))[0]
    report("full disk (tablespace)", "postgres", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


# --- a backend terminated mid-write -------------------------------------------------------


def terminate_when_writing(url: str, args: list[str]) -> tuple[int, str]:
    """Run `tcdb ARGS…`; once its backend holds a transaction id (it has written), end it
    with `pg_terminate_backend` from a second connection. Returns (exit code, stderr)."""
    tag = f"tcdb_victim_{uuid.uuid4().hex[:8]}"
    process = start(url, *args, env={"PGAPPNAME": tag})
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    terminated = False
    try:
        with admin.connect() as conn:
            while process.poll() is None and not terminated:
                pid = conn.execute(text(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = :tag "
                    "AND backend_xid IS NOT NULL"), {"tag": tag}).scalar()
                if pid is not None:
                    terminated = bool(conn.execute(text("SELECT pg_terminate_backend(:pid)"),
                                                   {"pid": pid}).scalar())
                else:
                    time.sleep(0.005)
    finally:
        admin.dispose()
    _, err = process.communicate(timeout=600)
    assert terminated, f"the command finished before its backend could be ended: {err}"
    return process.returncode, err


@pytest.mark.parametrize("what", ["snapshot ingest", "run import"])
def test_a_backend_terminated_mid_write(what: str, pg_url: str,
                                        files: dict[str, Path], tcdb: Tcdb) -> None:
    assert tcdb(pg_url, "collection", "add", "c")[0] == 0
    if what == "run import":
        assert tcdb(pg_url, *ingest_args(files, "base"))[0] == 0
        args = import_args(files)
    else:
        args = ingest_args(files)
    before = database_state(pg_url)
    dispose_engine(pg_url)
    code, err = terminate_when_writing(pg_url, args)
    # the server's "terminating connection due to administrator command" (57P01) when the
    # driver reads it, else the connection found closed mid-COPY: both say run it again
    message = one_line(code, err, "connection", "run it again")
    rows = changed_rows(before, pg_url)
    check = tcdb(pg_url, "db", "check")[0]
    retry = tcdb(pg_url, *args)[0]
    report(f"pg_terminate_backend: {what}", "postgres", message, rows, check, retry)
    assert (rows, check, retry) == (0, 0, 0)


def test_a_terminated_backend_is_retried_by_prefect_tasks() -> None:
    """The retry rule of the Prefect tasks: a connection the server ended is worth another
    try; a read-only, full, foreign or newer database is not."""
    from tcdb.flows.common import is_transient

    assert is_transient(DatabaseUnavailableError("ended the connection"))
    for error in (DatabaseError("not a SQLite database"), DatabaseReadOnlyError("read-only"),
                  DatabaseFullError("full"), DatabaseNewerError("newer")):
        assert not is_transient(error)


def test_a_server_that_refuses_connections(tmp_path: Path, tcdb: Tcdb) -> None:
    require_postgres()
    with socket_nobody_listens_on() as port:
        url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/tcdb"
        for args in (["collection", "list"], ["collection", "add", "c"], ["db", "upgrade"]):
            code, _, err = tcdb(url, *args)
            message = one_line(code, err, "cannot reach the database", str(port))
        from tcdb import api
        from tcdb.flows.common import is_transient

        with pytest.raises(DatabaseUnavailableError) as raised:
            api.collections(database=url)
        assert is_transient(raised.value)
        dispose_engine(url)
    report("connection refused", "postgres", message, 0, -1, -1)


@contextmanager
def socket_nobody_listens_on() -> Iterator[int]:
    """A port that was just free: bound, then closed, so connecting is refused."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


# --- a newer schema ----------------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
def any_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from create_database(request.param, tmp_path)


@pytest.mark.parametrize("recorded", [True, False], ids=["version recorded", "no record"])
def test_a_database_newer_than_this_tcdb(any_url: str, recorded: bool, tcdb: Tcdb) -> None:
    from tcdb import api
    from tcdb.storage import migrate

    assert tcdb(any_url, "collection", "add", "c")[0] == 0
    engine = create_engine(any_url)
    with engine.begin() as conn:  # what a newer tcdb's `db upgrade` leaves
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
        if recorded:
            conn.execute(text("INSERT INTO schema_upgrade (revision, tcdb_version, upgraded_at)"
                              " VALUES ('9999', '9.9.9', CURRENT_TIMESTAMP)"))
    engine.dispose()
    dispose_engine(any_url)
    with unguarded():  # the test reads what this tcdb refuses to
        before = database_state(any_url)
    dispose_engine(any_url)
    words = ["newer than this tcdb", "9999", "upgrade tcdb"]
    words += ["tcdb 9.9.9"] if recorded else []
    for args in (["db", "upgrade"], ["db", "downgrade", "0014"], ["collection", "list"],
                 ["collection", "add", "d"], ["db", "check"]):
        code, _, err = tcdb(any_url, *args)
        message = one_line(code, err, *words)
    code, out, _ = tcdb(any_url, "db", "current")
    assert code == 0 and "9999" in out and "newer than this tcdb" in out
    with pytest.raises(DatabaseNewerError, match="newer than this tcdb"):
        api.collections(database=any_url)
    with pytest.raises(DatabaseNewerError):
        migrate.upgrade(any_url)
    dispose_engine(any_url)
    with unguarded():
        rows = changed_rows(before, any_url)
    backend = make_url(any_url).get_backend_name()
    report(f"newer schema ({'recorded' if recorded else 'no record'})", backend, message,
           rows, -1, -1)
    assert rows == 0


def test_each_upgrade_records_the_tcdb_that_ran_it(any_url: str) -> None:
    """What an older tcdb reads to name the newer one: the version at every revision reached."""
    from tcdb import __version__
    from tcdb.storage import migrate

    head = migrate.head_revision()
    engine = create_engine(any_url)
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT revision, tcdb_version FROM schema_upgrade")).all())
    engine.dispose()
    assert rows == {head: __version__}
