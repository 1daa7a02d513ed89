"""API functions derived from operations: the request's fields are the function's parameters.

`tcdb.api.persistence("longeval-web", ["2022-06", "2022-09"], pivot="bm25")` builds a
`PersistenceRequest` from its arguments, runs the operation on the default database (or
`database=`: a URL or a `Database`) and returns the typed result; `.to_frame()` gives a tidy
DataFrame. Positional arguments are the CLI's positional ones, in order; every other field is
a keyword. A bad value raises `FieldError` naming the parameter, as the core speaks in fields.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tcdb.operations import Database, Operation, Result

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo


def _is_argument(field: Any) -> bool:
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get("cli") == "argument"


def signature_of(op: Operation[Any, Any]) -> inspect.Signature:
    """The API signature of an operation: arguments positional, other fields keyword-only."""
    parameters = []
    for name, field in op.request.model_fields.items():
        kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if _is_argument(field)
                else inspect.Parameter.KEYWORD_ONLY)
        default = (inspect.Parameter.empty if field.is_required()
                   else field.get_default(call_default_factory=True))
        parameters.append(inspect.Parameter(name, kind, default=default,
                                            annotation=field.annotation))
    parameters.append(inspect.Parameter("database", inspect.Parameter.KEYWORD_ONLY,
                                        default=None, annotation=str | Database | None))
    return inspect.Signature(parameters, return_annotation=op.result)


def function_of(op: Operation[Any, Any]) -> Callable[..., Result]:
    """A plain function for a notebook: help() shows every parameter with its help text."""
    signature = signature_of(op)

    def call(*args: Any, **kwargs: Any) -> Result:
        bound = signature.bind(*args, **kwargs)
        fields = dict(bound.arguments)
        database = fields.pop("database", None)
        db = database if isinstance(database, Database) else Database(database)
        return op.run(db, **fields)

    lines = [inspect.getdoc(op.function) or op.name, "", "Parameters:"]
    for name, field in op.request.model_fields.items():
        lines.append(f"    {name}: {parameter_help(field)}")
    lines += ["    database: a database URL or Database (default: TCDB_DATABASE_URL)", "",
              f"Returns {op.result.__name__}; .to_frame() gives a DataFrame. "
              f"CLI: tcdb {' '.join(op.command)}."]
    call.__signature__ = signature  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = "\n".join(lines)
    call.__module__ = "tcdb.api"
    return call


# How a field's help says, for the CLI, that its flag is given once per value ("(repeat)",
# "(repeat, or give them space-separated)"): words about flags, which a parameter has none of.
_FLAG_WORDS = re.compile(r"\s*\(repeat(?:ed|able)?(?:, or [^;)]*)?\)|(?<=\()repeat(?:ed|able)?"
                         r"(?:, or [^;)]*)?; ")


def parameter_help(field: FieldInfo) -> str:
    """A field's help as the API says it: without the CLI's words about repeating a flag, and
    for a field that takes several values, that one value or a list is taken."""
    text = _FLAG_WORDS.sub("", field.description or "")
    if "list[" in str(field.annotation):
        text = text.rstrip(".") + " (one value or a list)."
    return text
