"""`tcdb serve`: run the scheduled deployments (or register them with a Prefect server).

Without `PREFECT_API_URL` it starts a Prefect server on this machine (`prefect server start`:
Prefect's embedded API has no scheduler, so no schedule would ever fire), whose state lives in
`PREFECT_HOME` (`./.prefect` by default), and serves the deployments in this process. With
`PREFECT_API_URL` set they are registered with that server on the `tcdb` work pool, and that
pool's workers — on this or any other machine — run them. SIGTERM and Ctrl-C stop it cleanly.

Only what the user names is scheduled: ingestion for each `--spec` (on the spec's `schedule`),
and the hourly run imports and evaluation.
"""

from __future__ import annotations

import datetime as dt
import os
import shlex
import signal
from contextlib import nullcontext
from pathlib import Path
from types import FrameType
from typing import Any

import typer

from tcdb.cli.output import console, print_json, print_table, say, terminal_text

SPEC_HELP = ("A collection spec to schedule ingestion for (repeatable): a YAML file, or a "
             "shipped spec by name (longeval-web, longeval-2023, trec-covid). Only the specs "
             "named are scheduled, each on its `schedule` (nightly at 02:00 UTC by default).")


def _stop(signum: int, frame: FrameType | None) -> None:
    """SIGTERM before Prefect's runner takes over (it installs its own graceful handler)."""
    raise KeyboardInterrupt


def serve(
    spec: list[str] = typer.Option([], "--spec", help=SPEC_HELP),
    drop_folder: str = typer.Option("runs", "--drop-folder", help="Where run files are dropped "
                                    "(runs/COLLECTION/SNAPSHOT/)."),
    limit: int | None = typer.Option(None, "--limit", min=1,
                                     help="Most flow runs at once (serve)."),
    work_pool: str = typer.Option("tcdb", "--work-pool", help="Work pool to register on when "
                                  "PREFECT_API_URL names a server."),
    json_output: bool = typer.Option(False, "--json", help="Report the deployments as JSON."),
) -> None:
    """Serve the scheduled flows: ingestion of the specs you name, hourly run imports and
    evaluation."""
    from tcdb.cli.database import cli_database
    from tcdb.flows.prefect_env import api_url, configure_prefect

    home = configure_prefect()
    server = api_url()
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        from tcdb.flows.local_server import local_prefect_server

        if not server:  # the hourly import reads this folder: a missing one is an error there
            Path(drop_folder).mkdir(parents=True, exist_ok=True)
        with nullcontext(server) if server else local_prefect_server(home) as api:
            os.environ["PREFECT_API_URL"] = api  # before prefect is imported: its API
            _serve_on(api, registering=server is not None, spec=spec, home=home,
                      database_url=cli_database().url, drop_folder=drop_folder,
                      limit=limit, work_pool=work_pool, json_output=json_output)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not server:
        console.print("stopped")


def _serve_on(api: str, *, registering: bool, spec: list[str], home: Path, database_url: str,
              drop_folder: str, limit: int | None, work_pool: str, json_output: bool) -> None:
    """Register the deployments on `api`'s work pool (and return), or serve them here."""
    from tcdb.flows.deployments import (
        build_deployments,
        declared_deployments,
        next_run,
        register_deployments,
        serve_deployments,
        worker_database_url,
    )

    worker_url, changed = worker_database_url(database_url)
    decls = declared_deployments(spec, drop_folder=drop_folder)
    deployments = build_deployments(spec, drop_folder=drop_folder,
                                    work_pool=work_pool if registering else None,
                                    database_url=worker_url if registering else None)
    now = dt.datetime.now(dt.UTC)
    rows = [{**d.as_dict(), "next_run": _iso(next_run(d.schedule, now))} for d in decls]
    where = (f"work pool {work_pool!r} at {api}" if registering else
             f"a Prefect server started here at {api} (its scheduler creates the runs; state "
             f"and server.log in {home}; UI at {api.removesuffix('/api')})")
    hints = _hints(decls, api, registering, work_pool)
    if json_output:
        print_json({"mode": "register" if registering else "serve", "where": where,
                    "database_url": worker_url if registering else database_url,
                    "database_url_changed": changed if registering else None,
                    "deployments": rows, "hints": hints})
    else:
        print_table(["name", "flow", "schedule", "next run (UTC)", "parameters"],
                    [(r["name"], r["flow"], r["schedule"], r["next_run"] or "–",
                      ", ".join(f"{k}={v}" for k, v in r["parameters"].items()) or "–")
                     for r in rows], title="Deployments (times in UTC)")
        if not spec:
            say("no --spec given: no collection is ingested on a schedule (name a spec file, "
                "or a shipped one such as longeval-web)")
        say(f"{'registering' if registering else 'serving'} {len(rows)} deployments on {where}")
        if registering:
            say(f"flows run against {worker_url}" + (f" ({changed})" if changed else ""))
    console.file.flush()
    if registering:
        register_deployments(deployments, work_pool)
    if not json_output:
        for hint in hints:
            console.print(terminal_text(hint), highlight=False, markup=False, soft_wrap=True)
        if not registering:
            console.print("deployments are being served, polling for scheduled runs "
                          "(Ctrl-C or SIGTERM stops)")
        console.file.flush()
    if not registering:
        serve_deployments(deployments, limit=limit)


def _iso(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(dt.UTC).strftime(
        "%Y-%m-%d %H:%M:%S")


def _hints(decls: list[Any], api: str, registering: bool, work_pool: str) -> list[str]:
    """Commands that work as printed in another shell: the Prefect ones carry the API they
    must talk to (Prefect's own hint assumes the caller's environment)."""
    first = next((d for d in decls if d.flow == "ingest-new-snapshots"), decls[0])
    target = f"PREFECT_API_URL={shlex.quote(api)}"
    hints = []
    if registering:
        hints.append(f"✓ registered; start a worker: {target} prefect worker start "
                     f"--pool {shlex.quote(work_pool)}")
    hints += [
        f"run one now through Prefect: {target} prefect deployment run "
        f"{shlex.quote(f'{first.flow}/{first.name}')}",
        f"run one now in this shell: tcdb flows run {shlex.quote(first.name)}"
        + "".join(f" --spec {shlex.quote(p)}" for p in
                  ([first.parameters["spec_path"]] if "spec_path" in first.parameters else [])),
        f"see schedules, runs and workers: {target} tcdb flows status",
    ]
    return hints
