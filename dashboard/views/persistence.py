"""Persistence: ARP per system across snapshots, the RΔ / ER / ΔRI / p table, the ER-vs-ΔRI
scatter with the ideal point (1, 0), per-topic Δ against the pivot for one system."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import data, widgets
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Persistence over time")
labels = data.complete_labels(url, collection)
if len(labels) < 2:
    st.info(f"Persistence compares at least two snapshots; **{collection}** has "
            f"{len(labels)} complete.")
    st.stop()
chosen = widgets.multiselect("Snapshots (first = reference)", labels, "snapshots")
if len(chosen) < 2:
    st.info("Choose at least two snapshots.")
    st.stop()
runs = data.runs(url, collection)
in_all = None
for label in chosen:
    systems = set(runs.loc[runs["snapshot"] == label, "system"])
    in_all = systems if in_all is None else in_all & systems
systems = sorted(in_all or set())
if not systems:
    st.info("No system has runs in every chosen snapshot. Import runs with `tcdb run import`.")
    st.stop()
pivot = widgets.select("Pivot system", systems, "pivot", default="bm25")
qrels = widgets.pick_qrels(collection, chosen)
measure = widgets.pick_measure()
topics = widgets.select("Topics", ["all", "core"], "topics", default="all",
                        help="core: only topics judged in every chosen snapshot")
if not (pivot and qrels and measure and topics):
    st.stop()
try:
    report = data.persistence(url, collection, tuple(chosen), pivot, measure, qrels, topics)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
frames = data.persistence_frames(report, measure)
arp, table = frames["arp"], frames["table"]
if table.empty:
    st.info(f"No system has {measure} scores on qrels `{qrels}` in every chosen snapshot. "
            f"Evaluate with `tcdb evaluate {collection} SNAPSHOT --qrels {qrels} "
            f"--measure {measure}`.")
    if len(frames["skipped"]):
        widgets.table(frames["skipped"])
    st.stop()

n_topics = report["topics"]["n_topics"]
st.caption(f"{measure} on qrels `{qrels}`, pivot **{pivot}**, topics: {topics} ("
           + ", ".join(f"{s}: {n}" for s, n in n_topics.items()) + ")")

st.subheader("ARP per system")
figure = alt.Chart(arp).mark_line(point=True).encode(
    x=alt.X("snapshot:N", sort=chosen, title=None),
    y=alt.Y("arp:Q", title=f"ARP ({measure})"),
    color=alt.Color("system:N"),
    strokeDash=alt.condition(alt.datum.system == pivot, alt.value([6, 3]), alt.value([1, 0])),
    tooltip=["system", "snapshot", alt.Tooltip("arp:Q", format=".4f")],
)
widgets.chart(figure, arp[["system", "snapshot", "arp"]], f"arp-{collection}-{measure}",
              caption="The pivot is dashed.")

st.subheader("RΔ, ER, ΔRI and p against the first snapshot")
widgets.table(table, p=st.column_config.NumberColumn("p", format="%.4f"))

st.subheader("ER vs ΔRI")
points = table[~table["pivot"]].dropna(subset=["ER", "ΔRI"])
ideal = pd.DataFrame({"ER": [1.0], "ΔRI": [0.0], "label": ["ideal (1, 0)"]})
scatter = alt.Chart(points).mark_circle(size=90).encode(
    x=alt.X("ER:Q", title="Effect Ratio (ER)"),
    y=alt.Y("ΔRI:Q", title="Delta Relative Improvement (ΔRI)"),
    color=alt.Color("system:N"),
    shape=alt.Shape("to:N", title="snapshot"),
    tooltip=["system", "to", alt.Tooltip("ER:Q", format=".3f"),
             alt.Tooltip("ΔRI:Q", format=".3f")],
)
marker = alt.Chart(ideal).mark_point(shape="cross", size=300, color="black",
                                     strokeWidth=3).encode(x="ER:Q", y="ΔRI:Q",
                                                           tooltip=["label"])
rule_x = alt.Chart(ideal).mark_rule(strokeDash=[4, 4], color="gray").encode(x="ER:Q")
rule_y = alt.Chart(ideal).mark_rule(strokeDash=[4, 4], color="gray").encode(y="ΔRI:Q")
widgets.chart(rule_x + rule_y + scatter + marker,
              points[["system", "to", "ER", "ΔRI"]], f"er-delta-ri-{collection}-{measure}",
              caption="A persistent system sits at the ideal point (ER 1, ΔRI 0): the same "
              "advantage over the pivot in every snapshot.")

st.subheader("Per-topic Δ against the pivot")
others = [s for s in table["system"].unique() if s != pivot]
system = widgets.select("System for per-topic Δ", others, "system", sidebar=False)
if system:
    try:
        deltas = data.persistence_deltas(url, collection, tuple(chosen), pivot, measure, qrels,
                                         topics)
    except TcdbError as exc:
        widgets.show_error(exc)
        st.stop()
    mine = deltas[(deltas["system"] == system) & (deltas["measure"] == measure)]
    mine = mine[["snapshot", "topic", "topic_key", "score", "pivot_score", "delta"]]
    figure = alt.Chart(mine).mark_bar().encode(
        x=alt.X("topic_key:N", sort="-y", title="topic", axis=alt.Axis(labels=False)),
        y=alt.Y("delta:Q", title=f"Δ {measure} ({system} − {pivot})"),
        color=alt.condition(alt.datum.delta >= 0, alt.value("#43a047"), alt.value("#e53935")),
        row=alt.Row("snapshot:N", sort=chosen, title=None),
        tooltip=["snapshot", "topic", "topic_key", alt.Tooltip("score:Q", format=".4f"),
                 alt.Tooltip("pivot_score:Q", format=".4f"),
                 alt.Tooltip("delta:Q", format=".4f")],
    ).properties(height=140)
    widgets.chart(figure, mine, f"per-topic-delta-{collection}-{system}-{measure}")
if len(frames["skipped"]):
    with st.expander(f"{len(frames['skipped'])} system(s) left out"):
        widgets.table(frames["skipped"])
