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
(`doc_id<TAB>source[<TAB>twin_of]`, see `tcdb.collections.source_labels`).

Relative local paths are resolved against the spec file's folder. `schedule` says when the
scheduled ingestion runs (`tcdb serve`); without it, nightly at 02:00 UTC.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcdb.errors import InputError, NotFoundError
from tcdb.names import BadName, check_name

if TYPE_CHECKING:
    from tcdb.collections.sources import SnapshotSource

SPEC_FOLDER = Path(str(resources.files("tcdb.collections.specs")))


@dataclass(frozen=True)
class SnapshotSpec:
    label: str
    date: dt.date | None = None
    irds: str | None = None
    docs: Path | None = None
    topics: Path | None = None
    qrels: Path | None = None
    source_labels: Path | None = None
    cocktail: Path | None = None

    def availability(self) -> str | None:
        """None when the source can be read now, else the reason it cannot (yet)."""
        if self.irds is not None:
            from tcdb.collections.ir_datasets_source import IrdsSource

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
            from tcdb.collections.trec_documents import iter_document_files

            if next(iter_document_files(self.docs), None) is None:
                return f"documents folder {self.docs} holds no files yet"
        return None

    def open_source(self) -> SnapshotSource:
        from tcdb.collections.sources import open_source

        return open_source(self.irds, self.docs, self.topics, self.qrels,
                           labels=self.source_labels, cocktail=self.cocktail)

    def describe(self) -> str:
        if self.irds:
            return f"irds:{self.irds}"
        return str(self.docs if self.cocktail is None else self.cocktail)


@dataclass(frozen=True)
class SpecSchedule:
    """When the scheduled ingestion of a spec runs: a cron line (UTC) or every N seconds."""

    cron: str | None = None
    interval: int | None = None  # seconds

    def describe(self) -> str:
        return self.cron if self.cron is not None else f"every {self.interval} s"


NIGHTLY = SpecSchedule(cron="0 2 * * *")
MAX_INTERVAL = 366 * 24 * 3600  # a year: a longer interval is a typo, not a schedule


@dataclass(frozen=True)
class CollectionSpec:
    name: str
    path: Path
    doc_identity: str = "doc_id"
    topic_identity: str = "query_id"
    topic_match: str = "normalised"
    id_fallback: bool = False
    grade_min: int | None = None
    grade_max: int | None = None
    description: str | None = None
    snapshots: list[SnapshotSpec] = field(default_factory=list)
    schedule: SpecSchedule = NIGHTLY

    def snapshot(self, label: str) -> SnapshotSpec:
        for snap in self.snapshots:
            if snap.label == label:
                return snap
        raise NotFoundError(f"{self.path}: no snapshot {label!r} declared")


