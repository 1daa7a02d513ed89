"""Reading files of results reported in the literature (CSV, TSV or YAML), validated row by row.

One row is one figure of one publication: publication, year, venue, model, category
(probabilistic / neural / llm), role (baseline / best), metric, value, cross_validated, notes.
Every problem is an `InputError` naming the file, the line (a CSV record's first line; a YAML
item's first line, with its item number) and the reason — before anything is written.

Values are held to `tcdb.limits`: model and venue at most 200 characters, the metric 100, none
with control characters; publication and notes are free text (control characters that are
not whitespace dropped). Numbers follow the file's grammar (`tcdb.collections.files.numeric`): in a
CSV a year is a decimal integer and a value a finite decimal; YAML types its own numbers.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcdb.collections.files.numeric import parse_integer, parse_number_value
from tcdb.collections.files.yaml_input import YamlModel, field_names, load_yaml, validate
from tcdb.collections.sources.records import delimiter_of
from tcdb.errors import InputError, NotFoundError
from tcdb.limits import (
    MEASURE_LENGTH,
    NAME_LENGTH,
    YEAR_RANGE,
    Refused,
    check_length,
    clean_text,
)
from tcdb.names import BadName, check_name
from tcdb.vocabulary import ModelCategory, ResultRole


class ReportedItem(YamlModel):
    """One result as a YAML file gives it, typed: its fields are the file's keys and a CSV's
    columns (`FIELDS`), those without a default the required ones (`REQUIRED`)."""

    publication: str
    year: int
    venue: str | None = None
    model: str
    category: str
    role: str
    metric: str
    value: float
    cross_validated: bool = False
    notes: str | None = None


FIELDS = field_names(ReportedItem)
REQUIRED = tuple(name for name, field in ReportedItem.model_fields.items()
                 if field.is_required())
EARLIEST_YEAR = 1950  # before any IR test collection: a typo
TRUE, FALSE = ("true", "yes", "1", "y"), ("false", "no", "0", "n", "")
# Measures whose values are counts, not fractions in [0, 1].
COUNT_PREFIX = "Num"


@dataclass(frozen=True)
class ReportedRow:
    """One validated figure and where it was read (`line`, and `item` for YAML)."""

    line: int
    publication: str
    year: int
    venue: str | None
    model: str
    category: ModelCategory
    role: ResultRole
    metric: str
    value: float
    cross_validated: bool
    notes: str | None
    item: int | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What a publication reports once: (publication, model, role, metric)."""
        return (self.publication, self.model, self.role.value, self.metric)

    def where(self) -> str:
        return f"line {self.line}" if self.item is None else f"item {self.item}"


def normalise_metric(name: str) -> str:
    """The ir_measures spelling of a metric when it names one, in any case (`ndcg@10`, `MAP`,
    `ndcg_cut_10` → nDCG@10, AP, nDCG@10); otherwise the name as written (`Success@5 (dev)`).

    Why `canonical_measure`: one rule for a measure's name, the same as `--measure` reads it.
    """
    from tcdb.errors import FieldError
    from tcdb.scoring.measures import canonical_measure

    text = name.strip()
    try:
        return canonical_measure(text, "metric")
    except FieldError:
        return text


def read_reported(path: Path | str) -> list[ReportedRow]:
    """Every row of a literature file, validated; an InputError at the first bad one (a row
    reported twice included: the first place is named too)."""
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"literature file not found: {path}")
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv", ".yaml", ".yml"):
        raise InputError(path, None, "a literature file is .csv, .tsv, .yaml or .yml")
    from tcdb.collections.files.opening import read_input

    _, raw = read_input(path)  # a directory, a pipe, gzip/bz2/xz: files.open_input's rule
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(path, line, "not UTF-8 text (save the file as UTF-8)") from None
    records = _yaml_records(path, text) if suffix in (".yaml", ".yml") else \
        _csv_records(path, text, delimiter_of(
            next((line for line in text.splitlines() if line.strip()), ""), suffix=suffix))
    rows: list[ReportedRow] = []
    seen: dict[tuple[str, str, str, str], ReportedRow] = {}
    for line, item, record in records:
        row = _row(path, line, item, record)
        if row.key in seen:
            first = seen[row.key]
            raise InputError(path, line, f"{_item(item)}duplicated row: {row.publication!r} "
                             f"reports the {row.role.value} {row.metric} of {row.model!r} "
                             f"already at {first.where()}")
        seen[row.key] = row
        rows.append(row)
    if not rows:
        raise InputError(path, None, "no results in the file")
    return rows


def _item(item: int | None) -> str:
    return "" if item is None else f"item {item}: "


