"""The `tcdb` command. Each command group lives in its own module under `tcdb.cli`.

Heavy libraries (pandas, prefect, streamlit, ir_datasets) are imported inside the commands
that need them, so `tcdb --help` answers at once.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup, _click

from tcdb import __version__
from tcdb.cli import help_style
from tcdb.cli.commands import COMMANDS
from tcdb.settings import get_settings

help_style.apply()

class _LazyRoot(TyperGroup):
    """The root group loads a command's module only when that command runs (or its own help
    is asked for): `tcdb report …` imports the reports, not the pools or the ingest. The root
    help lists every command from `COMMANDS` without importing any."""

    listing = False

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [name for _, _, name, _, _ in COMMANDS]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> Any:
        entry = next((c for c in COMMANDS if c[2] == cmd_name), None)
        if entry is None:
            return None
        module_name, attribute, name, panel, summary = entry
        if self.listing:
            return TyperCommand(name, short_help=summary, rich_help_panel=panel)
        if cmd_name not in self.commands:
            self.commands[cmd_name] = _load(module_name, attribute, name, panel)
        return self.commands[cmd_name]

    def format_help(self, ctx: _click.Context, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False


def _load(module_name: str, attribute: str, name: str, panel: str) -> Any:
    """The click command of one entry of `COMMANDS`, built by typer from its module."""
    module = importlib.import_module(f"tcdb.cli.{module_name}")
    if attribute == "app":
        command: Any = typer.main.get_group(module.app)
    else:
        single = typer.Typer()
        single.command(name, rich_help_panel=panel)(getattr(module, attribute))
        command = typer.main.get_command(single)
    command.name = name
    return command


app = typer.Typer(
    name="tcdb",
    cls=_LazyRoot,
    help="A longitudinal test-collection database for IR evaluation: snapshots, qrels, runs, "
    "pools, reusability and persistence reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)



def _version(value: bool) -> None:
    if value:
        typer.echo(f"tcdb {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    ctx: typer.Context,
    database_url: str | None = typer.Option(
        None, "--database-url", envvar="TCDB_DATABASE_URL", show_envvar=True,
        help="Database to use: sqlite:///FILE (default sqlite:///tcdb.sqlite) or "
        "postgresql+psycopg://USER@HOST/DB. Accepted after the command too.",
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    ctx.obj = database_url  # the commands' database (`tcdb.cli.database.cli_database`)
    get_settings()  # every TCDB_* setting checked before any command: a bad one is one line


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
    from tcdb.cli.output import encode_anything, err_console
    from tcdb.errors import TcdbError

    encode_anything()
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
            err_console.print(interrupt.message(), highlight=False)
            return 130
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except TcdbError as exc:
        print_error(str(exc))
        return 1
    except KeyboardInterrupt:
        err_console.print(interrupt.message(), highlight=False)
        return 130
    except Exception as exc:
        from tcdb.storage.guard import explain

        message = explain(exc)
        if message is None:
            raise
        from tcdb.errors import cut

        print_error(cut(message))  # a driver's message may quote a whole value: cut it too
        return 1
    return 0


def print_error(message: str) -> None:
    """`error: MESSAGE` as one line on stderr, the message exactly as written: a file named
    `[bold]` or `:thumbs_up:` is neither markup nor an emoji, and a newline inside (a YAML
    parser's message) is shown as `\\n` rather than breaking the line, ESC as `\\x1b`."""
    from rich.text import Text

    from tcdb.cli.output import err_console, terminal_text

    line = Text("error:", style="bold red")
    line.append(" " + terminal_text(message))  # `\n`, `\x1b`, …: no control character raw
    err_console.print(line, highlight=False, emoji=False, markup=False)


def main() -> None:
    sys.exit(run())
