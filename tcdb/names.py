"""The one rule for every name a user gives: collections, snapshot labels, qrels sets, pools,
topic sets, run tags, systems, groups, assessors.

A name is non-empty, has no space at either end, holds no control character (C0 and C1, NUL,
newline and tab among them), no line or paragraph separator, no bidirectional override or
isolate and no character that shows as nothing (zero-width space, word joiner, soft hyphen,
byte-order mark, bidi marks: `cafe` and `caf\u200be` would print alike), is valid Unicode
(no lone surrogate: bytes that were not UTF-8), and is at most `MAX_NAME_LENGTH` characters.
It is kept in Unicode normal form C, so `café` typed with one accented letter or with `e` and
a combining accent is one name; names are normalised the same
way before they are looked up, so either spelling finds it.

Why one rule: both databases must accept and refuse the same names (PostgreSQL refuses NUL
and what is longer than the column, SQLite stores anything), a name must look like what it
is on a terminal, and two names that look the same must be the same name.
"""

from __future__ import annotations

import unicodedata

from tcdb.limits import NAME_LENGTH, VERSION_LENGTH

# The columns that hold names are VARCHAR(NAME_LENGTH) (schema: collection.name, snapshot.label,
# qrels_set.name, pool.name, topic_set.name, run.tag, system.name, system.group_name, …).
MAX_NAME_LENGTH = NAME_LENGTH

# Characters that change how text after them is shown (bidi embeddings, overrides, isolates)
# or break a line without being a control character.
_INVISIBLE = frozenset("\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Format characters (category Cf) show as nothing; of them, names keep only the joiners that
# Persian, Indic scripts and emoji sequences need between two characters (ZWNJ, ZWJ) and the
# tag characters of emoji flags.
_JOINERS = frozenset("\u200c\u200d")


def _hidden(char: str, position: int, length: int) -> bool:
    """Whether `char`, a format character at `position` (1-based) of a name of `length`
    characters, would show as nothing where it is."""
    if char in _JOINERS:
        return position in (1, length)  # a joiner joins nothing at either end
    return not 0xE0020 <= ord(char) <= 0xE007F


class BadName(ValueError):
    """A name breaks the rule; the message says why, in words (no field, no file: the caller
    names where the name came from)."""


def _said(char: str) -> str:
    """A character as the message shows it: its code point and name, never the raw character
    (a newline or a bidi override would garble the very line that reports it)."""
    name = unicodedata.name(char, "").lower()
    if not name:  # control characters have no name in unicodedata, only an alias
        name = {"\x00": "NUL", "\t": "tab", "\n": "newline", "\r": "carriage return",
                "\x1b": "escape"}.get(char, "control character")
    return f"U+{ord(char):04X} {name}"


def check_name(value: str) -> str:
    """`value` in normal form C if it is a valid name; `BadName` saying why otherwise."""
    if not isinstance(value, str):
        raise BadName(f"a name is text, not {type(value).__name__}")
    if value == "" or value.isspace():
        raise BadName("a name cannot be empty" if value == "" else
                      "a name cannot be only spaces")
    for position, char in enumerate(value, start=1):
        category = unicodedata.category(char)
        if category == "Cs":
            raise BadName(f"not valid Unicode: a lone surrogate U+{ord(char):04X} at "
                          f"character {position} (bytes that are not UTF-8?)")
        if category == "Cc" or char in _INVISIBLE or (
                category == "Cf" and _hidden(char, position, len(value))):
            raise BadName(f"a name cannot contain {_said(char)} (character {position})")
    name = unicodedata.normalize("NFC", value)
    if name[0].isspace() or name[-1].isspace():
        end, char = ("start", name[0]) if name[0].isspace() else ("end", name[-1])
        raise BadName(f"a name cannot {end} with a space: {_said(char)}")
    if len(name) > MAX_NAME_LENGTH:
        raise BadName(f"a name is at most {MAX_NAME_LENGTH} characters (this one has "
                      f"{len(name)})")
    return name


def made_name(name: str, field: str) -> str:
    """A name tcdb makes from one the user gave in `field` (`PREFIX-human`, `NAME-it2`), by
    the same rule; `FieldError` naming that field when it breaks it (mostly: too long)."""
    from tcdb.errors import FieldError

    try:
        return check_name(name)
    except BadName as exc:
        raise FieldError(field, f"the name it makes ({name[:40]!r}{'…' if len(name) > 40 else ''})"
                         f" breaks the rule: {exc}") from None


def check_version(value: str) -> str:
    """A version label (a run's, a results table's: `2025-05-20-23-07-55`, `2`) by the rule
    every name follows, and at most `VERSION_LENGTH` characters (both databases refuse the
    same labels)."""
    label = check_name(value)
    if len(label) > VERSION_LENGTH:
        raise BadName(f"a version label is at most {VERSION_LENGTH} characters (this one has "
                      f"{len(label)})")
    return label
