"""`tcdb results list`: the figures of the collection's results tables, and the one reader the
reports use (`published_means`): per measure, each system's published figure per snapshot.

Snapshots come in the collection's order (ordinal, then label). A system is named as every
report names it (`tcdb.runs.systems.system_labels`: its name, or `group/name` where another
group has a system of that name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlalchemy import select
from sqlmodel import Session, col

from tcdb.errors import FieldError, NotFoundError, some
from tcdb.operations import (
    Database,
    Labels,
    Name,
    Names,
    Request,
    Result,
    argument,
    operation,
    option,
)
from tcdb.schema import PublishedResult, Snapshot, System
from tcdb.schema.base import stored_id

if TYPE_CHECKING:
    import pandas as pd


class TableSource(BaseModel):
    """A results table the figures came from: its file name, sha256 and how many figures."""

    source: str
    checksum: str
    n_values: int


@dataclass
class PublishedMeans:
    """The published figures of some measures over some snapshots.

    `values[measure][system][snapshot]` is the table's figure (missing: the table gives none)
    of the system's latest version there, `versions[system][snapshot]` that version ("": the
    table gives none); `names[system]` is (team, run); `sources` the files they came from.
    """

    collection: str
    snapshots: list[str]
    values: dict[str, dict[str, dict[str, float]]]
    names: dict[str, tuple[str, str]]
    sources: list[TableSource] = field(default_factory=list)
    versions: dict[str, dict[str, str]] = field(default_factory=dict)


def published_means(session: Session, collection: str, snapshots: Sequence[str] | None,
                    measures: Sequence[str] | None) -> PublishedMeans:
    """Read the published figures (every snapshot with any, in order, when none are named), of
    each system's latest version on each snapshot (by the version's natural order: LongEval's
    timestamps, v1 < v2 < v10).

    A named snapshot or measure without published figures is a FieldError saying which the
    collection has.
    """
    from tcdb.catalog.collections import get_collection
    from tcdb.runs.systems import system_labels
    from tcdb.scoring.measures import canonical_measure
    from tcdb.sorting import version_key

    coll = get_collection(session, collection)
    c = PublishedResult.__table__.c  # type: ignore[attr-defined]
    rows = session.connection().execute(
        select(col(Snapshot.label), col(Snapshot.ordinal), col(System.id),
               col(System.group_name), col(System.name), c.measure, c.value, c.source,
               c.checksum, c.version)
        .join(Snapshot, col(Snapshot.id) == c.snapshot_id)
        .join(System, col(System.id) == c.system_id)
        .where(c.collection_id == coll.pk)).all()
    order = sorted({(ordinal, label) for label, ordinal, *_ in rows})
    have = [label for _, label in order]
    if not have:
        raise NotFoundError(f"{collection!r} has no published results: import a results table "
                            f"with `tcdb results import {collection} FILE`")
    if snapshots:
        absent = [s for s in snapshots if s not in have]
        if absent:
            raise FieldError("snapshots", f"no published results for snapshot {absent[0]!r} "
                             f"of {collection!r} (snapshots with results: {some(have)})")
        chosen = list(snapshots)
    else:
        chosen = have
    known_measures = sorted({row[5] for row in rows})
    wanted = None
    if measures:
        wanted = [canonical_measure(m) for m in measures]
        absent = [m for m in wanted if m not in known_measures]
        if absent:
            raise FieldError("measures", f"no published {absent[0]} for {collection!r} "
                             f"(published: {some(known_measures)})")
    labels = system_labels({stored_id(sid): (group, name)
                            for _, _, sid, group, name, *_ in rows})
    values: dict[str, dict[str, dict[str, float]]] = {m: {} for m in (wanted or known_measures)}
    names: dict[str, tuple[str, str]] = {}
    sources: dict[tuple[str, str], int] = {}
    latest: dict[tuple[int, str], str] = {}  # (system id, snapshot) → its latest version
    for label, _, sid, *_, version in rows:
        key = (stored_id(sid), label)
        if key not in latest or version_key(version) > version_key(latest[key]):
            latest[key] = version
    versions: dict[str, dict[str, str]] = {}
    for label, _, sid, group, name, measure, value, source, checksum, version in rows:
        if label not in chosen or measure not in values or latest[(stored_id(sid), label)] \
                != version:
            continue
        system = labels[stored_id(sid)]
        names[system] = (group, name)
        versions.setdefault(system, {})[label] = version
        values[measure].setdefault(system, {})[label] = float(value)
        sources[(source, checksum)] = sources.get((source, checksum), 0) + 1
    return PublishedMeans(collection, chosen, values, names,
                          [TableSource(source=s, checksum=h, n_values=n)
                           for (s, h), n in sorted(sources.items())], versions)


class ResultsRequest(Request):
    """Which published figures to list."""

    collection: Name = argument(help="Collection name.")
    measures: Labels | None = option(None, short="-m", help="Only this measure (repeat).")
    snapshots: Names | None = option(None, flag="--snapshots", short="-s",
                                      help="Only these snapshots (repeat).")


class PublishedFigure(BaseModel):
    snapshot: str
    system: str
    team: str
    run: str
    measure: str
    value: float
    version: str = ""  # the run's version the figure is of: its latest ("": the table has none)


class ResultsResult(Result):
    """The published figures of a collection, per snapshot, system and measure."""

    collection: str
    snapshots: list[str]
    measures: list[str]
    figures: list[PublishedFigure]
    tables: list[TableSource]

    def to_frame(self) -> pd.DataFrame:
        """`snapshot, system, team, run, version, measure, value`, one row per figure."""
        import pandas as pd

        return pd.DataFrame([f.model_dump() for f in self.figures],
                            columns=["snapshot", "system", "team", "run", "version", "measure",
                                     "value"])


@operation("results", command="results list")
def results(request: ResultsRequest, db: Database) -> ResultsResult:
    """List the figures of the collection's imported results tables, snapshot by snapshot.

    Why: to see what a results table brought in before reporting on it.
    """
    from tcdb.sorting import natural_key

    with db.session() as session:
        data = published_means(session, request.collection, request.snapshots,
                               request.measures)
    figures = [PublishedFigure(snapshot=s, system=system, team=data.names[system][0],
                               run=data.names[system][1], measure=m, value=v,
                               version=data.versions[system][s])
               for m, by_system in data.values.items() for system, by_snapshot in
               by_system.items() for s, v in by_snapshot.items()]
    position = {s: i for i, s in enumerate(data.snapshots)}
    figures.sort(key=lambda f: (position[f.snapshot], natural_key(f.system), f.measure))
    return ResultsResult(collection=request.collection, snapshots=data.snapshots,
                         measures=list(data.values), figures=figures, tables=data.sources)
