"""Collection specs: a collection's identity rules and the snapshots it declares (YAML).

The specs shipped with tcdb live in `collections/specs/*.yaml` (package `tcdb.collections.specs`).

A spec is what a scheduled flow reads to find snapshots that are declared but not yet
ingested. Example::

    name: longeval-web
    doc_identity: url          # or doc_id
    topic_identity: text       # or query_id
    topic_match: normalised    # or exact: which query texts are one topic (with text)
    id_fallback: true          # a document without a URL keeps its id as key
    grades: [0, 2]
    schedule: {cron: "0 2 * * *"}   # or {interval: 3600} (seconds): when `tcdb serve` ingests
    snapshots:
      - {label: 2022-06, date: 2022-06-01, irds: longeval-web/2022-06}
      - {label: local-1, docs: data/docs, topics: data/topics.tsv, qrels: data/qrels.txt}
      - {label: mixed, docs: data/mixed.jsonl, topics: data/t.tsv, source_labels: data/who.tsv}
      - {label: cocktail-nq, cocktail: data/cocktail/nq}

A snapshot's documents come from exactly one of `irds`, `docs` or `cocktail` (a Cocktail
dataset folder: documents, topics and qrels with their source labels and twins). Documents
whose format has no field for who wrote them take it from `source_labels`, a side file
(`doc_id<TAB>source[<TAB>twin_of]`, see `tcdb.collections.sources.source_labels`).

Relative local paths are resolved against the spec file's folder. `schedule` says when the
scheduled ingestion runs (`tcdb serve`); without it, nightly at 02:00 UTC. The file is read by
the one YAML loader (`tcdb.collections.files.yaml_input`: bounded, no tags, no key twice) and
checked
strictly against `CollectionSpec`, `SnapshotSpec` and `SpecSchedule`, whose fields are the keys
a spec may have: an unknown key is refused naming the known ones, and a new key is a new field.
"""

from __future__ import annotations

import datetime as dt
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcdb.collections.files.yaml_input import YamlModel, read_yaml, validate
from tcdb.errors import InputError, NotFoundError
from tcdb.limits import GRADE_RANGE
from tcdb.names import BadName, check_name

if TYPE_CHECKING:
    from tcdb.collections.sources.source import SnapshotSource

SPEC_FOLDER = Path(str(resources.files("tcdb.collections.specs")))


def _local(value: Any, info: ValidationInfo) -> Any:
    """A local path as text, resolved against the spec file's folder (`context["folder"]`)."""
    if isinstance(value, Path) or value is None:
        return value
    if not isinstance(value, str):
        raise ValueError(f"must be a path (text), not {value!r}")
    path = Path(value).expanduser()
    folder = (info.context or {}).get("folder")
    return path if path.is_absolute() or folder is None else Path(folder) / path


def _date(value: Any) -> Any:
    """A date as YAML writes it (2022-06-01) or as ISO text; a time of day is not a date."""
    if isinstance(value, dt.datetime) or (isinstance(value, str | int | float)
                                          and not isinstance(value, bool)):
        try:
            return dt.date.fromisoformat(str(value))
        except ValueError:
            raise ValueError(f"bad date {str(value)!r} (YYYY-MM-DD)") from None
    return value


def _name(value: Any) -> Any:
    """A name the spec gives, by the rule every name follows (`tcdb.names`), in NFC."""
    if not isinstance(value, str):
        return value
    try:
        return check_name(value)
    except BadName as exc:
        raise ValueError(str(exc)) from None


LocalPath = Annotated[Path, BeforeValidator(_local)]
SpecDate = Annotated[dt.date, BeforeValidator(_date)]
SpecName = Annotated[str, BeforeValidator(_name)]


class SnapshotSpec(YamlModel):
    """One declared snapshot: its fields are the keys a spec's snapshot may have."""

    label: SpecName
    date: SpecDate | None = None
    irds: str | None = None
    docs: LocalPath | None = None
    topics: LocalPath | None = None
    qrels: LocalPath | None = None
    source_labels: LocalPath | None = None
    cocktail: LocalPath | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SnapshotSpec:
        if sum(bool(v) for v in (self.irds, self.docs, self.cocktail)) != 1:
            raise ValueError(f"snapshot {self.label!r} needs exactly one of `irds`, `docs` or "
                             "`cocktail`")
        if self.cocktail and (self.topics or self.qrels):
            raise ValueError(f"snapshot {self.label!r}: a Cocktail dataset folder holds its "
                             "topics and qrels: give `cocktail` alone")
        return self

    def availability(self) -> str | None:
        """None when the source can be read now, else the reason it cannot (yet)."""
        if self.irds is not None:
            from tcdb.collections.sources.ir_datasets_source import IrdsSource

            try:
                empty = IrdsSource(self.irds).empty_folder()
            except Exception as exc:  # noqa: BLE001 - any failure means "not there yet"
                return f"ir_datasets {self.irds}: {exc}"
            return None if empty is None else \
                f"ir_datasets {self.irds}: {empty} holds no documents yet"
        for role, path in (("documents", self.docs), ("topics", self.topics),
                           ("qrels", self.qrels), ("source labels", self.source_labels),
                           ("Cocktail dataset", self.cocktail)):
            if path is not None and not path.exists():
                return f"{role} not found: {path}"
        if self.docs is not None and self.docs.is_dir():
            from tcdb.collections.documents.trec import iter_document_files

            if next(iter_document_files(self.docs), None) is None:
                return f"documents folder {self.docs} holds no files yet"
        return None

    def open_source(self) -> SnapshotSource:
        from tcdb.collections.sources.snapshot import open_source

        return open_source(self.irds, self.docs, self.topics, self.qrels,
                           labels=self.source_labels, cocktail=self.cocktail)

    def describe(self) -> str:
        if self.irds:
            return f"irds:{self.irds}"
        return str(self.docs if self.cocktail is None else self.cocktail)


