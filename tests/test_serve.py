"""`tcdb serve` as people run it: a separate process that reports its deployments, starts a
Prefect server of its own (state in its PREFECT_HOME), serves the deployments against it so
that the server's scheduler fires them — a spec's ingestion runs on its schedule with no manual
trigger — and stops cleanly, server included, on SIGTERM."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.scheduled import COLLECTION, N_DOCS, snapshot_rows, write_scheduled_spec

pytestmark = [pytest.mark.server, pytest.mark.kill, pytest.mark.slow]

STARTUP_SECONDS = 240  # the first start of a Prefect server takes 10–20 s, more when busy
FIRE_SECONDS = 300  # for the scheduler to create the run and the served runner to finish it
READY = "being served"


def _reader(stream, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def test_serve_fires_a_spec_on_its_schedule_and_stops_on_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    database = tmp_path / "tcdb.sqlite"
    spec = write_scheduled_spec(tmp_path, tmp_path / "irds", interval=10)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PREFECT_API_URL", "TCDB_DATABASE_URL")}
    env.update(PREFECT_HOME=str(home), PYTHONUNBUFFERED="1", COLUMNS="200",
               IR_DATASETS_HOME=str(tmp_path / "irds"))
    created = subprocess.run([sys.executable, "-m", "tcdb", "db", "upgrade"], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=120)
    assert created.returncode == 0, created.stderr
    process = subprocess.Popen(
        [sys.executable, "-m", "tcdb", "serve", "--spec", spec.name, "--spec",
         "longeval-web"], cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(process.stdout, lines), daemon=True).start()
    output: list[str] = []
    try:
        while True:
            line = lines.get(timeout=STARTUP_SECONDS)
            if line is None:
                break
            output.append(line)
            if READY in line:
                break
        text = "".join(output)
        assert READY in text, text
        for name in ("import-runs", "evaluate", "ingest-longeval-web", f"ingest-{COLLECTION}"):
            assert name in text, text
        assert "ingest-trec-covid" not in text  # a shipped spec is scheduled only when named
        assert "15 * * * *" in text and "0 2 * * *" in text and "every 10 s" in text
        assert f"state and server.log in {home}" in text
        assert (home / "prefect.db").exists()  # Prefect's state went where it was told
        assert (tmp_path / "runs").is_dir()  # the hourly import's drop folder is there
        api = re.search(r"PREFECT_API_URL=(\S+) prefect deployment run", text)
        assert api, text  # the hints carry the API they talk to

        # no trigger: the server's scheduler creates the run, the served runner runs it
        deadline = time.monotonic() + FIRE_SECONDS
        while snapshot_rows(f"sqlite:///{database}") != [("2022-06", "complete", N_DOCS)]:
            assert time.monotonic() < deadline, "no scheduled run ingested the snapshot:\n" \
                + "".join(output) + _drain(lines)
            assert process.poll() is None, "".join(output) + _drain(lines)
            time.sleep(2)

        os.kill(process.pid, signal.SIGTERM)
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    output.append(_drain(lines))
    assert code == 0, "".join(output)
    assert "Traceback" not in "".join(output)
    try:  # the server it started is gone with it
        urllib.request.urlopen(f"{api.group(1)}/health", timeout=5)
    except OSError:
        pass
    else:
        raise AssertionError("the Prefect server outlived `tcdb serve`")


def _drain(lines: queue.Queue[str | None]) -> str:
    text = []
    while True:
        try:
            line = lines.get(timeout=10)
        except queue.Empty:
            break
        if line is None:
            break
        text.append(line)
    return "".join(text)


def test_only_a_half_built_event_loop_is_silenced() -> None:
    """The shutdown race's error is told from every other: a loop whose `__init__` never ran
    (made here with `__new__`, as the race leaves one) lacks its attributes; other objects'
    missing attributes, and other errors, still reach the hook before it."""
    import asyncio

    from tcdb.flows.deployments import half_built_event_loop

    half_built = asyncio.SelectorEventLoop.__new__(asyncio.SelectorEventLoop)
    errors = []
    try:
        for probe in (lambda: repr(half_built), lambda: half_built.get_debug(),
                      lambda: object().missing, lambda: {}["key"]):  # type: ignore[attr-defined]
            try:
                probe()
            except Exception as exc:  # noqa: BLE001 - the kinds are what is tested
                errors.append(exc)
    finally:
        half_built._closed = True  # type: ignore[attr-defined]  # so its __del__ passes quietly
    assert [half_built_event_loop(e) for e in errors] == [True, True, False, False]
    assert not half_built_event_loop(None)
