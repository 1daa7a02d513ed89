"""`tcdb serve`: run the scheduled deployments (or register them with a Prefect server).

Without `PREFECT_API_URL` the deployments are served in this process against Prefect's local
(embedded) API, whose state lives in `PREFECT_HOME` (`./.prefect` by default). With
`PREFECT_API_URL` set they are registered with that server on the `tcdb` work pool, and that
pool's workers — on this or any other machine — run them. SIGTERM and Ctrl-C stop it cleanly.
"""

from __future__ import annotations

import signal
from pathlib import Path
from types import FrameType

import typer

from tcdb.cli.output import console, print_json, print_table, tick


def _stop(signum: int, frame: FrameType | None) -> None:
    """SIGTERM before Prefect's runner takes over (it installs its own graceful handler)."""
    raise KeyboardInterrupt


def serve(
    spec: list[Path] = typer.Option([], "--spec", help="An extra collection spec to schedule "
                                    "nightly ingestion for (repeatable)."),
    drop_folder: str = typer.Option("runs", "--drop-folder", help="Where run files are dropped "
                                    "(runs/COLLECTION/SNAPSHOT/)."),
    limit: int | None = typer.Option(None, "--limit", help="Most flow runs at once (serve)."),
    work_pool: str = typer.Option("tcdb", "--work-pool", help="Work pool to register on when "
                                  "PREFECT_API_URL names a server."),
    json_output: bool = typer.Option(False, "--json", help="Report the deployments as JSON."),
) -> None:
    """Serve the scheduled flows (nightly ingestion, hourly run imports and evaluation)."""
    from tcdb.flows.prefect_env import api_url, configure_prefect

    home = configure_prefect()
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        from tcdb.cli.flows import deployment_row
        from tcdb.flows.deployments import (
            build_deployments,
            register_deployments,
            serve_deployments,
        )

        server = api_url()
        if not server:  # the hourly import reads this folder: a missing one is an error there
            Path(drop_folder).mkdir(parents=True, exist_ok=True)
        deployments = build_deployments(spec, drop_folder=drop_folder,
                                        work_pool=work_pool if server else None)
        rows = [deployment_row(d) for d in deployments]
        where = (f"work pool {work_pool!r} at {server}" if server
                 else f"Prefect's local API (state in {home})")
        if json_output:
            print_json({"mode": "register" if server else "serve", "where": where,
                        "deployments": rows})
        else:
            print_table(["name", "flow", "schedule", "parameters"],
                        [(r["name"], r["flow"], r["schedule"],
                          ", ".join(f"{k}={v}" for k, v in r["parameters"].items()) or "–")
                         for r in rows], title="Deployments (times in UTC)")
            console.print(f"{'registering' if server else 'serving'} {len(rows)} deployments "
                          f"on {where}")
        console.file.flush()
        if server:
            register_deployments(deployments, work_pool)
            if not json_output:
                console.print(tick(f"registered; start workers with "
                                   f"`prefect worker start --pool {work_pool}`"))
            return
        serve_deployments(deployments, limit=limit, announce=not json_output)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    console.print("stopped")