MAX_INTERVAL = 366 * 24 * 3600  # a year: a longer interval is a typo, not a schedule
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (what the field is, lowest, highest, names for 1.. or 0..): the five fields of a cron line
CRON_FIELDS = (("minute", 0, 59, ()), ("hour", 0, 23, ()), ("day of the month", 1, 31, ()),
               ("month", 1, 12, _MONTHS), ("weekday", 0, 7, _DAYS))


def _cron_item(item: str, low: int, high: int, names: tuple[str, ...]) -> bool:
    """One comma-separated item of a cron field: `*`, `a`, `a-b`, each maybe with `/step`."""
    span, _, step = item.partition("/")
    if step and not (step.isdigit() and int(step) >= 1):
        return False
    if span == "*":
        return True
    first = low if names and names is not _DAYS else 0

    def value(text: str) -> int | None:
        if text.lower() in names:
            return names.index(text.lower()) + first
        return int(text) if text.isdigit() and low <= int(text) <= high else None

    ends = [value(end) for end in span.split("-")]
    return len(ends) in (1, 2) and None not in ends and ends[0] <= ends[-1]  # type: ignore[operator]


class SpecSchedule(YamlModel):
    """When the scheduled ingestion of a spec runs: a cron line (UTC) or every N seconds."""

    cron: str | None = None
    interval: int | None = Field(default=None, ge=1, le=MAX_INTERVAL)  # seconds

    @field_validator("cron")
    @classmethod
    def _cron_line(cls, cron: str | None) -> str | None:
        if cron is None:
            return None
        fields = cron.split()
        if len(fields) != 5:
            raise ValueError(f"{cron!r} is not a cron line of five fields (MIN HOUR DAY MONTH "
                             "WEEKDAY, UTC)")
        for field, (name, low, high, names) in zip(fields, CRON_FIELDS, strict=True):
            if not all(_cron_item(item, low, high, names) for item in field.split(",")):
                raise ValueError(f"{cron!r}: {field!r} is not a {name} ({low}-{high}, `*`, "
                                 "ranges a-b, steps /n, lists a,b)")
        return " ".join(fields)

    @model_validator(mode="after")
    def _one_timing(self) -> SpecSchedule:
        if (self.cron is None) == (self.interval is None):
            raise ValueError("give exactly one of `cron` (a cron line) or `interval` (seconds)")
        return self

    def describe(self) -> str:
        return self.cron if self.cron is not None else f"every {self.interval} s"


NIGHTLY = SpecSchedule(cron="0 2 * * *")


class CollectionSpec(YamlModel):
    """A collection spec: its fields are the keys a spec file may have (one place: a new key
    is a new field), checked strictly (`tcdb.collections.files.yaml_input`)."""

    name: SpecName
    doc_identity: Literal["doc_id", "url"] = "doc_id"
    topic_identity: Literal["query_id", "text"] = "query_id"
    topic_match: Literal["normalised", "exact"] = "normalised"
    id_fallback: bool = False
    grades: Annotated[list[int], Field(min_length=2, max_length=2)] | None = None
    description: str | None = None
    snapshots: list[SnapshotSpec] = Field(default_factory=list)
    schedule: SpecSchedule = NIGHTLY
    _path: Path = PrivateAttr(default_factory=Path)

    @field_validator("grades")
    @classmethod
    def _scale(cls, grades: list[int] | None) -> list[int] | None:
        """[lowest, highest], each a SMALLINT as the judgment table stores it."""
        if grades is not None:
            low, high = GRADE_RANGE
            if not all(low <= g <= high for g in grades):
                raise ValueError(f"must be within [{low}, {high}], not {grades}")
            if grades[0] > grades[1]:
                raise ValueError(f"must be [lowest, highest], not {grades}")
        return grades

    @property
    def path(self) -> Path:
        """The spec file it was read from (not a key of the file)."""
        return self._path

    @property
    def grade_min(self) -> int | None:
        return None if self.grades is None else self.grades[0]

    @property
    def grade_max(self) -> int | None:
        return None if self.grades is None else self.grades[1]

    def snapshot(self, label: str) -> SnapshotSpec:
        for snap in self.snapshots:
            if snap.label == label:
                return snap
        raise NotFoundError(f"{self.path}: no snapshot {label!r} declared")


def load_spec(path: Path | str) -> CollectionSpec:
    """Read and validate a spec; errors name the file, the line and what is wrong."""
    path = Path(path)
    if not path.exists():
        shipped = SPEC_FOLDER / path.name
        if not path.is_absolute() and shipped.exists():
            path = shipped
        else:
            raise NotFoundError(f"collection spec not found: {path}")
    document = read_yaml(path)
    if not isinstance(document.data, dict):
        raise InputError(path, document.line(()), "a collection spec is a mapping with at "
                         "least `name`")
    spec = validate(document, CollectionSpec, context={"folder": path.parent})
    seen: dict[str, int] = {}
    for index, snap in enumerate(spec.snapshots):
        if seen.setdefault(snap.label, index) != index:
            raise document.fail(("snapshots", index, "label"),
                                f"snapshot label {snap.label!r} is declared twice")
    spec._path = path
    return spec


def list_specs() -> list[Path]:
    """The specs shipped with tcdb."""
    return sorted(SPEC_FOLDER.glob("*.yaml"))
