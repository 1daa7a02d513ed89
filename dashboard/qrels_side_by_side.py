"""The persistence page's section on several qrels sets side by side (LongEval 2026: human,
clicks, click-through-rate and LLM judgments of each snapshot): ARP per system faceted by
qrels set, and the rankings' τ-b and Pearson r per pair of snapshots coloured by qrels set.

It asks the persistence and rankings reports for the chosen sets (`qrels` = the sets, as
`tcdb report persistence --qrels A --qrels B` does) and only draws what they return.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data, widgets
from tcdb.dashboard.widgets import plain
from tcdb.errors import TcdbError


def section(url: str, collection: str, chosen: Sequence[str], pivot: str, measure: str,
            topics: str) -> None:
    """Offer the sets every chosen snapshot has; with two or more picked, draw them."""
    st.subheader("Qrels sets side by side")
    shared = data.qrels_names(url, collection, list(chosen))
    picked = widgets.multiselect("Qrels sets side by side", shared, "qrels_sets",
                                 default=shared, sidebar=False)
    if len(picked) < 2:
        st.caption(f"Pick two or more of the qrels sets every chosen snapshot has "
                   f"({', '.join(plain(s) for s in shared) or 'none'}) to compare them.")
        return
    asked = {"collection": collection, "snapshots": list(chosen), "measures": [measure],
             "qrels": list(picked), "topics": topics, "compute": False}
    try:
        report = data.run_operation(url, "persistence", pivot=pivot, **asked)
        rankings = data.run_operation(url, "ranking_across_snapshots", **asked)
    except TcdbError as exc:
        widgets.show_error(exc)
        return
    _arp_by_set(report, chosen, pivot, measure)
    _taus_by_set(rankings, measure)


def _arp_by_set(report: object, chosen: Sequence[str], pivot: str, measure: str) -> None:
    judges = getattr(report, "qrels_judges", None) or {}
    rows = [{"qrels": name, "judge": judges.get(name, "unknown"), "system": r.system,
             "snapshot": s, "arp": r.arp[s]}
            for name, one in (getattr(report, "qrels_sets", None) or {}).items()
            for r in one.measures[measure].systems for s in chosen]
    arp = pd.DataFrame(rows, columns=["qrels", "judge", "system", "snapshot", "arp"])
    if arp.empty:
        st.caption(f"No system has {plain(measure)} scores on these qrels sets in every chosen "
                   "snapshot.")
        return
    figure = alt.Chart(arp).mark_line(point=True).encode(
        x=alt.X("snapshot:N", sort=list(chosen), title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("arp:Q", title=f"ARP ({measure})"),
        color=alt.Color("system:N", scale=alt.Scale(scheme="category10")),
        strokeDash=alt.condition(alt.datum.system == pivot, alt.value([6, 3]), alt.value([1, 0])),
        tooltip=["qrels", "judge", "system", "snapshot",
                 alt.Tooltip("arp:Q", title="ARP", format=".4f")],
    ).properties(height=charts.HEIGHT, width=220).facet(  # two a row: 1024 px keep the legend
        facet=alt.Facet("qrels:N", title="qrels set", sort=list(arp["qrels"].unique())),
        columns=2)
    widgets.chart(figure, arp, f"arp-by-qrels-{measure}",
                  caption=f"How to read this: one panel per qrels set (named above it), each "
                  f"system's mean {plain(measure)} (ARP) in every snapshot on that set; the pivot "
                  f"{plain(pivot)} is dashed. Panels that disagree say the judgments disagree. "
                  "Judged by: " + "; ".join(f"{plain(n)}: {plain(k)}" for n, k in judges.items())
                  + ".")


def _taus_by_set(rankings: object, measure: str) -> None:
    rows = [{"qrels": name, "pair": f"{p.earlier} → {p.later}", "τ-b": p.tau_b,
             "Pearson r": p.pearson_r, "systems": p.n_systems, "topics": p.n_topics}
            for name, one in (getattr(rankings, "qrels_sets", None) or {}).items()
            for p in one.measures[measure].pairs]
    pairs = pd.DataFrame(rows, columns=["qrels", "pair", "τ-b", "Pearson r", "systems",
                                        "topics"])
    if pairs.empty or pairs["τ-b"].isna().all():
        st.caption("Fewer than two systems to rank on these qrels sets.")
        return
    order = list(pairs["qrels"].unique())
    figure = alt.Chart(pairs).mark_bar().encode(
        x=alt.X("pair:N", title="pair of snapshots", sort=list(pairs["pair"].unique()),
                axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("qrels:N", sort=order),
        y=alt.Y("τ-b:Q", title=f"Kendall τ-b ({measure})", scale=alt.Scale(domain=[-1, 1])),
        color=alt.Color("qrels:N", title="qrels set", sort=order),
        tooltip=["qrels", "pair", alt.Tooltip("τ-b:Q", format=".4f"),
                 alt.Tooltip("Pearson r:Q", format=".4f"), "systems:Q", "topics:Q"],
    ).properties(height=charts.HEIGHT)
    widgets.chart(figure, pairs, f"rankings-by-qrels-{measure}",
                  caption=f"How to read this: per pair of snapshots, Kendall's τ-b between the "
                  f"system rankings by mean {plain(measure)}, one bar per qrels set (colour); 1: "
                  "the same ranking, 0: unrelated. The tooltip adds Pearson r.")
