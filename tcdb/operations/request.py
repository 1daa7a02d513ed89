"""Typed requests: an operation's inputs as fields with defaults, help text and validation.

Field names are the operation's vocabulary: the API's parameters are the fields, and the CLI's
flags follow from them by one rule (`tcdb.cli.derive`). A bad value raises `FieldError`
naming the field, never a flag: the CLI says `--measure`, the API `measures`. A validator may
raise a `FieldError` itself (it passes through pydantic unchanged) or a `ValueError`, which
names the field it validates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Self

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from tcdb.errors import FieldError
from tcdb.names import check_name, check_version


def as_labels(value: Any) -> Any:
    """One label (a string) as a list of one; any other iterable of labels as a list.

    Why: a string is itself an iterable, of characters; `list("2022-06")` would name seven
    snapshots; and `2` is not a snapshot named "2": a label that is not text is refused.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, bytes | dict):
        value = list(value)
        wrong = [v for v in value if not isinstance(v, str)]
        if wrong:
            raise ValueError(f"labels are text, not {type(wrong[0]).__name__} {wrong[0]!r}")
    return value


# A field that takes several labels (snapshots, measures, runs, systems): one or a list.
Labels = Annotated[list[str], BeforeValidator(as_labels)]

# A field that is a name a user gives or looks up (a collection, snapshot, qrels set, pool,
# topic set, run tag, system, group, assessor): `tcdb.names.check_name`'s rule, kept in NFC,
# so the error names the field and an NFD spelling finds the NFC row.
Name = Annotated[str, AfterValidator(check_name)]
# A version label (a resubmitted run's): a name of at most `VERSION_LENGTH` characters.
Version = Annotated[str, AfterValidator(check_version)]
# Several names: one or a list, each by the rule.
Names = Annotated[list[Name], BeforeValidator(as_labels)]


def _two_or_more(labels: list[str]) -> list[str]:
    if len(labels) < 2:
        raise ValueError("name at least two snapshots")
    repeated = sorted({s for s in labels if labels.count(s) > 1})
    if repeated:
        raise ValueError(f"snapshot(s) named twice: {', '.join(repeated)}")
    return labels


# Snapshots a report compares (persistence, rankings, results over time): two or more, each
# once, in the order given (the first is the reference).
TwoOrMoreSnapshots = Annotated[Names, AfterValidator(_two_or_more)]


def argument(default: Any = ..., *, help: str, metavar: str | None = None) -> Any:
    """A field the CLI takes as a positional argument (collection, snapshot, a file)."""
    return Field(default, description=help,
                 json_schema_extra={"cli": "argument", "metavar": metavar})


def option(default: Any = ..., *, help: str, flag: str | None = None, short: str | None = None,
           metavar: str | None = None, **kwargs: Any) -> Any:
    """A field the CLI takes as an option: `--name` by the rule, or `flag` where the CLI has
    long spelt it otherwise (`--vs`), with an optional one-letter `short` (`-m`)."""
    return Field(default, description=help,
                 json_schema_extra={"cli": "option", "flag": flag, "short": short,
                                    "metavar": metavar}, **kwargs)


class Request(BaseModel):
    """Base of every operation's request: immutable, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True,
                              use_enum_values=False)

    @classmethod
    def of(cls, **values: Any) -> Self:
        """Validate `values` into a request; a bad value raises `FieldError` naming its field.

        Fields given as None take their default, so a front end may pass every field.
        """
        given = {k: v for k, v in values.items()
                 if not (v is None and k in cls.model_fields
                         and cls.model_fields[k].default is not None
                         and not cls.model_fields[k].is_required())}
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            raise FieldError(unknown[0], f"not a field of {cls.__name__} (fields: "
                             f"{', '.join(cls.model_fields)})")
        try:
            return cls(**given)
        except ValidationError as exc:
            raise field_error(exc) from None


def field_error(exc: ValidationError) -> FieldError:
    """pydantic's first complaint as one `FieldError`: the field, and why in plain words.

    A field of several kinds (`Names | dict[Name, Name]`) is named alone, without pydantic's
    name of the kind; its complaint is the one about the value (a name that breaks the rule)
    rather than that the value is not of some other kind.
    """
    errors = exc.errors()
    loc = errors[0]["loc"]
    same = [e for e in errors if e["loc"][:1] == loc[:1]]
    first = next((e for e in same if e["type"] == "value_error"), errors[0])
    field = str(loc[0]) if loc and isinstance(loc[0], str) else "request"
    reason = first["msg"]
    if reason.startswith("Value error, "):
        reason = reason.removeprefix("Value error, ")
    context = first.get("ctx") or {}
    if first["type"] == "missing":
        reason = "required"
    elif first["type"].startswith(("date_", "datetime_")):
        reason = f"not a date: {first['input']!r} (YYYY-MM-DD)"
    elif first["type"] == "greater_than_equal" and context.get("ge") == 0:
        reason = f"cannot be negative (got {first['input']!r})"
    elif first["type"] in ("greater_than_equal", "greater_than", "less_than_equal",
                           "less_than"):
        bound = {"greater_than_equal": "at least", "greater_than": "more than",
                 "less_than_equal": "at most", "less_than": "less than"}[first["type"]]
        value = next(iter(context.values()), "?")
        reason = f"must be {bound} {value} (got {first['input']!r})"
    elif "input" in first and first["type"] not in ("value_error", "assertion_error"):
        reason = f"{reason} (got {first['input']!r})"
    return FieldError(field, reason)
