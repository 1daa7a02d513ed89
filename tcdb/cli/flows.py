"""`tcdb flows …`: the scheduled deployments, and running one now.

Thin over `tcdb.flows.deployments`. Prefect is imported inside the commands (after
`configure_prefect()`), so `tcdb --help` stays fast; `flows list` starts no Prefect server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_json, print_table, terminal_text, tick

app = typer.Typer(help=summary("flows"), no_args_is_help=True)

SPEC_HELP = "An extra collection spec (a YAML file) whose ingestion deployment to include."


@app.command("list")
def list_deployments(
    spec: list[Path] = typer.Option([], "--spec", help=SPEC_HELP, readable=False),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show each deployment that can be scheduled: name, flow, schedule and parameters (the
    shipped specs' and yours; no server needed). `tcdb serve` schedules those you name."""
    from tcdb.flows.prefect_env import configure_prefect

    configure_prefect()
    from tcdb.flows.deployments import build_deployments

    rows = [deployment_row(d) for d in build_deployments(spec, shipped=True)]
    if json_output:
        print_json(rows)
        return
    print_table(["name", "flow", "schedule", "parameters"],
                [(r["name"], r["flow"], r["schedule"], _params(r["parameters"])) for r in rows],
                title="Deployments (times in UTC)")


def deployment_row(deployment: Any) -> dict[str, Any]:
    """What `flows list` reports for one Prefect deployment object."""
    from tcdb.flows.status import describe_schedule

    crons = [describe_schedule(s.schedule) for s in deployment.schedules or []]
    return {"name": deployment.name, "flow": deployment.flow_name,
            "schedule": crons[0] if len(crons) == 1 else crons,
            "parameters": dict(deployment.parameters or {}),
            "entrypoint": deployment.entrypoint, "description": deployment.description}


def _params(parameters: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in parameters.items()) or "–"


@app.command("run")
def run_flow(
    name: str = typer.Argument(..., help="A deployment name (`tcdb flows list`) or a flow name "
                               "(a name it does not know lists them)."),
    param: list[str] = typer.Option([], "--param", "-p", help="A parameter as k=v (repeatable): "
                                    "a field of the flow's request (`depth=5`), of another "
                                    "request as `export.format=trec`, or another parameter; "
                                    "v is JSON when it parses, else text."),
    spec: list[Path] = typer.Option([], "--spec", help=SPEC_HELP, readable=False),
    json_output: bool = typer.Option(False, "--json", help="Print the flow's result as JSON."),
) -> None:
    """Run a deployment's flow now, in this process, with its parameters and your overrides."""
    from tcdb.cli.database import cli_database
    from tcdb.flows.prefect_env import configure_prefect

    configure_prefect()
    from tcdb.cli.derive import fields_as_flags
    from tcdb.flows.deployments import prepare_run, worker_database

    db = cli_database()
    with fields_as_flags():
        flow_obj, parameters = prepare_run(name, param, spec)
        # a missing or outdated database is said now, before Prefect's API starts (10-15 s)
        with db.session() as session:
            session.connection()
        with worker_database(db.url):  # this process is the run's worker, on --database-url
            result = flow_obj(**parameters)
    if json_output:
        print_json(result)
        return
    rows = dict(result) if isinstance(result, dict) else {}
    summary = rows.pop("summary", None)  # a flow's one-sentence account, when it gives one
    console.print(tick(f"{name} finished" + (f": {summary}" if summary else "")),
                  highlight=False)
    if rows:
        print_table(["", "value"], [(k, describe(v)) for k, v in rows.items()])


SHOWN = 5  # names a cell lists before "… and N more"


def describe(value: Any) -> str:
    """A result value as a table cell that says what it holds, not "3 item(s)".

    Names (measures, labels, files) are listed, the first few of them; rows and nested reports
    are counted, and `--json` has them in full.
    """
    if value is None or (isinstance(value, dict | list) and not value):
        return "–"
    if not isinstance(value, dict | list):
        return str(value)
    flat = all(not isinstance(v, dict | list)
               for v in (value.values() if isinstance(value, dict) else value))
    if not flat:
        noun = ("row", "rows") if isinstance(value, list) else ("entry", "entries")
        return f"{len(value)} {noun[len(value) != 1]} (--json shows them)"
    shown = ([f"{k}: {v}" for k, v in list(value.items())[:SHOWN]] if isinstance(value, dict)
             else [str(v) for v in value[:SHOWN]])
    more = f" … and {len(value) - SHOWN} more" if len(value) > SHOWN else ""
    return ("; " if isinstance(value, dict) else ", ").join(shown) + more


@app.command("status")
def status(
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Per deployment on the Prefect API in use: schedule, next run, last run (state, time,
    what it did), the work pool's workers, and a schedule the server's scheduler left unrun."""
    from tcdb.flows.prefect_env import api_url, configure_prefect

    home = configure_prefect()
    from tcdb.flows.status import flows_status

    report = flows_status(api_url() or f"Prefect's local API (state in {home})")
    if json_output:
        print_json(report.model_dump(mode="json") | {"problems": report.problems})
        return
    if not report.deployments:
        _line(f"no tcdb deployments on {report.api}: register them with `tcdb serve`")
        return

    def when(moment: Any) -> str:
        return "–" if moment is None else f"{moment:%Y-%m-%d %H:%M:%S}"

    print_table(["deployment", "schedule", "next run", "last run", "last state", "did"],
                [(d.name, d.schedule + (" (paused)" if d.paused else ""), when(d.next_run),
                  when(d.last_run.time) if d.last_run else "–",
                  (d.last_run.state + ("" if d.last_run.auto_scheduled else " (by hand)"))
                  if d.last_run else "–",
                  d.last_run.outcome or "–" if d.last_run else "–")
                 for d in report.deployments], title=f"Deployments on {report.api} (UTC)")
    for pool, workers in report.workers.items():
        seen = ", ".join(f"{w.name} ({w.status.lower()}, last seen {when(w.last_heartbeat)})"
                         for w in workers)
        _line(f"work pool {pool}: " + (seen or "no worker has polled it; start one with "
                                         f"`prefect worker start --pool {pool}`"))
    for problem in report.problems:
        _line(f"warning: {problem}")


def _line(text: str) -> None:
    """A line that may carry names (pools, paths): printed as it is, controls escaped."""
    console.print(terminal_text(text), highlight=False, markup=False, soft_wrap=True)
