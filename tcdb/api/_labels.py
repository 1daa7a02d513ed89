"""What every API function shares: labels given as one string or many, and errors that name
the function's parameters instead of the CLI's options."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import ParamSpec, TypeVar

from tcdb.errors import OptionError

P = ParamSpec("P")
R = TypeVar("R")
Labels = str | Iterable[str]  # one label, or any iterable of labels


def _as_labels(value: Labels, parameter: str) -> list[str]:
    """One label as a list of one, any iterable of labels as a list.

    Why: a string is itself an iterable, of characters; `list("2022-06")` would name seven
    snapshots. Anything that is not text is refused here, naming the parameter.
    """
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise OptionError(parameter, f"give a label or a list of labels, not "
                          f"{type(value).__name__} {value!r}")
    found = list(value)
    wrong = [v for v in found if not isinstance(v, str)]
    if wrong:
        raise OptionError(parameter, f"labels are text, not {type(wrong[0]).__name__} "
                          f"{wrong[0]!r}")
    return found


def _labels_or_none(value: Labels | None, parameter: str) -> list[str] | None:
    return None if value is None else _as_labels(value, parameter)


_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*|\b[A-Z][A-Z_]*[A-Z]\b")


def _python_name(flag: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """A CLI option (`--snapshots`, `--measure`, `--residual-of`, `SNAPSHOT`) as the parameter
    of an API function: no dashes, underscores for dashes, lower case; the plural when only the
    plural is a parameter (`--measure` → `measures`); `aliases` for options named otherwise
    (reusability's `--vs` is `qrels_b`)."""
    bare = flag.lstrip("-")
    if bare in aliases:
        return aliases[bare]
    name = bare.replace("-", "_").lower()
    if name not in parameters and f"{name}s" in parameters:
        return f"{name}s"
    return name


def _python_option(option: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """An OptionError's option in the API's words; combined ones (`--run/--contributed`) part
    by part."""
    return "/".join(_FLAG.sub(lambda m: _python_name(m.group(), parameters, aliases), part, count=1)
                    for part in option.split("/"))


def _python_reason(reason: str, parameters: Collection[str], aliases: Mapping[str, str]) -> str:
    """An OptionError's reason with the options it mentions in the API's words — only those
    that are parameters of the function, so other text stays as written."""
    def say(match: re.Match[str]) -> str:
        name = _python_name(match.group(), parameters, aliases)
        return name if name in parameters else match.group()

    return _FLAG.sub(say, reason)


def _speaks_python(**aliases: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an API function: the core's OptionErrors name its parameters, not CLI options.

    The core speaks to the CLI (`--snapshots: persistence compares at least two snapshots`); a
    notebook user passed `snapshots=`, and reads `snapshots: …`. The error stays an OptionError
    (an InputError) with its traceback; only the names change.
    """
    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        parameters = list(inspect.signature(fn).parameters)

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return fn(*args, **kwargs)
            except OptionError as exc:
                option = _python_option(exc.option, parameters, aliases)
                reason = _python_reason(exc.reason, parameters, aliases)
                if (option, reason) == (exc.option, exc.reason):
                    raise
                raise OptionError(option, reason).with_traceback(exc.__traceback__) from None

        return call

    return decorate


def _qrels(qrels: str | Sequence[str] | Mapping[str, str]) -> str | list[str] | dict[str, str]:
    """One name, names per snapshot, or {snapshot: name}: a string is one name, not letters."""
    if isinstance(qrels, Mapping):
        return dict(qrels)
    return qrels if isinstance(qrels, str) else _as_labels(qrels, "qrels")
