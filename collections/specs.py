"""Collection specs (`collections/specs/*.yaml`): identity rules and the snapshots declared.

A spec is what a scheduled flow reads to find snapshots that are declared but not yet
ingested. Example::

    name: longeval-web
    doc_identity: url          # or doc_id
    topic_identity: text       # or query_id
    id_fallback: true          # a document without a URL keeps its id as key
    grades: [0, 2]
    snapshots:
      - {label: 2022-06, date: 2022-06-01, irds: longeval-web/2022-06}
      - {label: local-1, docs: data/docs, topics: data/topics.tsv, qrels: data/qrels.txt}

Relative local paths are resolved against the spec file's folder.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcdb.errors import InputError, NotFoundError

if TYPE_CHECKING:
    from tcdb.collections.sources import SnapshotSource

SPEC_FOLDER = Path(__file__).parent / "specs"


@dataclass(frozen=True)
class SnapshotSpec:
    label: str
    date: dt.date | None = None
    irds: str | None = None
    docs: Path | None = None
    topics: Path | None = None
    qrels: Path | None = None

    def availability(self) -> str | None:
        """None when the source can be read now, else the reason it cannot (yet)."""
        if self.irds is not None:
            from tcdb.collections.irds import IrdsSource

            try:
                IrdsSource(self.irds)
            except Exception as exc:  # noqa: BLE001 - any failure means "not there yet"
                return f"ir_datasets {self.irds}: {exc}"
            return None
        for role, path in (("documents", self.docs), ("topics", self.topics),
                           ("qrels", self.qrels)):
            if path is not None and not path.exists():
                return f"{role} not found: {path}"
        return None

    def open_source(self) -> SnapshotSource:
        from tcdb.collections.sources import open_source

        return open_source(self.irds, self.docs, self.topics, self.qrels)

    def describe(self) -> str:
        return f"irds:{self.irds}" if self.irds else str(self.docs)


@dataclass(frozen=True)
class CollectionSpec:
    name: str
    path: Path
    doc_identity: str = "doc_id"
    topic_identity: str = "query_id"
    id_fallback: bool = False
    grade_min: int | None = None
    grade_max: int | None = None
    description: str | None = None
    snapshots: list[SnapshotSpec] = field(default_factory=list)

    def snapshot(self, label: str) -> SnapshotSpec:
        for snap in self.snapshots:
            if snap.label == label:
                return snap
        raise NotFoundError(f"{self.path}: no snapshot {label!r} declared")


def load_spec(path: Path | str) -> CollectionSpec:
    """Read and validate a spec; errors name the file and what is wrong."""
    import yaml

    path = Path(path)
    if not path.exists():
        shipped = SPEC_FOLDER / path.name
        if not path.is_absolute() and shipped.exists():
            path = shipped
        else:
            raise NotFoundError(f"collection spec not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"not valid YAML: {exc}") from None
    if not isinstance(data, dict) or "name" not in data:
        raise InputError(path, None, "a collection spec is a mapping with at least `name`")
    grades = data.get("grades")
    if grades is not None and (not isinstance(grades, list) or len(grades) != 2):
        raise InputError(path, None, "`grades` is [lowest, highest]")
    for key, allowed in (("doc_identity", ("doc_id", "url")),
                         ("topic_identity", ("query_id", "text"))):
        if key in data and data[key] not in allowed:
            raise InputError(path, None, f"`{key}` must be one of {', '.join(allowed)}")
    snapshots = [_snapshot(path, i, s) for i, s in enumerate(data.get("snapshots") or [])]
    labels = [s.label for s in snapshots]
    if len(set(labels)) != len(labels):
        raise InputError(path, None, "a snapshot label is declared twice")
    return CollectionSpec(
        name=str(data["name"]),
        path=path,
        doc_identity=data.get("doc_identity", "doc_id"),
        topic_identity=data.get("topic_identity", "query_id"),
        id_fallback=bool(data.get("id_fallback", False)),
        grade_min=int(grades[0]) if grades else None,
        grade_max=int(grades[1]) if grades else None,
        description=data.get("description"),
        snapshots=snapshots,
    )


def _snapshot(path: Path, index: int, raw: Any) -> SnapshotSpec:
    if not isinstance(raw, dict) or "label" not in raw:
        raise InputError(path, None, f"snapshot #{index + 1} needs a `label`")
    if bool(raw.get("irds")) == bool(raw.get("docs")):
        raise InputError(path, None, f"snapshot {raw['label']!r} needs exactly one of "
                         "`irds` or `docs`")
    date = raw.get("date")
    if isinstance(date, str):
        try:
            date = dt.date.fromisoformat(date)
        except ValueError:
            raise InputError(path, None, f"snapshot {raw['label']!r}: bad date {date!r}") from None

    def local(key: str) -> Path | None:
        value = raw.get(key)
        if value is None:
            return None
        p = Path(str(value)).expanduser()
        return p if p.is_absolute() else (path.parent / p)

    return SnapshotSpec(label=str(raw["label"]), date=date, irds=raw.get("irds"),
                        docs=local("docs"), topics=local("topics"), qrels=local("qrels"))


def list_specs() -> list[Path]:
    """The specs shipped with tcdb."""
    return sorted(SPEC_FOLDER.glob("*.yaml"))
