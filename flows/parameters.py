"""A flow's parameters as users give them, checked before it runs: one line per bad value.

A flow over an operation takes the operation's typed request (`build_pool(request:
PoolBuildRequest, …)`), so its parameters are the request's fields, defined once, in the core.
What a user gives `tcdb flows run NAME --param k=v` follows from the flow's signature:

* each field of the parameter named `request` by the field's own name (`depth=5`);
* each field of another request parameter `P` as `P.FIELD` (`export.format=trec`), or `P` as
  a JSON object; its required fields that the request has too (a pool's `name`) are the
  request's unless given;
* every other parameter by its name (`dask=local`).

Why here and not in Prefect: a flow called with `measures=42` fails inside Prefect's own
validation with a traceback (`ParameterTypeError`). Every value is checked first against the
flow's annotation or the request's field (pydantic, the same types Prefect applies, with JSON's
strict rules), and a bad one is a `FieldError` of `param` naming the flow, the parameter, its
value and what it accepts.
"""

from __future__ import annotations

import datetime as dt
import enum
import inspect
import json
import types
import typing
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from tcdb.errors import FieldError
from tcdb.operations import Request

if TYPE_CHECKING:
    from prefect import Flow

REQUEST = "request"  # the flow parameter whose fields are given by their own names

# What a type accepts, in words, for the types flows take.
_WORDS = {str: "text", int: "a whole number", float: "a number", bool: "true or false",
          dt.date: "a date (YYYY-MM-DD)", dt.datetime: "a date and time (ISO 8601)"}


@dataclass(frozen=True)
class FlowParameter:
    """One parameter of a flow function: its name, annotation (with `Annotated` extras), the
    request it takes (None for any other value), and whether it has a default."""

    name: str
    hint: Any
    request: type[Request] | None
    required: bool

    def prefix(self) -> str:
        """How its fields are named: `` for the request, `export.` for another request."""
        return "" if self.name == REQUEST else f"{self.name}."


def flow_parameters(flow_obj: Flow[..., Any]) -> list[FlowParameter]:
    """The flow function's parameters, in order, with the request each takes (if any)."""
    signature = inspect.signature(flow_obj.fn)
    try:
        hints = typing.get_type_hints(flow_obj.fn, include_extras=True)
    except (NameError, TypeError):  # an annotation only a type checker can resolve
        hints = {}
    return [FlowParameter(name, hints.get(name, Any), request_type(hints.get(name, Any)),
                          parameter.default is inspect.Parameter.empty)
            for name, parameter in signature.parameters.items()]


def request_type(hint: Any) -> type[Request] | None:
    """The request class an annotation takes (`PoolExportRequest | None`, or one `Annotated`
    with a validator), else None."""
    if typing.get_origin(hint) is typing.Annotated:
        return request_type(typing.get_args(hint)[0])
    if isinstance(hint, type) and issubclass(hint, Request):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        found = [request_type(a) for a in typing.get_args(hint) if a is not type(None)]
        return found[0] if len(found) == 1 else None
    return None


def parameter_hints(flow_obj: Flow[..., Any]) -> dict[str, Any]:
    """What a user may give the flow, by the name they give it, and the type each takes:
    the request's fields, `P.FIELD` for another request's, and the other parameters."""
    names: dict[str, Any] = {}
    for parameter in flow_parameters(flow_obj):
        if parameter.request is None:
            names[parameter.name] = parameter.hint
            continue
        if parameter.name != REQUEST:
            names[parameter.name] = dict[str, Any]  # the whole request as a JSON object
        names |= {parameter.prefix() + field: info.annotation
                  for field, info in parameter.request.model_fields.items()}
    return names


def unknown_parameter(flow_obj: Flow[..., Any], name: str) -> FieldError:
    """The one line for a parameter the flow does not have, listing those it has."""
    return FieldError("param", f"flow {flow_obj.name!r} has no parameter {name!r} "
                      f"(parameters: {', '.join(parameter_hints(flow_obj))})")


def check_parameters(flow_obj: Flow[..., Any], values: dict[str, Any]) -> dict[str, Any]:
    """`values` (by the names users give, see the module) as the flow function's arguments: a
    request built from its fields, a date given as text a date; or a FieldError for the first
    value that is unknown or of the wrong type, a required one that is missing, or fields
    that do not go together."""
    parameters = flow_parameters(flow_obj)
    plain, fields = _grouped(flow_obj, parameters, values)
    hints = {p.name: p.hint for p in parameters}
    checked = {name: _checked(flow_obj, name, hints[name], value)
               for name, value in plain.items()}
    missing = [p.name for p in parameters
               if p.required and p.request is None and p.name not in checked]
    for parameter in parameters:
        given = fields.get(parameter.name)
        if given is None or (not given and not parameter.required):
            continue
        built = _request(flow_obj, parameter, {**_shared(parameter, fields), **given})
        if isinstance(built, list):
            missing += built
        else:
            checked[parameter.name] = built
    if missing:
        raise FieldError("param", f"flow {flow_obj.name!r} needs "
                         + ", ".join(f"{name}=…" for name in missing))
    return checked


