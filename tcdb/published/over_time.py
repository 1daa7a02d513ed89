"""`tcdb results over-time`: each system's published figure across snapshots, from the results
tables alone (no runs, no per-topic scores).

For each later snapshot against the first: RΔ = ARP(first) − ARP(later) and the relative drop
RΔ / ARP(first), as `tcdb report persistence` gives them (repro_eval's), and the change LongEval's
overview tables publish, (ARP(later) − ARP(first)) / ARP(first) — the same ratio with the
opposite sign, so both readings are at hand. Figures that need per-topic scores (ER, ΔRI, the
t-tests) are not here: a results table holds only means; `tcdb report persistence` gives them
from runs or imported per-topic scores. A system without a figure in every chosen snapshot is
listed under `skipped`, never dropped silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from tcdb.operations import (
    Database,
    Labels,
    Name,
    Request,
    Result,
    TwoOrMoreSnapshots,
    argument,
    operation,
    option,
)
from tcdb.published.listing import TableSource

if TYPE_CHECKING:
    import pandas as pd

LONGEVAL_CHANGE = "(ARP later − ARP first) / ARP first, as LongEval's overview tables publish it"


class ResultsOverTimeRequest(Request):
    """Which measures, snapshots and systems of the published results to follow."""

    collection: Name = argument(help="Collection name.")
    measures: Labels = option(["nDCG@10"], short="-m", help="Measure (repeat).")
    snapshots: TwoOrMoreSnapshots | None = option(None, flag="--snapshots", short="-s",
                                      help="Snapshots, first one first (default: every one with "
                                      "published results, in the collection's order).")


class PublishedSystem(BaseModel):
    """One system's published ARP per snapshot and its change against the first."""

    system: str
    team: str
    run: str
    arp: dict[str, float]
    result_delta: dict[str, float | None]  # later snapshot → ARP first − ARP later
    relative_drop: dict[str, float | None]  # RΔ / ARP first
    longeval_change: dict[str, float | None]  # (ARP later − ARP first) / ARP first


class Skipped(BaseModel):
    system: str
    reason: str


class PublishedOverTime(BaseModel):
    systems: list[PublishedSystem]
    skipped: list[Skipped]


class ResultsOverTimeResult(Result):
    """Each system's published ARP per snapshot, RΔ and relative drop against the first."""

    collection: str
    snapshots: list[str]
    measures: dict[str, PublishedOverTime]
    tables: list[TableSource]  # the results tables the figures came from
    longeval_change: str = LONGEVAL_CHANGE

    def to_frame(self) -> pd.DataFrame:
        """One row per measure × system × later snapshot: ARP first and later, RΔ, relative
        change and LongEval's change."""
        import pandas as pd

        first = self.snapshots[0]
        rows = [{"measure": m, "system": r.system, "team": r.team, "run": r.run,
                 "first": first, "snapshot": s, "arp_first": r.arp[first], "arp": r.arp[s],
                 "result_delta": r.result_delta[s], "relative_drop": r.relative_drop[s],
                 "longeval_change": r.longeval_change[s]}
                for m, figures in self.measures.items() for r in figures.systems
                for s in self.snapshots[1:]]
        return pd.DataFrame(rows, columns=["measure", "system", "team", "run", "first",
                                           "snapshot", "arp_first", "arp", "result_delta",
                                           "relative_drop", "longeval_change"])


@operation("results_over_time", command="results over-time")
def results_over_time(request: ResultsOverTimeRequest, db: Database) -> ResultsOverTimeResult:
    """ARP over snapshots, RΔ and the relative drop of every system, from the published
    results tables alone.

    Why: a campaign's results table is often all there is of a past edition; its means answer
    whether each system held up, without a run file.
    """
    from tcdb.analysis import json_float
    from tcdb.analysis.means import DECIMALS
    from tcdb.sorting import natural_key

    with db.session() as session:
        from tcdb.published.listing import published_means

        data = published_means(session, request.collection, request.snapshots,
                               request.measures)
    labels = data.snapshots
    first = labels[0]
    measures: dict[str, PublishedOverTime] = {}
    for measure, by_system in data.values.items():
        systems, skipped = [], []
        for system in sorted(by_system, key=natural_key):
            values = by_system[system]
            missing = [s for s in labels if s not in values]
            if missing:
                skipped.append(Skipped(system=system, reason=f"no published {measure} for "
                                       f"snapshot {missing[0]!r}"))
                continue
            arp = {s: round(values[s], DECIMALS) for s in labels}
            delta = {s: json_float(values[first] - values[s]) for s in labels[1:]}
            ratio = {s: (None if values[first] == 0 else
                         json_float((values[first] - values[s]) / values[first]))
                     for s in labels[1:]}
            change = {s: None if r is None else (0.0 if r == 0 else -r)
                      for s, r in ratio.items()}
            team, run = data.names[system]
            systems.append(PublishedSystem(system=system, team=team, run=run, arp=arp,
                                           result_delta=delta, relative_drop=ratio,
                                           longeval_change=change))
        measures[measure] = PublishedOverTime(systems=systems, skipped=skipped)
    return ResultsOverTimeResult(collection=request.collection, snapshots=labels,
                                 measures=measures, tables=data.sources)
