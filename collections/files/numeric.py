"""The numbers of the field's files, read by the grammar the field's tools read them with.

trec_eval reads ranks, grades and iterations with C's `atoi` and scores with `atof`: decimal
digits with an optional sign, and C's decimal floating-point syntax. Python's `int()` and
`float()` read more — `1_0`, `２`, ` 7 `, `nan`, `infinity` — and a file tcdb reads must mean
what it means to trec_eval, or be refused. (`atoi` also stops at the first non-digit, so it
reads `2_5` as 2: a file that depends on that is refused rather than guessed.) So every reader
of a numeric field parses it here, one function per kind:

* `parse_integer`: `[+-]?[0-9]+` (ASCII digits), then the field's range (`tcdb.limits`);
* `parse_score`: `[+-]?(digits[.digits] | .digits)([eE][+-]?digits)?`, finite. C's `atof` also
  reads `nan`, `inf`, `infinity` and hexadecimal floats: refused. A NaN score has no place in a
  ranking (trec_eval's sort on it is undefined), SQLite stores NaN as NULL while PostgreSQL
  keeps it (the databases would disagree), and an infinite score — written, or a decimal beyond
  the double range such as 1e400 — is a broken run, not a very good document.
"""

from __future__ import annotations

import math
import re

from tcdb.limits import Refused, check_range, shown

INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = {"nan", "inf", "infinity"}
_INTEGER_BYTES = re.compile(rb"[+-]?[0-9]+")
_DECIMAL_BYTES = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _text(raw: str | bytes) -> str:
    return raw if isinstance(raw, str) else raw.decode("utf-8", "replace")


def parse_integer(raw: str | bytes, what: str, bounds: tuple[int, int]) -> int:
    """A decimal integer (optional sign, ASCII digits) within `bounds`; else `Refused`."""
    pattern = INTEGER if isinstance(raw, str) else _INTEGER_BYTES
    if pattern.fullmatch(raw) is None:  # type: ignore[arg-type]
        raise Refused(f"{what} {shown(_text(raw))} is not an integer")
    return check_range(int(raw), what, bounds)


def parse_score(raw: str | bytes, what: str = "score") -> float:
    """A finite decimal floating-point number in C's syntax; else `Refused`."""
    pattern = DECIMAL if isinstance(raw, str) else _DECIMAL_BYTES
    if pattern.fullmatch(raw) is None:  # type: ignore[arg-type]
        if _text(raw).lstrip("+-").lower() in _NOT_FINITE:
            raise Refused(f"{what} {shown(_text(raw))} is not a finite number")
        raise Refused(f"{what} {shown(_text(raw))} is not a number")
    value = float(raw)
    if not math.isfinite(value):
        raise Refused(f"{what} {shown(_text(raw))} is not a finite number (beyond the double "
                      "range)")
    return value


def parse_number_value(raw: object, what: str) -> float:
    """A number a structured format (YAML, JSON) already typed, or text in the decimal
    grammar; finite. Booleans are not numbers."""
    if isinstance(raw, bool):
        raise Refused(f"{what} {raw!r} is not a number")
    if isinstance(raw, int | float):
        if not math.isfinite(raw):
            raise Refused(f"{what} {raw!r} is not a finite number")
        return float(raw)
    return parse_score(str(raw).strip(), what)
