"""Reusability: runs ranked under qrels A and B (τ shown), per-topic τ, new relevant vs.
unjudged retrieved per run (the TREC-8 re-judging study's scatter), leave-out qrels."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import data, widgets
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Reusability")
snapshot = widgets.pick_snapshot(collection)
if snapshot is None:
    st.stop()
sets = data.qrels_sets(url, collection)
sets = sets[sets["snapshot"] == snapshot]
names = sorted(sets["name"], key=lambda n: n != "original")
if len(names) < 2:
    st.info(f"Reusability compares two qrels sets of one snapshot; **{snapshot}** has "
            f"{len(names)}. Build a pool (`tcdb pool build`), import its judgments and expand "
            "the original qrels (`tcdb pool expand`).")
    st.stop()
qrels_a = widgets.select("Qrels A (original)", names, "qrels", default="original")
expanded = sets.loc[sets["kind"] == "expanded", "name"].tolist()
qrels_b = widgets.select("Qrels B (vs)", [n for n in names if n != qrels_a], "vs",
                         default=expanded[0] if expanded else None)
measure = widgets.pick_measure()
depth = widgets.number("Top K for unjudged counts", "depth", 100)
if not (qrels_a and qrels_b and measure):
    st.stop()


def show_pair(a: str, b: str) -> dict | None:
    try:
        report = data.reusability(url, collection, snapshot, a, b, measure, depth)
    except TcdbError as exc:
        widgets.show_error(exc)
        return None
    if "error" in report:
        st.info(f"Fewer than two runs have {measure} scores under both `{a}` and `{b}`. "
                f"Evaluate with `tcdb evaluate {collection} {snapshot} --qrels {b}`.")
        return None
    if report["missing"]:
        st.caption("Left out (scored under only one of the two): " + ", ".join(report["missing"]))
    return report


report = show_pair(qrels_a, qrels_b)
if report is None:
    st.stop()
runs = report["runs"]
taus = {name: widgets.fmt(report[key]) for name, key in
        (("τ", "kendall_tau"), ("τ-b", "tau_b"), ("τ_AP", "tau_ap"))}
cols = st.columns(5)
cols[0].metric("Kendall's τ", taus["τ"])
cols[1].metric("τ-b", taus["τ-b"])
cols[2].metric("τ_AP", taus["τ_AP"])
cols[3].metric("Runs", report["n_runs"])
cols[4].metric("Topics", report["n_topics"])

st.subheader(f"Mean {measure}: {qrels_a} vs {qrels_b}")
lo = float(min(runs["score_a"].min(), runs["score_b"].min()))
hi = float(max(runs["score_a"].max(), runs["score_b"].max()))
diagonal = pd.DataFrame({"score_a": [lo, hi], "score_b": [lo, hi]})
scatter = alt.Chart(runs).transform_calculate(
    moved="datum.rank_change > 0 ? 'up' : (datum.rank_change < 0 ? 'down' : 'same')",
).mark_circle(size=70).encode(
    x=alt.X("score_a:Q", title=f"{measure} under {qrels_a}", scale=alt.Scale(zero=False)),
    y=alt.Y("score_b:Q", title=f"{measure} under {qrels_b}", scale=alt.Scale(zero=False)),
    color=alt.Color("moved:N", title="under B", scale=alt.Scale(
        domain=["up", "same", "down"], range=["#1e88e5", "#757575", "#e53935"])),
    tooltip=["tag", alt.Tooltip("score_a:Q", format=".4f"), "rank_a",
             alt.Tooltip("score_b:Q", format=".4f"), "rank_b", "rank_change"],
).properties(title=", ".join(f"{k} = {v}" for k, v in taus.items()))
line = alt.Chart(diagonal).mark_line(color="gray", strokeDash=[4, 4]).encode(
    x="score_a:Q", y="score_b:Q")
widgets.chart(line + scatter, runs, f"scores-{snapshot}-{qrels_a}-vs-{qrels_b}-{measure}",
              caption="One point per run; off the diagonal = scored differently, colour = "
              "whether its rank moved under B.")
widgets.table(runs)

st.subheader("Per-topic τ")
topic_tau = report["per_topic_tau"]
figure = alt.Chart(topic_tau.dropna(subset=["tau"])).mark_bar().encode(
    x=alt.X("topic:N", sort=topic_tau["topic"].tolist()),
    y=alt.Y("tau:Q", title="τ", scale=alt.Scale(domain=[-1, 1])),
    color=alt.condition(alt.datum.tau < 0.9, alt.value("#e53935"), alt.value("#90a4ae")),
    tooltip=["topic", alt.Tooltip("tau:Q", format=".3f"), "n_runs"],
)
widgets.chart(figure, topic_tau, f"per-topic-tau-{snapshot}-{qrels_a}-vs-{qrels_b}-{measure}",
              caption="Red: below 0.9, the usual threshold for 'the same ranking'.")

st.subheader(f"New relevant vs unjudged in the top {depth}")
counts = runs.dropna(subset=["unjudged_top_k"])
if counts.empty:
    st.caption("No run has stored entries (imported scores only): nothing to count.")
else:
    counts = counts[["tag", "n_retrieved", "unjudged_top_k", "new_relevant_top_k",
                     "rank_change"]]
    figure = alt.Chart(counts).mark_circle(size=70).encode(
        x=alt.X("unjudged_top_k:Q", title=f"top-{depth} documents unjudged in {qrels_a}"),
        y=alt.Y("new_relevant_top_k:Q", title=f"of those, relevant in {qrels_b}"),
        tooltip=["tag", "n_retrieved", "unjudged_top_k", "new_relevant_top_k",
                 "rank_change"],
    )
    widgets.chart(figure, counts,
                  f"new-relevant-{snapshot}-{qrels_a}-vs-{qrels_b}-top{depth}",
                  caption="Runs high on both axes were treated unfairly by the original pool.")

st.subheader("Leave-out")
derived = sets[(sets["kind"] == "derived") & sets["parent"].notna()]
if derived.empty:
    st.caption("No derived qrels sets in this snapshot. `tcdb report leave-out` derives one per "
               "group of contributing runs (Zobel's uniques test).")
else:
    name = widgets.select("Derived qrels set", derived["name"].tolist(), "derived",
                          sidebar=False)
    parent = derived.loc[derived["name"] == name, "parent"].iloc[0]
    try:
        left = data.leave_out(url, collection, snapshot, parent, name, measure)
    except TcdbError as exc:
        widgets.show_error(exc)
        st.stop()
    if left["runs"].empty:
        st.caption(f"No {measure} scores under `{name}`: run `tcdb report leave-out` with "
                   f"--measure {measure}.")
    else:
        st.markdown(f"`{parent}` → `{name}`: the left-out group's runs scored on the reduced "
                    f"qrels, every other run on the full set. τ = "
                    f"**{widgets.fmt(left['kendall_tau'])}**, τ-b = {widgets.fmt(left['tau_b'])}"
                    f", τ_AP = {widgets.fmt(left['tau_ap'])}")
        widgets.table(left["runs"])