def _grouped(flow_obj: Flow[..., Any], parameters: list[FlowParameter], values: dict[str, Any]
             ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The values split into plain parameters and, per request parameter, its fields; an
    unknown name is refused."""
    by_name = {p.name: p for p in parameters}
    plain: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {p.name: {} for p in parameters if p.request}
    for name, value in values.items():
        head, dot, field = name.partition(".")
        if REQUEST in fields and name in _fields(by_name[REQUEST]):
            fields[REQUEST][name] = value
        elif dot and head in fields and head != REQUEST and field in _fields(by_name[head]):
            fields[head][field] = value
        elif name in fields and name != REQUEST and isinstance(value, dict):
            fields[name] = {**value, **fields[name]}
        elif name in by_name and name != REQUEST:
            plain[name] = value
        else:
            raise unknown_parameter(flow_obj, name)
    return plain, fields


def _shared(parameter: FlowParameter, fields: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The request's values of another request parameter's required fields (an export's pool
    `name` is the pool built): a field the request has too is the request's unless given."""
    if parameter.name == REQUEST:
        return {}
    own = _fields(parameter)
    return {f: v for f, v in fields.get(REQUEST, {}).items()
            if f in own and own[f].is_required()}


def _fields(parameter: FlowParameter) -> dict[str, Any]:
    return dict(parameter.request.model_fields) if parameter.request else {}


def _checked(flow_obj: Flow[..., Any], name: str, hint: Any, value: Any) -> Any:
    """One value as its annotation takes it, with JSON's strict rules: 1 is not true and "yes"
    is not a boolean, yet a date may be written as text (JSON has none)."""
    try:
        return TypeAdapter(hint).validate_json(json.dumps(value, default=str), strict=True)
    except ValidationError as exc:
        raise _bad_value(flow_obj, name, value, hint, exc.errors()[0]) from None


def _request(flow_obj: Flow[..., Any], parameter: FlowParameter, given: dict[str, Any]
             ) -> Any:
    """The request built from its fields by the parameter's annotation (its validators too),
    or the names of its required fields that are missing."""
    assert parameter.request is not None
    model = parameter.request.model_fields
    # as `Request.of`: a field given as null takes its default
    given = {k: v for k, v in given.items()
             if not (v is None and k in model and model[k].default is not None
                     and not model[k].is_required())}
    prefix = parameter.prefix()
    try:
        return TypeAdapter(parameter.hint).validate_json(
            json.dumps(given, default=str), strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        for field, value in given.items():  # the first bad value in the order given
            for error in errors:
                if error["loc"][:1] == (field,) and error["type"] != "missing":
                    raise _bad_value(flow_obj, prefix + field, value,
                                     model[field].annotation, error) from None
        missing = [prefix + str(e["loc"][0]) for e in errors
                   if e["type"] == "missing" and e["loc"]]
        if missing:
            return missing
        raise FieldError("param", f"{parameter.name}: {errors[0]['msg']} (flow "
                         f"{flow_obj.name!r})") from None
    except FieldError as exc:  # the request's own check of fields that go together
        fields = "/".join(prefix + f for f in exc.field.split("/"))
        raise FieldError("param", f"{fields}: {exc.reason} (flow {flow_obj.name!r})") from None


def _bad_value(flow_obj: Flow[..., Any], name: str, value: Any, hint: Any,
               error: ErrorDetails) -> FieldError:
    said = (error["msg"].removeprefix("Value error, ")
            if error["type"] == "value_error" else f"must be {accepts(hint)}")
    return FieldError("param", f"{name}={_shown(value)}: {said} (flow {flow_obj.name!r})")


def wants_text(hint: Any) -> bool:
    """Whether a value given as `k=v` is kept as text rather than read as JSON: text, paths
    and words (enums), or nothing (`snapshot=2022` names the snapshot "2022")."""
    if typing.get_origin(hint) is typing.Annotated:
        return wants_text(typing.get_args(hint)[0])
    if isinstance(hint, type):
        return issubclass(hint, str | PurePath | enum.Enum)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return bool(args) and all(wants_text(a) for a in args)
    return False


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
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "one of " + ", ".join(repr(member.value) for member in hint)
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
