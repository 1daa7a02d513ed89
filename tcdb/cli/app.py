"""The `tcdb` command. Each command group lives in its own module under `tcdb.cli`.

Heavy libraries (pandas, prefect, streamlit, ir_datasets) are imported inside the commands
that need them, so `tcdb --help` answers at once.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from tcdb import __version__

app = typer.Typer(
    name="tcdb",
    help="A longitudinal test-collection database for IR evaluation: snapshots, qrels, runs, "
    "pools, reusability and persistence reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Every command, in the order and the panels of `tcdb --help`: (module under tcdb.cli,
# attribute, name, panel). An attribute named `app` is a Typer group, anything else a command.
COMMANDS: list[tuple[str, str, str, str]] = [
    ("demo", "demo", "demo", "Start here"),
    ("dashboard", "dashboard", "dashboard", "Start here"),
    ("info", "info", "info", "Start here"),
    ("collection", "app", "collection", "Collections and snapshots"),
    ("snapshot", "app", "snapshot", "Collections and snapshots"),
    ("topics", "app", "topics", "Collections and snapshots"),
    ("run", "app", "run", "Runs, qrels and scores"),
    ("qrels", "app", "qrels", "Runs, qrels and scores"),
    ("evaluate", "evaluate", "evaluate", "Runs, qrels and scores"),
    ("scores", "app", "scores", "Runs, qrels and scores"),
    ("pool", "app", "pool", "Assessment"),
    ("report", "app", "report", "Reports"),
    ("flows", "app", "flows", "Operations"),
    ("serve", "serve", "serve", "Operations"),
    ("db", "app", "db", "Operations"),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tcdb {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    database_url: str | None = typer.Option(
        None, "--database-url", envvar="TCDB_DATABASE_URL", show_envvar=True,
        help="Database to use: sqlite:///FILE (default sqlite:///tcdb.sqlite) or "
        "postgresql+psycopg://USER@HOST/DB.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    if database_url:
        os.environ["TCDB_DATABASE_URL"] = database_url
        from tcdb.settings import get_settings

        get_settings.cache_clear()


def _register() -> None:
    for module_name, attribute, name, panel in COMMANDS:
        module = importlib.import_module(f"tcdb.cli.{module_name}")
        if attribute == "app":
            app.add_typer(module.app, name=name, rich_help_panel=panel)
        else:
            app.command(name, rich_help_panel=panel)(getattr(module, attribute))


_register()


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; known errors become one line on stderr."""
    from tcdb.errors import TcdbError

    try:
        app(args=argv, standalone_mode=True)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TcdbError as exc:
        from tcdb.cli.output import err_console

        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def main() -> None:
    sys.exit(run())
