"""Help that reads as a person writes it: `COLLECTION SNAPSHOT FILES...`, `--run TAG`, `--json`.

Typer's rich help shows Python types (`--json <bool>`, `--run <list[str]>`) and braces around
required arguments (`{collection}`); `--json true` then fails, and `<list[str]>` says nothing to
someone who never read the code. `apply()` replaces the display hooks of typer's parameter
classes: arguments are named in capitals, a flag shows no value, an option shows its metavar
(or its choices, or its name in capitals). It is checked by tests/test_terminal_output.py, so
a typer upgrade that moves the hooks fails a test instead of the help going silently odd.
"""

from __future__ import annotations

from typing import Any

# What an option's value is, where its name alone would not say (`--out FILE`, `--run TAG`);
# options whose name means different things in different commands (`--topics`) keep it.
METAVARS = {
    "--out": "FILE", "--from-file": "FILE", "--spec": "FILE", "--docs": "PATH",
    "--data-dir": "FOLDER", "--drop-folder": "FOLDER", "--date": "YYYY-MM-DD",
    "--description": "TEXT", "--run": "TAG", "--first-stage": "TAG",
    "--exclude-judged": "QRELS", "--expand": "QRELS", "--base": "QRELS", "--vs": "QRELS",
    "--name": "NAME", "--expanded-name": "NAME", "--pooled-name": "NAME",
    "--qrels-name": "NAME", "--work-pool": "NAME", "--core": "SNAPSHOT",
    "--snapshots": "SNAPSHOT", "--pivot": "SYSTEM", "--param": "KEY=VALUE",
    "--bootstrap": "SAMPLES", "--seed": "N", "--depth": "K", "--k": "K",
    "--max-per-topic": "N", "--limit": "N", "--threshold": "TAU", "--grades": "LOW:HIGH",
    "--documents": "N", "--assessor": "NAME", "--per-topic": "FILE",
}


def _option_value(param: Any, ctx: Any) -> str | None:
    """What follows an option in help: nothing for a flag, else the metavar, the choices, or
    the option's own name in capitals (`--measure MEASURE`)."""
    if getattr(param, "is_flag", False) or getattr(param, "is_bool_flag", False):
        return None
    if param.metavar:
        return str(param.metavar)
    longest = max(param.opts, key=len)
    if longest in METAVARS:
        return METAVARS[longest]
    described = getattr(param, "type_descriptor", None)
    if described is not None and described.is_choice and described.choices:
        choices = "|".join(str(getattr(c, "value", c)) for c in described.choices)
        if len(choices) <= 20:  # longer lists belong in the help text, not a wrapped column
            return choices
    return longest.lstrip("-").upper().replace("-", "_")


def _argument_name(param: Any) -> str:
    return str(param.metavar or param.name or "").upper()


def apply() -> None:
    from typer import core

    def option_type(self: Any, ctx: Any) -> str | None:
        return _option_value(self, ctx)

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None  # the argument's name says what it is

    def argument_usage(self: Any) -> str:
        name = _argument_name(self)
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def argument_panel(self: Any) -> str:
        return _argument_name(self) + ("..." if self.nargs != 1 else "")

    def argument_name(self: Any) -> str:
        return _argument_name(self)

    core.TyperOption.display_type_rich = option_type  # type: ignore[method-assign]
    core.TyperArgument.display_type_rich = argument_type  # type: ignore[method-assign]
    core.TyperArgument._usage_display_name = argument_usage  # type: ignore[method-assign]
    core.TyperArgument._rich_display_name = argument_panel  # type: ignore[method-assign]
    core.TyperArgument.display_name_raw = property(argument_name)  # type: ignore[assignment]
