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
from tcdb.cli import help_style

help_style.apply()

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
    ("literature", "app", "literature", "Reports"),
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
        "postgresql+psycopg://USER@HOST/DB. Accepted after the command too.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    if database_url:
        os.environ["TCDB_DATABASE_URL"] = database_url


def _register() -> None:
    for module_name, attribute, name, panel in COMMANDS:
        module = importlib.import_module(f"tcdb.cli.{module_name}")
        if attribute == "app":
            app.add_typer(module.app, name=name, rich_help_panel=panel)
        else:
            app.command(name, rich_help_panel=panel)(getattr(module, attribute))


_register()


# Options of the root callback that may also follow the command name (each takes a value).
GLOBAL_OPTIONS: tuple[str, ...] = ("--database-url",)


def hoist_global_options(argv: list[str]) -> list[str]:
    """Move global options given after the command (`tcdb run list --database-url URL`) in
    front of it, where Click looks for them; arguments after a literal `--` stay where they are.

    Raises ValueError for a global option without its value.
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest += argv[i:]
            break
        name, equals, _ = arg.partition("=")
        if name not in GLOBAL_OPTIONS:
            rest.append(arg)
        elif equals:
            front.append(arg)
        elif i + 1 < len(argv) and argv[i + 1] != "--":
            front += [arg, argv[i + 1]]
            i += 1
        else:
            raise ValueError(f"{arg} needs a value ({arg} VALUE)")
        i += 1
    return front + rest


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code; known errors become one line on stderr.

    Global options may follow the command (`hoist_global_options`); Ctrl-C exits with 130 and
    one line saying what was written.
    """
    from tcdb.cli import interrupt
    from tcdb.cli.output import err_console
    from tcdb.errors import TcdbError

    try:
        args = hoist_global_options(sys.argv[1:] if argv is None else list(argv))
    except ValueError as exc:
        print_error(str(exc))
        return 2
    try:
        if interrupt.runs_a_command(args):
            interrupt.track_writes()
        app(args=args, prog_name="tcdb", standalone_mode=True)
    except SystemExit as exc:
        if interrupt.by_ctrl_c(exc):  # Typer turns KeyboardInterrupt into a silent exit 130
            err_console.print(interrupt.message(), highlight=False, soft_wrap=True)
            return 130
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TcdbError as exc:
        print_error(str(exc))
        return 1
    except KeyboardInterrupt:
        err_console.print(interrupt.message(), highlight=False, soft_wrap=True)
        return 130
    except Exception as exc:
        from tcdb.storage.guard import explain

        message = explain(exc)
        if message is None:
            raise
        print_error(message)
        return 1
    return 0


def print_error(message: str) -> None:
    """`error: MESSAGE` as one line on stderr, the message exactly as written: a file named
    `[bold]` or `:thumbs_up:` is neither markup nor an emoji, and a newline inside (a YAML
    parser's message) is shown as `\\n` rather than breaking the line."""
    from rich.text import Text

    from tcdb.cli.output import err_console

    line = Text("error:", style="bold red")
    line.append(" " + message.replace("\r", "\\r").replace("\n", "\\n"))
    err_console.print(line, highlight=False, soft_wrap=True, emoji=False, markup=False)


def main() -> None:
    sys.exit(run())
