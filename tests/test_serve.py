"""`tcdb serve` as people run it: a separate process that reports its deployments, serves them
against Prefect's local API (state in its own PREFECT_HOME) and stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

STARTUP_SECONDS = 240  # the first start of Prefect's local server takes 10–20 s, more when busy
READY = "being served"


def _reader(stream, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def test_serve_reports_its_deployments_and_stops_on_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    env = {k: v for k, v in os.environ.items()
           if k not in ("PREFECT_API_URL", "TCDB_DATABASE_URL")}
    env.update(PREFECT_HOME=str(home), PYTHONUNBUFFERED="1", COLUMNS="200",
               TCDB_DATABASE_URL=f"sqlite:///{tmp_path / 'tcdb.sqlite'}")
    process = subprocess.Popen(
        [sys.executable, "-m", "tcdb", "serve", "--spec", "longeval-web"], cwd=tmp_path,
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)
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
        for name in ("import-runs", "evaluate", "ingest-longeval-web"):
            assert name in text, text
        assert "ingest-trec-covid" not in text  # a shipped spec is scheduled only when named
        assert "15 * * * *" in text and "0 2 * * *" in text
        assert f"PREFECT_HOME={home} prefect deployment run" in text  # hints that work as printed
        assert f"state in {home}" in text
        assert (home / "prefect.db").exists()  # Prefect's state went where it was told
        assert (tmp_path / "runs").is_dir()  # the hourly import's drop folder is there

        os.kill(process.pid, signal.SIGTERM)
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    while (line := lines.get(timeout=10)) is not None:
        output.append(line)
    assert code == 0, "".join(output)
    assert "Traceback" not in "".join(output)


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
