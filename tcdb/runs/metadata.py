"""What a campaign knows about its runs: system, group, run type, pool contribution, …

`RunMetadata` holds what one run was told to be; a field left `None` was not given and keeps
what is stored (or the default, for a new run). `read_run_metadata` reads the organiser's table
of a whole round (CSV, TSV or JSON), validated like every input: a bad line is an error naming
the file, the line and the reason, and nothing is imported.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from tcdb.collections.sources.records import delimiter_of
from tcdb.errors import FieldError, InputError
from tcdb.names import BadName, check_name, check_version
from tcdb.vocabulary import RunCategory, RunType

# The table's columns, with the spellings organisers' files use for them.
COLUMNS: dict[str, str] = {
    "tag": "tag", "run": "tag", "runid": "tag", "run_tag": "tag",
    "system": "system",
    "group": "group", "team": "group",
    "runtype": "run_type", "run_type": "run_type", "type": "run_type",
    "contributed": "contributed", "judged": "contributed",
    "category": "category",
    "submitted": "submitted", "date": "submitted",
    "description": "description",
    "first_stage": "first_stage", "firststage": "first_stage",
    "version": "version", "run_version": "version",
}
TRUE = {"yes", "y", "true", "t", "1"}
FALSE = {"no", "n", "false", "f", "0"}
# The columns that are names (of a run, a system, a group), checked as every name is.
NAMED = frozenset({"tag", "system", "group", "first_stage"})


@dataclass(frozen=True)
class RunMetadata:
    """A run's metadata as given; `None` means "not given"."""

    system: str | None = None
    group: str | None = None
    run_type: RunType | None = None
    contributed: bool | None = None
    category: RunCategory | None = None
    submitted: dt.date | None = None
    description: str | None = None
    first_stage: str | None = None
    version: str | None = None  # the run file's version label (import only: not a column)

    def given(self) -> dict[str, Any]:
        """The fields that were given."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}

    def over(self, defaults: RunMetadata) -> RunMetadata:
        """These fields where given, `defaults`' elsewhere."""
        return replace(defaults, **self.given())


def run_metadata(
    *,
    system: str | None = None,
    group: str | None = None,
    run_type: RunType | str | None = None,
    contributed: bool | None = None,
    category: RunCategory | str | None = None,
    submitted: dt.date | str | None = None,
    description: str | None = None,
    first_stage: str | None = None,
) -> RunMetadata:
    """Metadata from a request's fields (or Python), each checked; errors name the field."""
    values = {"run_type": run_type, "category": category, "submitted": submitted}
    parsed = {key: _parse(key, value, lambda reason, k=key: FieldError(k, reason))
              for key, value in values.items() if value is not None}
    return RunMetadata(system=system, group=group, contributed=contributed,
                       description=description, first_stage=first_stage, **parsed)


def read_run_metadata(path: Path | str) -> dict[str, RunMetadata]:
    """tag → metadata from a CSV/TSV (header row) or JSON (a list of objects, or an object
    keyed by tag) file. Unknown columns, a row without a tag, a tag given twice and bad values
    are errors naming the line."""
    file = Path(path)
    if not file.exists():
        raise InputError(file, None, "run metadata file not found")
    from tcdb.collections.files.opening import read_input

    try:
        text = read_input(file)[1].decode("utf-8")  # BOM dropped
    except UnicodeDecodeError as exc:
        raise InputError(file, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    rows = _json_rows(file, text) if file.suffix.lower() == ".json" else _table_rows(file, text)
    table: dict[str, RunMetadata] = {}
    lines: dict[str, int] = {}
    for line, row in rows:
        def error(reason: str, line: int = line) -> InputError:
            return InputError(file, line, reason)

        tag = str(row.pop("tag", "") or "").strip()
        if not tag:
            raise error("no run tag (column 'tag')")
        tag = _parse("tag", tag, error)
        if tag in table:
            raise error(f"run {tag!r} is described twice (first on line {lines[tag]})")
        values = {key: _parse(key, value, error) for key, value in row.items()
                  if value is not None and str(value).strip() != ""}
        table[tag] = RunMetadata(**values)
        lines[tag] = line
    return table


def _columns(file: Path, line: int, names: list[str]) -> list[str]:
    columns = []
    for name in names:
        key = COLUMNS.get(name.strip().lower().replace("-", "_").replace(" ", "_"))
        if key is None:
            known = ", ".join(sorted(set(COLUMNS.values())))
            raise InputError(file, line, f"unknown column {name!r} (columns: {known})")
        if key in columns:
            raise InputError(file, line, f"column {name!r} repeats {key!r}")
        columns.append(key)
    if "tag" not in columns:
        raise InputError(file, line, "no 'tag' column: which run does each row describe?")
    return columns


def _table_rows(file: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    lines = text.splitlines()
    if not lines:
        raise InputError(file, None, "empty run metadata file")
    delimiter = delimiter_of(lines[0], suffix=file.suffix)
    reader = csv.reader(lines, delimiter=delimiter)
    columns = _columns(file, 1, next(reader))
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(columns):
            raise InputError(file, line, f"{len(row)} field(s), the header has {len(columns)}")
        yield line, dict(zip(columns, row, strict=True))


def _json_rows(file: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(file, exc.lineno, f"not JSON: {exc.msg}") from None
    if isinstance(data, Mapping):
        data = [{"tag": tag, **item} if isinstance(item, Mapping) else item
                for tag, item in data.items()]
    if not isinstance(data, list):
        raise InputError(file, None, "expected a list of runs or an object keyed by run tag")
    for index, item in enumerate(data, start=1):
        # JSON has no lines worth naming once parsed: the item's position stands in for one.
        if not isinstance(item, Mapping):
            raise InputError(file, index, f"run {index} is not an object")
        names = list(item)
        columns = _columns(file, index, names)
        yield index, {key: item[name] for key, name in zip(columns, names, strict=True)}


def _parse(key: str, value: Any, error: Any) -> Any:
    """One metadata value, checked; `error(reason)` builds the exception to raise."""
    if key == "run_type":
        try:
            return RunType(str(value).strip().lower())
        except ValueError:
            raise error(f"run type {value!r} is not one of "
                        f"{', '.join(t.value for t in RunType)}") from None
    if key == "category":
        try:
            return RunCategory(str(value).strip().lower())
        except ValueError:
            raise error(f"category {value!r} is not one of "
                        f"{', '.join(c.value for c in RunCategory)}") from None
    if key == "contributed":
        if isinstance(value, bool):
            return value
        word = str(value).strip().lower()
        if word in TRUE or word in FALSE:
            return word in TRUE
        raise error(f"contributed {value!r} is not yes/no (or true/false, 1/0)")
    if key == "submitted":
        if isinstance(value, dt.date):
            return value
        try:
            return dt.date.fromisoformat(str(value).strip())
        except ValueError:
            raise error(f"submitted {value!r} is not a date (YYYY-MM-DD)") from None
    if not isinstance(value, str | int | float):
        raise error(f"{key} {value!r} is not text")
    if key == "version":
        try:
            return check_version(str(value).strip())
        except BadName as exc:
            raise error(f"version: {exc}") from None
    if key in NAMED:  # a name, by the rule every name follows (`tcdb.names`)
        try:
            return check_name(str(value).strip())
        except BadName as exc:
            raise error(f"{key}: {exc}") from None
    return str(value).strip()
