"""Which pairs of runs one claim rests on: the test families of `tcdb report compare`.

A family is the set of comparisons whose p-values are corrected together. Three designs:

* all pairs (the default): one family, every pair of runs in the order given;
* a baseline: one family, every other run vs the baseline (pair = (run, baseline));
* each run vs every run submitted earlier: one family per run — the comparisons a new entry
  makes against what came before it (pair = (run, earlier run)). "Earlier" is a strictly
  earlier `submitted` date: runs submitted the same day are not compared with each other.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

__all__ = ["Pair", "all_pairs", "baseline_pairs", "earlier_pairs", "submission_order"]

Pair = tuple[str, str, str]  # run A, run B, family label


def all_pairs(runs: Sequence[str]) -> list[Pair]:
    """Every pair (a, b) with a before b in `runs`: one family, `all`."""
    return [(a, b, "all") for i, a in enumerate(runs) for b in runs[i + 1:]]


def baseline_pairs(runs: Sequence[str], baseline: str) -> list[Pair]:
    """(run, baseline) for every other run: one family, named after the baseline."""
    if baseline not in runs:
        raise ValueError(f"the baseline {baseline!r} is not among the runs")
    return [(run, baseline, f"vs {baseline}") for run in runs if run != baseline]


def submission_order(dates: Mapping[str, dt.date | None]) -> list[str]:
    """Runs by submitted date (runs of one day in the order given); every run needs a date."""
    undated = [run for run, date in dates.items() if date is None]
    if undated:
        raise ValueError(f"run(s) without a submitted date: {', '.join(undated)}")
    position = {run: i for i, run in enumerate(dates)}
    return sorted(dates, key=lambda run: (dates[run], position[run]))


def earlier_pairs(dates: Mapping[str, dt.date | None]) -> list[Pair]:
    """(run, earlier) for every run submitted strictly before it; one family per later run,
    named after it. Runs in submission order, earlier ones in submission order."""
    order = submission_order(dates)
    return [(run, earlier, run) for run in order for earlier in order
            if dates[earlier] < dates[run]]  # type: ignore[operator]
