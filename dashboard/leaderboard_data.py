"""Cached loader of the Compare page's leaderboard section: the `leaderboard` operation.

Kept apart from `tcdb.dashboard.data` (at its size limit). Like every loader it calls the
operation, with `compute=False` (the dashboard never writes), and keeps its result `data.TTL`
seconds; the chain, each run's kind and the SOTA step line are the result's own.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from tcdb.dashboard.data import TTL
from tcdb.reports.leaderboard import KINDS, LeaderboardResult

__all__ = ["KINDS", "leaderboard", "leaderboard_frame"]


@st.cache_data(ttl=TTL, show_spinner="Testing each new state of the art …")
def leaderboard(url: str, collection: str, snapshot: str, qrels: str, measure: str, test: str,
                correction: str) -> LeaderboardResult:
    """`tcdb report leaderboard` over every run of the snapshot."""
    from tcdb.operations import Database, get_operation

    result: LeaderboardResult = get_operation("leaderboard").run(
        Database(url), collection=collection, snapshot=snapshot, measure=measure, qrels=qrels,
        test=test, correction=correction, compute=False)
    return result


def leaderboard_frame(report: LeaderboardResult) -> pd.DataFrame:
    """One row per run: `run, submitted, mean, state_of_the_art, kind, vs, p` for the chart."""
    frame = report.to_frame()[["run", "submitted", "mean", "state_of_the_art", "kind",
                               "previous_sota", "p_corrected"]]
    frame = frame.rename(columns={"previous_sota": "vs", "p_corrected": "p"})
    frame["submitted"] = pd.to_datetime(frame["submitted"])
    return frame
