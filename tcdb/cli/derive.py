"""CLI commands derived from operations: one rule maps a request's fields to arguments and flags.

The rule: a field marked `argument` is a positional argument (`COLLECTION`); any other field
`name` is the option `--name` with underscores as dashes, a list field in the singular and
repeatable (`measures` → `--measure`, given once per value), a boolean a flag (`--paired`; one
that defaults to true also `--no-…`). A field may keep a flag the CLI has long spelt otherwise
(`flag="--vs"`), and a one-letter alias (`short="-m"`). Every derived command takes `--json`;
every one that reads (and `evaluate`) `--format table|markdown|latex|csv`, the result's
`paper_table()` for a paper (`--as` where the request has a `format` field of its own).

Errors the core raises name the request's fields (`FieldError`); the derived command says them
as its own flags, by the same rule, so no message is rewritten by pattern.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

import typer
from pydantic.fields import FieldInfo

from tcdb.errors import FieldError, InputError, OptionError
from tcdb.operations import Operation, Request, Result
from tcdb.operations.registry import get_operation

Show = Callable[..., None]

class PaperFormat(StrEnum):
    """How `--format` prints a result: for people, or as a table for a paper."""

    table = "table"
    markdown = "markdown"
    latex = "latex"
    csv = "csv"


# Words of the field that are plural only: `--qrels NAME` names one qrels set.
PLURAL_ONLY = frozenset({"qrels"})


def _extra(field: FieldInfo) -> dict[str, Any]:
    extra = field.json_schema_extra
    return extra if isinstance(extra, dict) else {}


def is_argument(field: FieldInfo) -> bool:
    return _extra(field).get("cli") == "argument"


def _bare(annotation: Any) -> tuple[Any, bool]:
    """The annotation without `| None` and `Annotated[…]`, and whether it is a list."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _bare(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        # `X | None` is X; a union of kinds (labels, or a {snapshot: name} map for the API)
        # is, on the command line, its first member
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _bare(inner[0])
    if origin in (list, tuple, set, frozenset):
        inner, _ = _bare(typing.get_args(annotation)[0])
        return inner, True
    if origin is typing.Literal:
        return str, False
    return annotation, False


def _cli_type(annotation: Any) -> Any:
    """A type typer understands: str, int, float, bool, Path, an Enum, or a list of one."""
    inner, many = _bare(annotation)
    if not (inner in (str, int, float, bool, Path) or
            (isinstance(inner, type) and issubclass(inner, Enum))):
        inner = str
    return list[inner] if many else inner  # type: ignore[valid-type]


def flag_of(name: str, field: FieldInfo) -> str:
    """The option a field is on the command line, by the rule (or the field's own `flag`)."""
    if is_argument(field):
        return str(_extra(field).get("metavar") or name.upper())
    if _extra(field).get("flag"):
        return str(_extra(field)["flag"])
    _, many = _bare(field.annotation)
    if many and name.endswith("s") and not name.endswith("ss") and name not in PLURAL_ONLY:
        name = name[:-3] + "y" if name.endswith("ies") else name[:-1]
    return "--" + name.replace("_", "-")


def flags_of(request: type[Request], fields: str) -> str:
    """`irds/docs` → `--irds/--docs`: each field of a FieldError as the command names it."""
    return "/".join(flag_of(part, request.model_fields[part])
                    if part in request.model_fields else "--" + part.replace("_", "-")
                    for part in fields.split("/"))


def _parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    annotation = _cli_type(field.annotation)
    required = field.is_required()
    default = ... if required else field.get_default(call_default_factory=True)
    if isinstance(default, tuple):
        default = list(default)
    help_text = field.description or ""
    extra = _extra(field)
    # readable=False: typer would check a path's readability itself and print its usage box
    # (exit 2); the core's readers say it in the one `error:` line every bad input gets
    if is_argument(field):
        info: Any = typer.Argument(default, help=help_text, metavar=flag_of(name, field),
                                   show_default=not required and default is not None,
                                   readable=False)
    else:
        flag = flag_of(name, field)
        names = [flag]
        if annotation is bool and default is True and not extra.get("flag"):
            names = [f"{flag}/--no-{flag[2:]}"]
        if extra.get("short"):
            names.append(str(extra["short"]))
        info = typer.Option(default, *names, help=help_text, metavar=extra.get("metavar"),
                            show_default=default not in (None, False, []), readable=False)
    if not required and default is None:
        annotation = annotation | None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info,
                             annotation=annotation)


def command(
    name: str,
    *,
    show: Show | None = None,
    extras: list[inspect.Parameter] | None = None,
    prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None,
    after: Show | None = None,
    paper: bool | None = None,
) -> DerivedCommand:
    """The CLI command of operation `name`, for `app.command(...)`.

    `show(result, **extras)` prints the result for people (by default, its frame as a table);
    `--json` prints `result.to_data()`. `extras` are CLI-only options (an output file…) handed
    to `show`; `prepare(fields, extras)` may reshape the fields before the request is built
    (`--snapshots a,b`) and check the extras (and `json`, whether `--json` was given) against
    them; `after(result, **extras)` does what the extras ask (write a file) whatever the
    output, `--json` or tables. `paper`: offer `--format` (default: when the operation only
    reads).
    """
    return DerivedCommand(name, show, extras or [], prepare, after, paper)


