"""Is a system's effectiveness persistent over time? The persistence report across snapshots.

Every system followed across the snapshots (`tcdb.reports.persistence_scores`) against a pivot
system: ARP per snapshot and, for each later snapshot against the first, RΔ, the relative
change, Effect Ratio and ΔRI (`tcdb.analysis.persistence`, equal to repro_eval), the unpaired
t-test between the snapshots (and on request the paired one on the core topics), and on request
bootstrap intervals (`tcdb.analysis.bootstrap.persistence_ci`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    SerializerFunctionWrapHandler,
    computed_field,
    model_serializer,
)

from tcdb.operations import (
    Database,
    Name,
    Names,
    Request,
    Result,
    TwoOrMoreSnapshots,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.operations.paper import PaperTable
from tcdb.reports.fields import QrelsSets, qrels_sets_option, topics_option
from tcdb.reports.paper_tables import BETTER, WORSE
from tcdb.reports.persistence_scores import check_pivot
from tcdb.scoring.measures import MeasureNames
from tcdb.vocabulary import (
    BELOW_PIVOT_MARK,
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    SIGNIFICANCE_TESTS,
    below_pivot_said,
)

if TYPE_CHECKING:
    import pandas as pd


class PersistenceRequest(Request):
    """Which systems, snapshots, measures and topics a persistence report compares."""

    collection: Name = argument(help="Collection name.")
    snapshots: TwoOrMoreSnapshots = option(
        help="Snapshot labels, first one first (repeat, or give them space-separated).",
        flag="--snapshots", short="-s")
    pivot: Name = option(help="Pivot system (its own ER and ΔRI: –).")
    measures: MeasureNames = option(["nDCG@10"], help="Measure (repeat).", short="-m")
    qrels: QrelsSets = qrels_sets_option()
    topics: Name = topics_option()
    bootstrap: int = option(0, ge=0, help=f"Bootstrap samples for CIs (e.g. "
                            f"{BOOTSTRAP_SAMPLES}; 0: none).")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the bootstrap.")
    systems: Names | None = option(
        None, flag="--system", help="Only this system (repeat; the pivot is always in).")
    paired: bool = option(False, help="Also a paired t-test on the core topics of the first "
                          "and each later snapshot.")
    cross_snapshot: bool = option(
        False, help="Score every system's first-snapshot run on each snapshot's qrels "
        "(documents and topics mapped by identity) instead of its own runs: what the "
        "collection's change alone does.")
    compute: bool = option(True, help="Compute missing scores first (--no-compute: only read "
                           "stored ones, as the dashboard does).")


class TopicSelection(BaseModel):
    """The topics each snapshot's means are over; under --cross-snapshot the later ones are
    those of the selection the first snapshot has (`n_topics` mapped of `n_selected`)."""

    selection: str
    n_topics: dict[str, int]  # snapshot → topics averaged over
    n_selected: dict[str, int] | None = None  # cross-snapshot: topics selected before mapping

    @model_serializer(mode="wrap")
    def _mapped_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`n_selected` appears only when topics were mapped (`--json` as ever otherwise)."""
        data: dict[str, Any] = handler(self)
        if data.get("n_selected") is None:
            data.pop("n_selected", None)
        return data

    def said(self) -> str:
        """`all (2022-06: 100, 2022-09: 90 mapped of 100)`: what a header says."""
        mapped = self.n_selected or {}
        parts = [f"{s}: {n}" + (f" mapped of {mapped[s]}" if s in mapped and i else "")
                 for i, (s, n) in enumerate(self.n_topics.items())]
        return f"{self.selection} ({', '.join(parts)})"


class BootstrapSettings(BaseModel):
    n_samples: int
    seed: int
    alpha: float


