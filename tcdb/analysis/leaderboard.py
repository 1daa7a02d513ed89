"""A leaderboard over time: the state-of-the-art (SOTA) chain and whether each step was significant.

Runs are taken in submission order. A run is a new SOTA when its mean beats the mean of every
run submitted strictly earlier; means are compared after `tcdb.analysis.means` rounding, so
mathematically equal means tie, and a tie is not a new SOTA. The first run (or runs, on the first
date) is the first SOTA. Runs submitted the same day are not earlier than one another: each
that beats everything before that day is a new SOTA.

Each new SOTA is tested, with the chosen paired test (`tcdb.analysis.significance.p_value`),
against every earlier SOTA (strictly earlier date) — one family per new entry, corrected within
it — and the previous SOTA is the best of them (the state of the art when it was submitted). A
step is significant when the corrected p of the comparison with the previous SOTA is below α;
"significant vs all" when every comparison of its family is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from tcdb.analysis import json_float
from tcdb.analysis.families import submission_order
from tcdb.analysis.means import trec_eval_mean
from tcdb.vocabulary import Correction

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["sota_chain"]


def sota_chain(
    wide: pd.DataFrame,
    submitted: Mapping[str, dt.date | None],
    test: str = "t",
    alpha: float = 0.05,
    correction: Correction | str = Correction.holm,
    *,
    permutations: int = 10_000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per run (columns of a topic × run frame), in submission order.

    Row: `run, submitted, mean, best_before` (the best mean of the runs submitted earlier, None
    for none), `is_sota`, and for a SOTA after the first: `previous_sota, p, p_corrected,
    significant, significant_vs_all` and `family`: [{run, mean_diff, p, p_corrected,
    significant}] over every earlier SOTA. Other rows carry None there.
    """
    from tcdb.analysis.significance import correct, p_value

    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    scores = wide.astype(float).fillna(0.0)
    order = submission_order({run: submitted[run] for run in scores.columns})
    means = {run: trec_eval_mean(scores[run].tolist()) for run in order}
    sotas: list[str] = []
    rows = []
    for run in order:
        date = submitted[run]
        earlier = [o for o in order if submitted[o] < date]  # type: ignore[operator]
        best = max((means[o] for o in earlier), default=None)
        row: dict[str, Any] = {
            "run": run, "submitted": date.isoformat() if date else None, "mean": means[run],
            "best_before": best, "is_sota": best is None or means[run] > best,
            "previous_sota": None, "p": None, "p_corrected": None, "significant": None,
            "significant_vs_all": None, "family": None}
        before = [s for s in sotas if submitted[s] < date]  # type: ignore[operator]
        if row["is_sota"] and before:
            x = scores[run].to_numpy()
            raw = [p_value(test, x, scores[s].to_numpy(), permutations, seed) for s in before]
            adjusted = correct(raw, correction)
            family = [{"run": s, "mean_diff": json_float(float(np.mean(x - scores[s]))),
                       "p": json_float(p), "p_corrected": json_float(q),
                       "significant": bool(q < alpha)}  # NaN compares False
                      for s, p, q in zip(before, raw, adjusted, strict=True)]
            previous = max(before, key=lambda s: means[s])  # first of equal bests
            step = family[before.index(previous)]
            row.update(previous_sota=previous, p=step["p"], p_corrected=step["p_corrected"],
                       significant=step["significant"],
                       significant_vs_all=all(f["significant"] for f in family),
                       family=family)
        if row["is_sota"]:
            sotas.append(run)
        rows.append(row)
    return rows
