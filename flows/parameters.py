"""A flow's parameters checked against its signature before it runs: one line per bad value.

Why here and not in Prefect: a flow called with `measures=42` fails inside Prefect's own
validation with a traceback (`ParameterTypeError`), or, where a flow does not validate, deep in
the core. `tcdb flows run NAME --param k=v` checks every value against the flow function's
annotation first (pydantic's `TypeAdapter`, the same types Prefect would apply), and a bad one
is a `FieldError` of `param` naming the flow, the parameter, its value and what it accepts.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import types
import typing
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from tcdb.errors import FieldError

if TYPE_CHECKING:
    from prefect import Flow

# What a type accepts, in words, for the types flows take.
_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false",
          dt.date: "a date (YYYY-MM-DD)", dt.datetime: "a date and time (ISO 8601)"}


def check_parameters(flow_obj: Flow[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    """`values` as the flow's parameters take them (a date given as text is a date), or a
    FieldError for the first one that is unknown or of the wrong type, or a required one that
    is missing."""
    signature = inspect.signature(flow_obj.fn)
    try:
        hints = typing.get_type_hints(flow_obj.fn, include_extras=True)
    except (NameError, TypeError):  # an annotation only a type checker can resolve
        hints = {}
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if name not in signature.parameters:
            raise FieldError("param", f"flow {flow_obj.name!r} has no parameter {name!r} "
                             f"(parameters: {', '.join(signature.parameters)})")
        hint = hints.get(name, Any)
        try:
            # JSON's strict rules: 1 is not true and "yes" is not a boolean, yet a date may be
            # written as text (JSON has none)
            checked[name] = TypeAdapter(hint).validate_json(
                json.dumps(value, default=str), strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            said = (error["msg"].removeprefix("Value error, ")
                    if error["type"] == "value_error" else f"must be {accepts(hint)}")
            raise FieldError("param", f"{name}={_shown(value)}: {said} (flow "
                             f"{flow_obj.name!r})") from None
    missing = [name for name, p in signature.parameters.items()
               if p.default is inspect.Parameter.empty and name not in checked]
    if missing:
        raise FieldError("param", f"flow {flow_obj.name!r} needs "
                         + ", ".join(f"{name}=…" for name in missing))
    return checked


def accepts(hint: Any) -> str:
    """What a parameter's annotation accepts, in words (`a list of text, or nothing`)."""
    if typing.get_origin(hint) is typing.Annotated:
        return accepts(typing.get_args(hint)[0])
    if hint is Any:
        return "any value"
    if hint is type(None):
        return "nothing (null)"
    if hint in _WORDS:
        return _WORDS[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (list, tuple, set) and args:
        item = accepts(args[0])
        return f"a list of {item.removeprefix('a ') + 's' if item.startswith('a ') else item}"
    if args and origin in (typing.Union, types.UnionType):
        words = [accepts(a) for a in args if a is not type(None)]
        return " or ".join(words) + (", or null" if type(None) in args else "")
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, args))
    return getattr(hint, "__name__", str(hint))


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 60 else f"{text[:60]}… ({len(text)} characters)"
