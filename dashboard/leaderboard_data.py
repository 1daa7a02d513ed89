"""Cached loader of the Compare page's leaderboard section: `tcdb report leaderboard` as a frame.

Kept apart from `tcdb.dashboard.data` (at its size limit). Like every loader it calls the core's
report, with `compute=False` (the dashboard never writes), and keeps its result `data.TTL`
seconds.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tcdb.dashboard.data import TTL

KINDS = ["new SOTA, significant", "new SOTA, not significant", "first SOTA", "other run"]


@st.cache_data(ttl=TTL, show_spinner="Testing each new state of the art …")
def leaderboard(url: str, collection: str, snapshot: str, qrels: str, measure: str, test: str,
                correction: str) -> dict[str, Any]:
    """`tcdb report leaderboard` over every run of the snapshot."""
    from tcdb.reports.leaderboard import leaderboard_report

    return dict(leaderboard_report(collection, snapshot, measure, qrels, test,
                                   correction=correction, compute=False))


def leaderboard_frame(report: dict[str, Any]) -> pd.DataFrame:
    """One row per run: `run, submitted, mean, state_of_the_art` (the best mean up to its date:
    the SOTA step line), `kind` (one of `KINDS`), `vs` (the SOTA it replaced) and `p` (its
    corrected p-value)."""
    rows, best = [], None
    for r in report["runs"]:
        best = r["mean"] if best is None else max(best, r["mean"])
        if not r["is_sota"]:
            kind = KINDS[3]
        elif r["previous_sota"] is None:
            kind = KINDS[2]
        else:
            kind = KINDS[0] if r["significant"] else KINDS[1]
        rows.append({"run": r["run"], "submitted": r["submitted"], "mean": r["mean"],
                     "state_of_the_art": best, "kind": kind, "vs": r["previous_sota"],
                     "p": r["p_corrected"]})
    frame = pd.DataFrame(rows, columns=["run", "submitted", "mean", "state_of_the_art", "kind",
                                        "vs", "p"])
    frame["submitted"] = pd.to_datetime(frame["submitted"])
    return frame