class SystemPersistence(BaseModel):
    """One system against the pivot: ARP per snapshot, the rest per later snapshot."""

    system: str
    is_pivot: bool
    # ARP in the first snapshot below the pivot's: ER then reads backwards (its "gain" is a
    # shortfall, so ER above 1 means the shortfall grew)
    below_pivot: bool
    arp: dict[str, float | None]
    result_delta: dict[str, float | None]
    relative_drop: dict[str, float | None]
    er: dict[str, float | None]  # None for the pivot (0/0)
    delta_ri: dict[str, float | None]
    p_value: dict[str, float | None]  # unpaired t-test, first vs later snapshot
    runs: dict[str, str]  # snapshot → run tag
    p_value_paired: dict[str, float | None] | None = None
    n_paired: dict[str, int] | None = None
    ci: dict[str, Any] | None = None  # persistence_ci's intervals

    @property
    def er_backwards(self) -> bool:
        """Its ER reads backwards (below the pivot, not the pivot): marked `BELOW_PIVOT_MARK`
        wherever ER is printed."""
        return self.below_pivot and not self.is_pivot

    @model_serializer(mode="wrap")
    def _only_asked(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The paired test and the intervals appear only when asked for (`--json` as ever)."""
        data: dict[str, Any] = handler(self)
        for key in ("p_value_paired", "n_paired", "ci"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class SkippedSystem(BaseModel):
    system: str
    reason: str
    kind: str  # no_run, several_runs, no_scores


class PersistenceMeasure(BaseModel):
    systems: list[SystemPersistence]
    skipped: list[SkippedSystem]
    aggregate: str = "mean"  # what `arp` is: "sum" over topics for a count (NumRet…)


class PersistenceResult(Result):
    """Every system against the pivot, each later snapshot against the first, per measure."""

    collection: str
    pivot: str
    snapshots: list[str]
    qrels: dict[str, str]
    topics: TopicSelection
    bootstrap: BootstrapSettings | None
    measures: dict[str, PersistenceMeasure]
    warnings: list[str]  # e.g. a system whose runs name different groups
    lineage: Lineage | None = None  # what the figures were computed from
    # several qrels sets (`--qrels` repeated or all): each set's report, keyed by its name; the
    # fields above are then the first set's, and the lineage names every set
    qrels_sets: dict[str, PersistenceResult] | None = None
    qrels_left_out: dict[str, list[str]] | None = None  # all: set → the snapshots lacking it
    qrels_judges: dict[str, str] | None = None  # several sets: set → who judged it (lineage)

    @model_serializer(mode="wrap")
    def _by_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """One set: `--json` as ever; several: each set's report under its name."""
        from tcdb.reports.persistence_sets import by_set

        return by_set(handler(self), "pivot")

    def paper_table(self) -> PaperTable:
        """ARP per snapshot, RΔ/ER/ΔRI per later one; marks from the t-tests vs the first;
        several qrels sets: each set's block under a `qrels` column."""
        if self.qrels_sets:
            from tcdb.reports.persistence_sets import several_said, side_by_side_paper

            tables = {name: persistence_paper(r) for name, r in self.qrels_sets.items()}
            caption = next(iter(tables.values())).caption.replace(
                f"qrels {_qrels_said(self)}", several_said(self.qrels_judges or {}))
            return side_by_side_paper(tables, caption, self.lineage)
        return persistence_paper(self)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tests(self) -> dict[str, str]:
        """Each p-value's test in words (`p_value`, and `p_value_paired` when asked for)."""
        from tcdb.vocabulary import persistence_tests

        return persistence_tests(any(r.p_value_paired is not None
                                     for m in self.measures.values() for r in m.systems))

    def to_frame(self) -> pd.DataFrame:
        """One row per measure × system × later snapshot: ARP in the first and the later
        snapshot (over `n_topics`, of `n_selected` before --cross-snapshot's mapping), RΔ,
        relative drop, ER, ΔRI and the t-test's p (paired ones when asked)."""
        import pandas as pd

        if self.qrels_sets:  # each set's rows; its `qrels` column names the set
            return pd.concat([r.to_frame() for r in self.qrels_sets.values()],
                             ignore_index=True)
        first = self.snapshots[0]
        rows = []
        for measure, result in self.measures.items():
            for record in result.systems:
                for later in self.snapshots[1:]:
                    rows.append({
                        "measure": measure, "system": record.system,
                        "is_pivot": record.is_pivot, "snapshot": later, "first": first,
                        "qrels": self.qrels[later], "topics": self.topics.selection,
                        "n_topics": self.topics.n_topics[later],
                        "n_selected": (self.topics.n_selected
                                       or self.topics.n_topics)[later],
                        "arp_first": record.arp[first], "arp": record.arp[later],
                        "result_delta": record.result_delta[later],
                        "relative_drop": record.relative_drop[later],
                        "er": record.er[later], "delta_ri": record.delta_ri[later],
                        "p_value": record.p_value[later],
                        "p_value_paired": (record.p_value_paired or {}).get(later),
                        "n_paired": (record.n_paired or {}).get(later),
                        "run_first": record.runs.get(first), "run": record.runs.get(later),
                    })
        return pd.DataFrame(rows, columns=[
            "measure", "system", "is_pivot", "snapshot", "first", "qrels", "topics",
            "n_topics", "n_selected", "arp_first", "arp", "result_delta", "relative_drop",
            "er", "delta_ri", "p_value", "p_value_paired", "n_paired", "run_first", "run"])


@operation("persistence", command="report persistence")
def persistence(request: PersistenceRequest, db: Database) -> PersistenceResult:
    """Is each system's effectiveness persistent? Every later snapshot against the first;
    over several qrels sets, each set's report side by side.

    Why a pivot: persistence is judged against a pivot run evaluated in the same snapshots,
    which factors out how much the collection itself got easier or harder.
    """
    from tcdb.reports.persistence_sets import qrels_choices, side_by_side

    asked = qrels_choices(db, request.collection, request.snapshots, request.qrels)
    return side_by_side({str(c): _one_set(request, db, c) for c in asked.choices}, asked)


def _one_set(request: PersistenceRequest, db: Database,
             qrels: str | dict[str, str]) -> PersistenceResult:
    """The report on one qrels choice: a set on every snapshot, or one set per snapshot."""
    from tcdb.analysis.bootstrap import persistence_ci
    from tcdb.analysis.means import aggregate_word
    from tcdb.analysis.persistence import persistence_table
    from tcdb.reports.cross_persistence import cross_snapshot_scores
    from tcdb.reports.persistence_scores import load_persistence_scores

    alpha = 0.05
    load = cross_snapshot_scores if request.cross_snapshot else load_persistence_scores
    data = load(db, request.collection, request.snapshots, request.measures, qrels,
                request.topics, compute=request.compute, systems=request.systems,
                keep=request.pivot)
    check_pivot(data, request.pivot)
    first = data.snapshots[0]
    measures: dict[str, PersistenceMeasure] = {}
    for name, frame in data.frames.items():
        records = persistence_table(frame, data.snapshots, request.pivot, topics=data.topics,
                                    paired=request.paired, measure=name)
        pivot_first = next((r["arp"].get(first) for r in records if r["is_pivot"]), None)
        systems = []
        for record in records:
            record["runs"] = data.runs[name][record["system"]]
            record["below_pivot"] = _below(record["arp"].get(first), pivot_first)
            if request.bootstrap:
                record["ci"] = persistence_ci(frame, data.snapshots, request.pivot,
                                              record["system"], topics=data.topics,
                                              n_samples=request.bootstrap, alpha=alpha,
                                              seed=request.seed,
                                              sums=aggregate_word(name) == "sum")
            systems.append(SystemPersistence(**record))
        measures[name] = PersistenceMeasure(
            systems=systems, skipped=[SkippedSystem(**s) for s in data.skipped[name]],
            aggregate=aggregate_word(name))
    return PersistenceResult(
        collection=request.collection, pivot=request.pivot, snapshots=data.snapshots,
        qrels=data.qrels,
        topics=TopicSelection(selection=request.topics,
                              n_topics={label: len(ids) for label, ids in data.topics.items()},
                              n_selected=data.n_selected),
        bootstrap=(BootstrapSettings(n_samples=request.bootstrap, seed=request.seed,
                                     alpha=alpha) if request.bootstrap else None),
        measures=measures, warnings=data.warnings,
        lineage=lineage_of(db, request.collection, runs=[
            (data.snapshots[0] if request.cross_snapshot else label, tag)
            for by_system in data.runs.values() for tags in by_system.values()
            for label, tag in tags.items()], qrels=list(data.qrels.items()),
            topics=request.topics, measures=list(data.frames)))


def _qrels_said(result: PersistenceResult) -> str:
    return ", ".join(f"{s}: {q}" for s, q in result.qrels.items())


def _below(arp: float | None, pivot: float | None) -> bool:
    """Below the pivot in the first snapshot (an unknown ARP is not below)."""
    return arp is not None and pivot is not None and arp < pivot


def persistence_paper(result: PersistenceResult, alpha: float = 0.05) -> PaperTable:
    """One block of systems per measure: ARP per snapshot (bold best), and for each later
    snapshot RΔ, ER and ΔRI against the pivot; † on a later ARP whose change from the first
    snapshot is significant (unpaired t-test), ‡ with the paired one on the core topics."""
    first, later = result.snapshots[0], result.snapshots[1:]
    columns = ["system", *(f"ARP {s}" for s in result.snapshots)]
    for s in later:
        columns += [f"RΔ {s}", f"ER {s}", f"ΔRI {s}"]
    rows: list[list[Any]] = []
    marks: list[dict[str, str]] = []
    groups: list[str | None] = []
    multi = len(result.measures) > 1
    for measure, block in result.measures.items():
        for record in block.systems:
            name = record.system + (" (pivot)" if record.is_pivot else "")
            row: list[Any] = [name, *(record.arp.get(s) for s in result.snapshots)]
            mark: dict[str, str] = {}
            for s in later:
                row += [record.result_delta.get(s), record.er.get(s), record.delta_ri.get(s)]
                if record.er_backwards and record.er.get(s) is not None:
                    mark[f"ER {s}"] = BELOW_PIVOT_MARK
                p = record.p_value.get(s)
                paired = (record.p_value_paired or {}).get(s)
                mark[f"ARP {s}"] = ((BETTER if p is not None and p < alpha else "") +
                                    (WORSE if paired is not None and paired < alpha else ""))
            rows.append(row)
            marks.append(mark)
            groups.append(measure if multi else None)
    measures = ", ".join(result.measures)
    qrels = _qrels_said(result)
    n = ", ".join(f"{s}: {k}" for s, k in result.topics.n_topics.items())
    legend = (f"{BETTER}: ARP differs significantly from {first} (p < {alpha:g}, "
              f"{SIGNIFICANCE_TESTS['unpaired_t']}, no correction)")
    if any(r.p_value_paired for b in result.measures.values() for r in b.systems):
        legend += (f"; {WORSE}: so does the {SIGNIFICANCE_TESTS['t']} on the core topics "
                   "(no correction)")
    if any(m.get(f"ER {s}") for m in marks for s in later):
        legend += f"; {below_pivot_said(result.pivot, first)}"
    caption = (f"Persistence of {measures} on {result.collection}: ARP per snapshot (best in "
               f"bold), and for each later snapshot against {first} the result delta RΔ, "
               f"Effect Ratio ER and ΔRI against the pivot {result.pivot}; qrels {qrels}; "
               f"topics {result.topics.selection} ({n}). {legend}.")
    summed = [m for m, block in result.measures.items() if block.aggregate == "sum"]
    if summed:
        caption += (f" ARP of {', '.join(summed)}: the sum over topics (a count, as "
                    "trec_eval's all line), not the mean.")
    return PaperTable(columns=columns, rows=rows,
                      figures={f"ARP {s}": True for s in result.snapshots}, marks=marks,
                      groups=groups, caption=caption, label="tab:persistence",
                      lineage=result.lineage, notes=result.warnings)
