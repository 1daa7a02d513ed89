"""Compare runs: pairwise significance table and, for one-relevant-per-topic qrels, the outcome
breakdown."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import data, widgets
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Compare runs")
snapshot = widgets.pick_snapshot(collection)
if snapshot is None:
    st.stop()
tags = data.runs(url, collection, snapshot)["run"].tolist()
if len(tags) < 2:
    st.info(f"Snapshot **{snapshot}** has {len(tags)} run(s); comparing needs two. Import "
            "runs with `tcdb run import`.")
    st.stop()
qrels = widgets.pick_qrels(collection, [snapshot])
measure = widgets.pick_measure()
chosen = widgets.multiselect("Runs", tags, "runs", default=tags[:3])
correction = widgets.select("Correction", ["holm", "bonferroni", "none"], "correction")
k = widgets.number("Outcome cut-off k", "k", 10)
if not (qrels and measure and correction):
    st.stop()
if len(chosen) < 2:
    st.info("Choose at least two runs.")
    st.stop()
try:
    report = data.compare(url, collection, snapshot, qrels, tuple(chosen), measure, correction, k)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()

st.caption(f"{measure} on qrels `{qrels}` of {snapshot}, {report['n_topics']} topics, "
           f"{correction} correction across the pairs.")
means = pd.DataFrame(report["runs"])
figure = alt.Chart(means).mark_bar().encode(
    x=alt.X("mean:Q", title=f"mean {measure}"),
    y=alt.Y("run:N", sort="-x", title=None),
    tooltip=["run", "system", alt.Tooltip("mean:Q", format=".4f")],
)
widgets.chart(figure, means, f"means-{snapshot}-{measure}")

st.subheader("Significance")
pairs = pd.DataFrame(report["pairs"])
p_columns = {c: st.column_config.NumberColumn(c, format="%.4f")
             for c in pairs.columns if c.startswith("p_")}
widgets.table(pairs, **p_columns)

st.subheader("Outcome breakdown")
outcomes = report["outcomes"]
if not outcomes["applicable"]:
    st.caption(f"Not applicable: {outcomes['reason']}.")
else:
    frame = data.outcome_frame(report)
    order = ["both", "only_a", "only_b", "neither"]
    figure = alt.Chart(frame).mark_bar().encode(
        x=alt.X("share:Q", stack="normalize", axis=alt.Axis(format="%"), title="topics"),
        y=alt.Y("pair:N", title=None),
        color=alt.Color("outcome:N", sort=order),
        tooltip=["pair", "outcome", "topics", alt.Tooltip("share:Q", format=".1%")],
    )
    widgets.chart(figure, frame, f"outcomes-{snapshot}-top{outcomes['k']}",
                  caption=f"Where each run ranks the one relevant document: in the top "
                  f"{outcomes['k']} of both, only one, or neither.")
    rows = [{"pair": f"{p['run_a']} vs {p['run_b']}", **p["both"],
             "n_only_a": p["only_one"]["n_only_a"], "n_only_b": p["only_one"]["n_only_b"],
             "p_binomial": p["only_one"]["p_value"]} for p in outcomes["pairs"]]
    widgets.table(pd.DataFrame(rows))
