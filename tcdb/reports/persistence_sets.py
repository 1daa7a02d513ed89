"""Several qrels sets side by side: which sets a report over snapshots scores on, and how the
one-set reports of persistence and rankings are put together.

LongEval 2026 publishes several qrels sets per snapshot (human judgments, pseudo-qrels from
clicks and click-through rates, LLM judgments). A report asked for several sets (`--qrels`
repeated, or `all`) is the one-set report of each set, keyed by the set's name, so every figure
of a set equals that of the same report run with `--qrels` of that set alone.

`all` means every set that each compared snapshot has under the same name; a set that some
snapshot lacks is left out and named with the snapshots that lack it (`left_out`). A set named
explicitly must exist on every snapshot: the report refuses, naming the set and the snapshot,
before it computes anything. (`all` is always the word: a set itself named `all` is reached
through a per-snapshot choice, `SNAPSHOT=all`.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from tcdb.errors import FieldError
from tcdb.reports.fields import ALL_QRELS

if TYPE_CHECKING:
    from tcdb.operations.database import Database
    from tcdb.operations.lineage import Lineage
    from tcdb.operations.paper import PaperTable

R = TypeVar("R", bound=BaseModel)  # a report result with qrels_sets, qrels_judges, … fields

@dataclass
class QrelsChoices:
    """What a report scores on: one choice (a name for every snapshot, or a mapping snapshot →
    name) per block of the report, and under `all` the sets left out."""

    choices: list[str | dict[str, str]]
    left_out: dict[str, list[str]] = field(default_factory=dict)  # set → snapshots lacking it

    @property
    def several(self) -> bool:
        return len(self.choices) > 1


def qrels_choices(db: Database, collection: str, snapshots: Sequence[str],
                  qrels: Sequence[str] | Mapping[str, str]) -> QrelsChoices:
    """The choices a `QrelsSets` field names on these snapshots, each set checked to exist.

    One name or a mapping is one choice, kept as given (the one-set report of today). Several
    names, or `all`, are one choice per set; each named set must exist on every snapshot.
    """
    from sqlmodel import col, select

    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.schema import QrelsSet
    from tcdb.sorting import natural_key

    if isinstance(qrels, Mapping):
        return QrelsChoices([dict(qrels)])
    names = list(qrels)
    if names != [ALL_QRELS] and len(names) == 1:
        return QrelsChoices([names[0]])
    with db.session() as session:
        get_collection(session, collection)
        snaps = [get_snapshot(session, collection, label) for label in snapshots]
        if names != [ALL_QRELS]:
            for snap in snaps:
                for name in names:
                    get_qrels_set(session, snap, name)  # NotFoundError naming set and snapshot
            return QrelsChoices(list(names))
        have = {snap.label: set(session.exec(select(QrelsSet.name).where(
            col(QrelsSet.snapshot_id) == snap.pk)).all()) for snap in snaps}
    every = set().union(*have.values())
    shared = sorted(set.intersection(*have.values()), key=natural_key)
    left_out = {name: [s for s in snapshots if name not in have[s]]
                for name in sorted(every - set(shared), key=natural_key)}
    if not shared:
        raise FieldError("qrels", f"snapshots {', '.join(snapshots)} of {collection!r} share no "
                         "qrels set name: name one set per snapshot (SNAPSHOT=NAME)")
    return QrelsChoices(list(shared), left_out)


def left_out_said(left_out: Mapping[str, Sequence[str]]) -> list[str]:
    """One line per set `all` left out: which snapshots lack it."""
    return [f"qrels set {name!r} left out: not in snapshot(s) {', '.join(lacking)}"
            for name, lacking in left_out.items()]


def merged_lineage(lineages: Sequence[Lineage | None]) -> Lineage | None:
    """One lineage naming every run and every qrels set the blocks used (each once)."""
    known = [lineage for lineage in lineages if lineage is not None]
    if not known:
        return None
    runs: dict[str, Any] = {}
    qrels: dict[str, Any] = {}
    for lineage in known:
        for run in lineage.runs:
            runs.setdefault(run.model_dump_json(), run)
        for qset in lineage.qrels:
            qrels.setdefault(qset.model_dump_json(), qset)
    return known[0].model_copy(update={"runs": list(runs.values()),
                                       "qrels": list(qrels.values())})


def side_by_side_paper(tables: Mapping[str, PaperTable], caption: str,
                       lineage: Lineage | None) -> PaperTable:
    """Each set's paper table under a leading `qrels` column, the best values compared within
    a set (and measure), never across sets."""
    from tcdb.operations.paper import PaperTable

    first = next(iter(tables.values()))
    rows: list[list[Any]] = []
    marks: list[dict[str, str]] = []
    groups: list[str | None] = []
    notes: list[str] = []
    for name, table in tables.items():
        for i, row in enumerate(table.rows):
            rows.append([name, *row])
            marks.append(table.marks[i] if i < len(table.marks) else {})
            group = table.group(i)
            groups.append(name if group is None else f"{name} · {group}")
        notes += [n for n in table.notes if n not in notes]
    return PaperTable(columns=["qrels", *first.columns], rows=rows, figures=first.figures,
                      marks=marks, groups=groups, p_columns=first.p_columns, caption=caption,
                      notes=notes, label=first.label, digits=first.digits, lineage=lineage)


def side_by_side(reports: Mapping[str, R], asked: QrelsChoices) -> R:
    """The report of every choice as one result: the first set's figures at the top, each
    set's own report under `qrels_sets`, who judged each, what `all` left out, one lineage.
    One choice is its report as it always was (only `qrels_left_out` added)."""
    first = next(iter(reports.values()))
    left_out = asked.left_out or None
    if not asked.several:
        return first.model_copy(update={"qrels_left_out": left_out})
    return first.model_copy(update={
        "qrels_sets": dict(reports), "qrels_left_out": left_out,
        "qrels_judges": judges_of(reports),
        "lineage": merged_lineage([getattr(r, "lineage", None) for r in reports.values()])})


def judges_of(reports: Mapping[str, Any]) -> dict[str, str]:
    """Who judged each set (`judge_kind`, as its lineage names it on every snapshot; kinds
    that differ between snapshots joined by `/`)."""
    out = {}
    for name, report in reports.items():
        qrels = report.lineage.qrels if report.lineage is not None else []
        out[name] = "/".join(dict.fromkeys(q.judge_kind for q in qrels)) or "unknown"
    return out


def set_said(name: str, judges: Mapping[str, str]) -> str:
    """`llm (judge: llm)`: a set's name and who judged it."""
    return f"{name} (judge: {judges[name]})" if name in judges else name


def several_said(judges: Mapping[str, str]) -> str:
    """`qrels sets human (judge: human), clicks (judge: clicks) side by side, each on every
    snapshot`."""
    names = ", ".join(set_said(name, judges) for name in judges)
    return f"qrels sets {names} side by side, each on every snapshot"


def by_set(data: dict[str, Any], *own: str) -> dict[str, Any]:
    """A report's JSON: as ever for one set (the new keys absent); for several, the report's
    own keys (`own` beside collection and snapshots) and each set's report under its name."""
    for key in ("qrels_left_out", "qrels_judges"):
        if data.get(key) is None:
            data.pop(key, None)
    if data.get("qrels_sets") is None:
        data.pop("qrels_sets", None)
        return data
    keep = ("collection", *own, "snapshots", "qrels_sets", "qrels_judges", "qrels_left_out",
            "lineage")
    return {key: data[key] for key in keep if key in data}
