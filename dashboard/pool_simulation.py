"""The Pools page's simulation: `tcdb pool simulate` on demand, its rows as a frame, and the
chart of τ against the budget per strategy. Computes nothing of its own: the report does."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts

TTL = 600  # a simulation takes seconds to minutes: keep it ten minutes


@st.cache_data(ttl=TTL, show_spinner="simulating pools …")
def simulate(url: str, collection: str, snapshot: str, qrels: str, budgets: str,
             strategies: tuple[str, ...], per_topic: bool) -> pd.DataFrame:
    """`tcdb pool simulate` (reads only), one row per (strategy, budget); `budgets` as typed
    (a comma list: the operation reads it)."""
    from tcdb.dashboard.data import run_operation

    frame: pd.DataFrame = run_operation(
        url, "pool_simulation", collection=collection, snapshot=snapshot, qrels=qrels,
        budgets=budgets, strategies=list(strategies), per_topic=per_topic).to_frame()
    return frame


def tau_chart(frame: pd.DataFrame, strategies: Sequence[str]) -> alt.LayerChart:
    """τ-b (solid) and leave-one-group-out τ-b (dashed) against the budget, one colour per
    strategy."""
    long = frame.melt(id_vars=["strategy", "budget"], value_vars=["tau_b", "logo_tau_b"],
                      var_name="figure", value_name="tau").dropna(subset=["tau"])
    long["figure"] = long["figure"].map({"tau_b": "τ-b, all runs pooled",
                                         "logo_tau_b": "τ-b, leave one group out"})
    budgets = sorted(long["budget"].unique().tolist())
    # The axis names the budgets simulated (a log axis would name 300, 500, … instead); the
    # figure legend draws a line, solid or dashed (a dot would look the same for both); one
    # hue per strategy (no light and dark pair to mistake for the solid/dashed pair).
    x = alt.X("budget:Q", title="budget (documents judged)",
              scale=alt.Scale(type="log", nice=False,
                              domain=[min(budgets) / 1.2, max(budgets) * 1.2]),
              axis=alt.Axis(values=budgets, format=",d", grid=False))
    y = alt.Y("tau:Q", title="Kendall's τ-b vs the complete qrels", scale=alt.Scale(zero=False))
    color = alt.Color("strategy:N", title="strategy", sort=list(strategies),
                      scale=alt.Scale(scheme="tableau10"))
    tooltip = ["strategy:N", alt.Tooltip("budget:Q", format=",d"), "figure:N",
               alt.Tooltip("tau:Q", format=".3f")]
    base = alt.Chart(long)
    # the dots in a layer of their own: a line mark with points gives the dash legend dots
    lines = base.mark_line(strokeWidth=2).encode(
        x=x, y=y, color=color, tooltip=tooltip, strokeDash=alt.StrokeDash(
            "figure:N", title="figure", legend=alt.Legend(symbolStrokeColor="#37474f",
                                                          symbolSize=400)))
    dots = base.mark_circle(size=40, opacity=1).encode(x=x, y=y, color=color, tooltip=tooltip,
                                                       detail="figure:N")
    return (lines + dots).properties(height=charts.HEIGHT)