def load_spec(path: Path | str) -> CollectionSpec:
    """Read and validate a spec; errors name the file, the line and what is wrong."""
    import yaml

    path = Path(path)
    if not path.exists():
        shipped = SPEC_FOLDER / path.name
        if not path.is_absolute() and shipped.exists():
            path = shipped
        else:
            raise NotFoundError(f"collection spec not found: {path}")
    try:
        from tcdb.collections.files import read_input_text

        data = yaml.load(read_input_text(path), Loader=_LineLoader)  # noqa: S506
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not UTF-8 text: {exc.reason}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError(path, mark.line + 1 if mark else None,
                         f"not valid YAML: {reason}") from None
    except yaml.YAMLError as exc:
        raise InputError(path, None, f"not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) \
            or not data["name"].strip():
        raise InputError(path, _line(data, "name"), "a collection spec is a mapping with at "
                         "least `name`, a non-empty text")
    name = _named(path, _line(data, "name"), "collection name", data["name"])
    grades = data.get("grades")
    if grades is not None and (not isinstance(grades, list) or len(grades) != 2 or not all(
            isinstance(g, int) and not isinstance(g, bool) for g in grades)):
        raise InputError(path, _line(data, "grades"), "`grades` is [lowest, highest]: two "
                         "integers")
    for key, allowed in (("doc_identity", ("doc_id", "url")),
                         ("topic_identity", ("query_id", "text")),
                         ("topic_match", ("normalised", "exact"))):
        if key in data and data[key] not in allowed:
            raise InputError(path, _line(data, key),
                             f"`{key}` must be one of {', '.join(allowed)}")
    declared = data.get("snapshots") or []
    if not isinstance(declared, list):
        raise InputError(path, _line(data, "snapshots"), "`snapshots` is a list")
    snapshots = [_snapshot(path, i, s, _line(data, "snapshots"))
                 for i, s in enumerate(declared)]
    seen: dict[str, int] = {}
    for index, snap in enumerate(snapshots):
        if seen.setdefault(snap.label, index) != index:
            raise InputError(path, _line(declared[index], "label"),
                             f"snapshot label {snap.label!r} is declared twice")
    return CollectionSpec(
        name=name,
        path=path,
        doc_identity=data.get("doc_identity", "doc_id"),
        topic_identity=data.get("topic_identity", "query_id"),
        topic_match=data.get("topic_match", "normalised"),
        id_fallback=bool(data.get("id_fallback", False)),
        grade_min=grades[0] if grades else None,
        grade_max=grades[1] if grades else None,
        description=data.get("description"),
        snapshots=snapshots,
        schedule=_schedule(path, data),
    )


def _schedule(path: Path, data: dict[str, Any]) -> SpecSchedule:
    """`schedule: {cron: "0 2 * * *"}` or `schedule: {interval: SECONDS}`; nightly if absent."""
    raw = data.get("schedule")
    if raw is None:
        return NIGHTLY
    line = _line(data, "schedule")
    keys = set(raw) - {_LINES} if isinstance(raw, dict) else set()
    if not isinstance(raw, dict) or len(keys) != 1 or not keys <= {"cron", "interval"}:
        raise InputError(path, line, "`schedule` is {cron: \"MIN HOUR DAY MONTH WEEKDAY\"} or "
                         "{interval: SECONDS}")
    if "cron" in keys:
        cron = raw["cron"]
        if not isinstance(cron, str) or len(cron.split()) != 5:
            raise InputError(path, _line(raw, "cron") or line, f"`schedule: cron` {cron!r} is "
                             "not a cron line of five fields (MIN HOUR DAY MONTH WEEKDAY, UTC)")
        return SpecSchedule(cron=" ".join(cron.split()))
    interval = raw["interval"]
    if not isinstance(interval, int) or isinstance(interval, bool) \
            or not 1 <= interval <= MAX_INTERVAL:
        raise InputError(path, _line(raw, "interval") or line, f"`schedule: interval` "
                         f"{interval!r} is not a whole number of seconds from 1 to {MAX_INTERVAL}")
    return SpecSchedule(interval=interval)


_LINES = "\x00lines"  # a key no YAML file writes: where each key of a mapping stands


def _make_loader() -> type:
    """A safe YAML loader that remembers the line of every mapping key, for error messages."""
    import yaml

    class LineLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        value = loader.construct_mapping(node, deep=True)
        value[_LINES] = {key.value: key.start_mark.line + 1 for key, _ in node.value
                         if isinstance(key, yaml.ScalarNode)}
        return value

    def timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
        """A date-like text that is no date (2022-13-01) stays text, for the check to name."""
        try:
            return loader.construct_yaml_timestamp(node)
        except ValueError:
            return loader.construct_scalar(node)

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    LineLoader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
    return LineLoader


_LineLoader = _make_loader()


def _line(data: Any, key: str) -> int | None:
    """The line of `key` in a mapping the loader read (None when unknown)."""
    if not isinstance(data, dict):
        return None
    lines = data.get(_LINES) or {}
    return lines.get(key) or (min(lines.values()) if lines else None)


def _named(path: Path, line: int | None, what: str, value: str) -> str:
    """A name the spec gives, by the rule every name follows (`tcdb.names`), in NFC."""
    try:
        return check_name(value)
    except BadName as exc:
        raise InputError(path, line, f"{what}: {exc}") from None


def _snapshot(path: Path, index: int, raw: Any, list_line: int | None) -> SnapshotSpec:
    if not isinstance(raw, dict) or not isinstance(raw.get("label"), str | int | dt.date) \
            or not str(raw["label"]).strip():
        raise InputError(path, _line(raw, "label") or list_line,
                         f"snapshot #{index + 1} needs a `label`")
    label = _named(path, _line(raw, "label") or list_line, "snapshot label", str(raw["label"]))
    if sum(bool(raw.get(key)) for key in ("irds", "docs", "cocktail")) != 1:
        raise InputError(path, _line(raw, "label"), f"snapshot {label!r} needs exactly one of "
                         "`irds`, `docs` or `cocktail`")
    if raw.get("cocktail") and (raw.get("topics") or raw.get("qrels")):
        raise InputError(path, _line(raw, "cocktail"), f"snapshot {label!r}: a Cocktail "
                         "dataset folder holds its topics and qrels: give `cocktail` alone")
    for key in ("irds", "docs", "topics", "qrels", "source_labels", "cocktail"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise InputError(path, _line(raw, key), f"snapshot {label!r}: `{key}` is a text")
    date = raw.get("date")
    if isinstance(date, str):
        try:
            date = dt.date.fromisoformat(date)
        except ValueError:
            date = None
    if raw.get("date") is not None and not isinstance(date, dt.date) \
            or isinstance(date, dt.datetime):
        raise InputError(path, _line(raw, "date"),
                         f"snapshot {label!r}: bad date {raw.get('date')!r} (YYYY-MM-DD)")

    def local(key: str) -> Path | None:
        value = raw.get(key)
        if value is None:
            return None
        p = Path(str(value)).expanduser()
        return p if p.is_absolute() else (path.parent / p)

    return SnapshotSpec(label=label, date=date, irds=raw.get("irds"),
                        docs=local("docs"), topics=local("topics"), qrels=local("qrels"),
                        source_labels=local("source_labels"), cocktail=local("cocktail"))


def list_specs() -> list[Path]:
    """The specs shipped with tcdb."""
    return sorted(SPEC_FOLDER.glob("*.yaml"))