class DerivedCommand:
    """A command typer reads like a function; the operation is looked up only when typer asks
    for the signature (when the command tree is built), so importing the CLI stays light."""

    def __init__(self, name: str, show: Show | None, extras: list[inspect.Parameter],
                 prepare: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None,
                 after: Show | None, paper: bool | None = None) -> None:
        self.__name__ = self.__qualname__ = name
        self._show, self._extras, self._prepare, self._after = show, extras, prepare, after
        self._paper = paper

    @property
    def paper(self) -> bool:
        """Whether the command offers `--format` (its result as a table for a paper)."""
        return not self.operation.writes if self._paper is None else self._paper

    @property
    def operation(self) -> Operation[Any, Any]:
        return get_operation(self.__name__)

    @property
    def __signature__(self) -> inspect.Signature:
        parameters = [_parameter(field_name, field)
                      for field_name, field in self.operation.request.model_fields.items()]
        parameters += self._extras
        parameters.append(inspect.Parameter(
            "json_output", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
            default=typer.Option(False, "--json", help="Print JSON.")))
        if self.paper:
            flag = "--as" if "format" in self.operation.request.model_fields else "--format"
            parameters.append(inspect.Parameter(
                "paper_format", inspect.Parameter.KEYWORD_ONLY, annotation=PaperFormat,
                default=typer.Option(PaperFormat.table, flag, help=(
                    "table (for people), or for a paper: markdown, latex (booktabs; best in "
                    "bold, significance marks, lineage as comments) or csv."))))
        return inspect.Signature(parameters)

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return help_paragraphs(inspect.getdoc(self.operation.function))

    def __call__(self, **given: Any) -> None:
        as_json = given.pop("json_output")
        paper = given.pop("paper_format", PaperFormat.table)
        if as_json and paper is not PaperFormat.table:
            raise OptionError("--json/--format", "give one output: JSON or a paper table")
        extra_values = {p.name: given.pop(p.name) for p in self._extras}
        fields = (self._prepare(given, {**extra_values, "json": as_json}) if self._prepare
                  else given)
        result = run_operation(self.operation, fields)
        with _summary_beside(fields.get("out")):
            self._show_result(result, extra_values, as_json, paper)

    def _show_result(self, result: Result, extra_values: dict[str, Any], as_json: bool,
                     paper: PaperFormat) -> None:
        if self._after is not None:
            self._after(result, **extra_values)
        if paper is not PaperFormat.table:
            from tcdb.operations.paper import render

            sys.stdout.write(render(result.paper_table(), paper.value))
        elif as_json:
            from tcdb.cli.output import print_json

            print_json(result.to_data())
        else:
            if self._show is not None:
                self._show(result, **extra_values)
            else:
                show_frame(result)
            _say_circularity(result)


def _say_circularity(result: Result) -> None:
    """Below any report's table: the runs it ranks under qrels an LLM of their own model
    family judged (`tcdb.operations.circularity`), one line each."""
    from tcdb.cli.output import console, terminal_text

    lineage = getattr(result, "lineage", None)
    for flag in getattr(lineage, "circular", None) or []:
        console.print(terminal_text(flag.line()), highlight=False, markup=False, emoji=False)


@contextmanager
def _summary_beside(out: Any) -> Iterator[None]:
    """When the data went to standard output (`--out -`), what the command says of it goes to
    standard error, so that a pipe carries the data alone."""
    from tcdb.collections.files.opening import is_stdout

    if not is_stdout(out):
        yield
        return
    with redirect_stdout(sys.stderr):
        yield


def run_operation(op: Operation[Any, Any], fields: dict[str, Any]) -> Result:
    """Build the request and run the operation; a FieldError is said with the command's flags."""
    from tcdb.cli.database import cli_database
    from tcdb.collections.files.bad_lines import BadLine

    try:
        return op.run(cli_database(), **fields)
    except FieldError as exc:
        raise OptionError(flags_of(op.request, exc.field), exc.reason) from None
    except BadLine as exc:  # a line the command's --on-bad-lines could have set aside
        if "on_bad_lines" not in op.request.model_fields:
            raise
        flag = flags_of(op.request, "on_bad_lines")
        raise InputError(exc.file, exc.line,
                         f"{exc.reason} ({flag} warn|skip sets such lines aside)") from None


@contextmanager
def fields_as_flags(**flags: str) -> Iterator[None]:
    """For commands that are not derived: a FieldError raised inside names the command's flag,
    `flags[field]` where given (`role="ROLE"`), else `--field` by the rule."""
    try:
        yield
    except FieldError as exc:
        said = "/".join(flags.get(part, "--" + part.replace("_", "-"))
                        for part in exc.field.split("/"))
        raise OptionError(said, exc.reason) from None


def show_frame(result: Result, title: str | None = None) -> None:
    """A result's frame as a table that never cuts a value."""
    from tcdb.cli.output import print_table

    frame = result.to_frame()
    print_table([str(c) for c in frame.columns], frame.itertuples(index=False), title=title)


def help_paragraphs(doc: str | None) -> str | None:
    """A docstring as `--help` shows it: each paragraph's lines joined, so the terminal wraps
    it at its width (Markdown help keeps a docstring's line breaks: a paragraph wrapped at 95
    characters broke mid-sentence at 80). Lists and indented blocks keep their lines."""
    if doc is None:
        return None
    paragraphs = []
    for paragraph in doc.split("\n\n"):
        lines = paragraph.split("\n")
        kept = any(line.startswith((" ", "- ", "* ", "|")) or re.match(r"\d+\. ", line)
                   for line in lines)
        paragraphs.append(paragraph if kept else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)