def _column(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _csv_records(path: Path, text: str, delimiter: str
                 ) -> list[tuple[int, int | None, dict[str, Any]]]:
    """(first line, None, {field: text}) per non-blank record; the header names the fields."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    records: list[tuple[int, int | None, dict[str, Any]]] = []
    header: list[str] | None = None
    end = 0  # the last physical line read so far
    try:
        for fields in reader:
            start, end = end + 1, reader.line_num
            if not any(f.strip() for f in fields):
                continue
            if header is None:
                header = [_column(f) for f in fields]
                _check_header(path, start, header, delimiter)
                continue
            if len(fields) != len(header):
                raise InputError(path, start, f"{len(fields)} fields, the header has "
                                 f"{len(header)} (a field with a {delimiter!r} inside needs "
                                 "double quotes)")
            records.append((start, None, dict(zip(header, fields, strict=True))))
    except csv.Error as exc:
        raise InputError(path, reader.line_num, f"not valid CSV: {exc}") from None
    if header is None:
        raise InputError(path, None, "the file is empty: the first line names the columns "
                         f"({', '.join(FIELDS)})")
    return records


def _check_header(path: Path, line: int, header: list[str], delimiter: str) -> None:
    for name in header:
        if name not in FIELDS:
            hint = " (columns are separated by commas)" if ";" in name and delimiter == "," \
                else ""
            raise InputError(path, line, f"unknown column {name!r}{hint}: the columns are "
                             f"{', '.join(FIELDS)}")
    missing = [f for f in REQUIRED if f not in header]
    if missing:
        raise InputError(path, line, f"missing column(s) {', '.join(missing)}")
    twice = sorted({n for n in header if header.count(n) > 1})
    if twice:
        raise InputError(path, line, f"column(s) {', '.join(twice)} named twice")


def _yaml_records(path: Path, text: str) -> list[tuple[int, int | None, dict[str, Any]]]:
    """(first line, item number, mapping) per item of a list — the whole document, or its
    `results:` — with the line each item starts on; each item typed (`ReportedItem`)."""
    document = load_yaml(path, text)
    data = document.data
    where: tuple[str | int, ...] = ()
    if isinstance(data, dict):
        if set(data) != {"results"}:
            raise InputError(path, 1, "a literature YAML file is a list of results, or a "
                             "mapping with one key, `results:`, holding that list")
        data, where = data["results"], ("results",)
    if data is None:
        return []
    if not isinstance(data, list):
        raise InputError(path, 1, "a literature YAML file is a list of results")
    records: list[tuple[int, int | None, dict[str, Any]]] = []
    for index, item in enumerate(data):
        place = (*where, index)
        line = document.line(place) or 1
        if not isinstance(item, dict):
            raise InputError(path, line, f"item {index + 1}: a result is a mapping of "
                             f"{', '.join(FIELDS)}")
        fields: dict[str, Any] = {}
        for key, value in item.items():
            name = _column(key)
            if name in fields:
                raise document.fail((*place, key), f"item {index + 1}: {key!r} is "
                                    f"{name!r} again")
            fields[name] = value
        typed = validate(document, ReportedItem, fields, place)
        records.append((line, index + 1, typed.model_dump(exclude_unset=True)))
    return records


def _row(path: Path, line: int, item: int | None, record: dict[str, Any]) -> ReportedRow:
    """One record as a validated row."""
    def fail(reason: str) -> InputError:
        return InputError(path, line, _item(item) + reason)

    def text(name: str, limit: int | None = None) -> str | None:
        value = record.get(name)
        if value is None:
            found = ""
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            found = str(value).strip()
        else:
            raise fail(f"{name} {value!r} is not text")
        if not found:
            if name in REQUIRED:
                raise fail(f"missing {name}")
            return None
        if limit is None:
            return clean_text(found)
        try:
            return check_length(found, name, limit)
        except Refused as exc:
            raise fail(str(exc)) from None

    given = record.get("model")
    if isinstance(given, str) and given.strip():
        try:  # a model is a name, looked up and shown as one (`tcdb.names`): in NFC
            record = {**record, "model": check_name(given.strip())}
        except BadName as exc:
            raise fail(f"model: {exc}") from None
    publication, model = str(text("publication")), str(text("model", NAME_LENGTH))
    raw_year = record.get("year")
    year = _year(raw_year if isinstance(raw_year, int) and not isinstance(raw_year, bool)
                 else str(text("year")), fail)
    category = _word(ModelCategory, "category", str(text("category")), fail)
    role = _word(ResultRole, "role", str(text("role")), fail)
    metric = normalise_metric(str(text("metric", MEASURE_LENGTH)))
    raw_value = record.get("value")
    if isinstance(raw_value, bool):
        raise fail(f"value {raw_value!r} is not a number")
    value = _value(raw_value if isinstance(raw_value, int | float) else str(text("value")),
                   metric, fail)
    return ReportedRow(line, publication, year, text("venue", NAME_LENGTH), model, category, role,
                       metric, value, _flag(record.get("cross_validated"), fail), text("notes"),
                       item)


def _year(raw: str | int, fail: Any) -> int:
    try:
        year = raw if isinstance(raw, int) else parse_integer(raw, "year", YEAR_RANGE)
    except Refused:
        raise fail(f"year {raw!r} is not a whole number") from None
    this_year = dt.datetime.now(dt.UTC).year
    if year > this_year:
        raise fail(f"year {year} is in the future (it is {this_year})")
    if year < EARLIEST_YEAR:
        raise fail(f"year {year} is implausible (before {EARLIEST_YEAR})")
    return year


def _word(kind: Any, name: str, raw: str, fail: Any) -> Any:
    try:
        return kind(raw.lower())
    except ValueError:
        choices = " / ".join(member.value for member in kind)
        raise fail(f"unknown {name} {raw!r}: one of {choices}") from None


def _value(raw: str | float, metric: str, fail: Any) -> float:
    try:
        value = parse_number_value(raw, "value")
    except Refused as exc:
        raise fail(str(exc)) from None
    from tcdb.collections.scores.trec_eval import canonical_measure

    measured = canonical_measure(metric) is not None and not metric.startswith(COUNT_PREFIX)
    if measured and not 0.0 <= value <= 1.0:
        hint = f" (a percentage? write {value / 100:g})" if 1.0 < value <= 100.0 else ""
        raise fail(f"value {raw} of {metric} is outside [0, 1]{hint}")
    return value


def _flag(raw: Any, fail: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = "" if raw is None else str(raw).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise fail(f"cross_validated {raw!r} is not one of true / false / yes / no / 1 / 0")
