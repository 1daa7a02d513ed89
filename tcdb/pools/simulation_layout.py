"""How a pool simulation's work divides and how its rows come together again: the units
(a strategy's pooled sets over all runs, or without each group of a part of the groups, and
the complete qrels), the `Layout` that names them, and `assemble_units`, which turns every unit's
means into rows of τ against the complete ranking. Pure: the units are made and scored in
`tcdb.pools.simulation` — in this process, local worker processes or Dask workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import pandas as pd
from pydantic import BaseModel

from tcdb.analysis.rank_correlation import tau_ap, tau_b
from tcdb.pools.strategies import Strategy, describe


class SimulationRow(BaseModel):
    """One strategy at one budget: a row of `SimulationResult`."""

    strategy: str
    budget: int
    n_judged: int
    relevant_found: int
    relevant_fraction: float  # of the relevant documents in the complete qrels
    tau_b: float | None
    tau_ap: float | None
    logo_tau_b: float | None
    logo_tau_ap: float | None


# A unit of a simulation's work: (k, None) the k-th strategy's pooled sets over all runs,
# (k, p) its sets without each left-out group of the p-th part of the groups; `COMPLETE` the
# complete qrels, scored as one more set (the ranking every pooled one is measured against).
Unit = tuple[int, int | None]
COMPLETE: Unit = (-1, None)


class Complete(NamedTuple):
    """The complete qrels' side of a simulation: every run's mean on them, the topics they
    judge and the relevant documents in them."""

    means: dict[str, float]
    n_topics: int
    relevant_total: int


# Per strategy: each budget's cut (topic → documents judged), the means of all runs and the
# relevant documents found at each budget, and per left-out group its runs' means at each.
StrategyMeans = tuple[list[dict[str, int]], list[tuple[dict[str, float], int]],
                      list[list[dict[str, float]]]]


@dataclass(frozen=True)
class Layout:
    """How a simulation's work divides: the groups left out in turn (their runs' places in
    `run_tags`), those groups in `parts` parts, one unit of work per strategy and part."""

    left_out: list[list[int]]
    parts: int  # 0 without leave-one-group-out

    @classmethod
    def of(cls, run_tags: Sequence[str], groups: Mapping[str, str], leave_out: bool,
           n_parts: int) -> Layout:
        by_group: dict[str, list[int]] = {}
        for i, tag in enumerate(run_tags):
            by_group.setdefault(groups.get(tag) or tag, []).append(i)
        left_out = list(by_group.values())
        logo = leave_out and len(left_out) > 1
        return cls(left_out, max(1, min(n_parts, len(left_out))) if logo else 0)

    @property
    def logo(self) -> bool:
        return self.parts > 0

    def units(self, n_strategies: int) -> list[Unit]:
        """The strategies' units, the biggest (a part of the left-out groups) first."""
        return ([(k, p) for k in range(n_strategies) for p in range(self.parts)]
                + [(k, None) for k in range(n_strategies)])

    def part(self, p: int) -> list[list[int]]:
        return self.left_out[p::self.parts]

    def in_group_order(self, per_part: Sequence[Sequence[Any]]) -> list[Any]:
        """What each part gave per group, back in the groups' order."""
        result: list[Any] = [None] * len(self.left_out)
        for p in range(self.parts):
            result[p::self.parts] = per_part[p]
        return result if self.logo else []


def assemble_units(strategies: Sequence[Strategy], budgets: Sequence[int],
                   run_tags: Sequence[str], layout: Layout, done: Mapping[Unit, Any]
                   ) -> tuple[list[SimulationRow], dict[str, Any]]:
    """The rows of a simulation from its units' results (`simulate_units`, anywhere)."""
    planned: list[StrategyMeans] = []
    for k in range(len(strategies)):
        cuts, main = done[(k, None)]
        left = layout.in_group_order([done[(k, p)] for p in range(layout.parts)])
        planned.append((cuts, main, left))
    return _assemble(strategies, budgets, run_tags, layout, done[COMPLETE], planned)


def _assemble(strategies: Sequence[Strategy], budgets: Sequence[int], run_tags: Sequence[str],
             layout: Layout, complete: Complete, planned: Sequence[StrategyMeans]
             ) -> tuple[list[SimulationRow], dict[str, Any]]:
    """Rows per (strategy, budget) from each strategy's means: τ against the complete
    qrels' ranking, and the leave-one-group-out τ of the means mixed from each group's runs
    scored without that group's pool contribution."""
    full, total_relevant = complete.means, complete.relevant_total
    rows: list[SimulationRow] = []
    all_means: dict[tuple[str, int], dict[str, float]] = {}
    all_logo: dict[tuple[str, int], dict[str, float]] = {}
    for strategy, (cuts, main, left) in zip(strategies, planned, strict=True):
        for k, b in enumerate(budgets):
            means, found = main[k]
            t_b, t_ap = _taus(full, means)
            mixed = dict(means)
            for per_budget in left:
                mixed.update(per_budget[k])
            l_b, l_ap = _taus(full, mixed) if layout.logo else (None, None)
            all_means[(describe(strategy), b)], all_logo[(describe(strategy), b)] = means, mixed
            rows.append(SimulationRow(
                strategy=describe(strategy), budget=b, n_judged=sum(cuts[k].values()),
                relevant_found=found,
                relevant_fraction=found / total_relevant if total_relevant else 0.0,
                tau_b=t_b, tau_ap=t_ap, logo_tau_b=l_b, logo_tau_ap=l_ap))
    context = {"n_runs": len(run_tags), "n_groups": len(layout.left_out),
               "n_topics": complete.n_topics, "relevant_total": total_relevant, "full_means": full,
               "means": all_means, "logo_means": all_logo}
    return rows, context


def _taus(truth: Mapping[str, float], estimate: Mapping[str, float]
          ) -> tuple[float | None, float | None]:
    if len(truth) < 2:
        return None, None
    a = pd.Series(truth, dtype="float64")
    b = pd.Series(estimate, dtype="float64").reindex(a.index)

    def finite(x: float) -> float | None:
        return None if x != x else x

    return finite(tau_b(a, b)), finite(tau_ap(a, b))
