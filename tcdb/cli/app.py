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
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# (module under tcdb.cli, group name) — a group is a Typer app named `app` in that module.
GROUPS: list[tuple[str, str]] = [
    ("db", "db"),
]
# (module under tcdb.cli, function name, command name) — single commands.
COMMANDS: list[tuple[str, str, str]] = [
    ("info", "info", "info"),
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
    for module_name, group in GROUPS:
        module = importlib.import_module(f"tcdb.cli.{module_name}")
        app.add_typer(module.app, name=group)
    for module_name, function, command in COMMANDS:
        module = importlib.import_module(f"tcdb.cli.{module_name}")
        app.command(command)(getattr(module, function))


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
