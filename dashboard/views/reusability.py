"""Reusability: runs ranked under qrels A and B (τ shown), per-topic τ, new relevant vs.
unjudged retrieved per run (the TREC-8 re-judging study's scatter), leave-out qrels."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError
from tcdb.vocabulary import TAU_FIGURES, tau_legend

collection, url = widgets.collection_page("Reusability")
all_sets = data.qrels_sets(url, collection)
per_snapshot = all_sets.groupby("snapshot")["name"].nunique()
pairs = [s for s in per_snapshot.index if per_snapshot[s] >= 2]
expanded = set(all_sets.loc[all_sets["kind"] == "expanded", "snapshot"])
# Open on a snapshot with something to compare: the last with an expanded set, else with two.
snapshot = widgets.pick_snapshot(collection, prefer=[s for s in pairs if s in expanded] or pairs)
if snapshot is None:
    st.stop()
sets = all_sets[all_sets["snapshot"] == snapshot]
names = sorted(sets["name"], key=lambda n: n != "original")
if len(names) < 2:
    where = (f" Snapshot(s) with two: {', '.join(f'**{plain(s)}**' for s in pairs)}." if pairs
             else "")
    st.info(f"Reusability compares two qrels sets of one snapshot; **{plain(snapshot)}** has "
            f"{len(names)}.{where} Build a pool (`tcdb pool build`), import its judgments and "
            "expand the original qrels (`tcdb pool import-judgments … --expand original`).")
    st.stop()
qrels_a = widgets.select("Qrels A (original)", names, "qrels", default="original")
expanded_here = sets.loc[sets["kind"] == "expanded", "name"].tolist()
qrels_b = widgets.select("Qrels B (vs)", [n for n in names if n != qrels_a], "vs",
                         default=expanded_here[0] if expanded_here else None)
measure = widgets.pick_measure()
depth = widgets.number("Top K for unjudged counts", "depth", 100)
if not (qrels_a and qrels_b and measure):
    st.stop()
try:
    result = data.run_operation(url, "reusability", collection=collection, snapshot=snapshot,
                                qrels=qrels_a, vs=qrels_b, measures=[measure], depth=depth,
                                compute=False)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
(report,) = result.measures.values()  # the one measure asked for
if report.error is not None:
    st.info(f"Fewer than two runs have {plain(measure)} scores under both {code(qrels_a)} and "
            f"{code(qrels_b)}. Evaluate with "
            f"{code(f'tcdb evaluate {collection} {snapshot} --qrels {qrels_b}')}.")
    st.stop()
if report.skipped:
    st.caption("Left out (scored under only one of the two): "
               + ", ".join(plain(tag) for tag in report.skipped))

runs = pd.DataFrame([r.model_dump() for r in report.runs])
# The τ figures under the names the CLI prints (TAU_FIGURES), its legend line as a caption.
taus = {key: widgets.fmt(getattr(report, key)) for key in TAU_FIGURES}
TAU_HELP = {"kendall_tau": "Kendall's τ between the run rankings under A and under B, over "
            "the pairs of runs ordered in both (tied pairs left out: Goodman–Kruskal γ). 1: "
            "the same order; ≥ 0.9 is usually read as equivalent",
            "tau_b": "Kendall's τ-b (scipy.stats.kendalltau: ties counted)",
            "tau_ap": f"AP correlation (Yilmaz et al. 2008), the ranking under {plain(qrels_b)} "
            "taken as the truth: swaps at the top weigh more"}
cols = st.columns(5)
for col, (key, name) in zip(cols[:3], TAU_FIGURES.items(), strict=True):
    col.metric(name, taus[key], help=TAU_HELP[key])
cols[3].metric("Runs", f"{report.n_runs:,}")
cols[4].metric("Topics", f"{report.n_topics or 0:,}")
st.caption(plain(tau_legend(f"the ranking under {qrels_b}")))

# Names from the data as literal text in captions and help (`plain`): no Markdown, no link.
_measure, _a, _b = plain(measure), plain(qrels_a), plain(qrels_b)
st.subheader(f"Mean {_measure}: {_a} vs {_b}")
RUN_COLUMNS = {
    "run": c.text("run"), "score_a": c.score(f"{measure} A", f"Mean {_measure} under {_a}"),
    "rank_a": c.count("rank A"),
    "score_b": c.score(f"{measure} B", f"Mean {_measure} under {_b}"),
    "rank_b": c.count("rank B"),
    "rank_change": c.signed("rank Δ", "Places gained under B (+) or lost (−)"),
    "unjudged_top_k": c.count(f"unjudged @{depth}", f"Top-{depth} documents {_a} did not "
                              "judge"),
    "new_relevant_top_k": c.count(f"new relevant @{depth}", f"Of those, relevant in {_b}"),
}
moved = runs  # each run's `moved` (climbed, same, fell) comes with the report
lo = float(min(runs["score_a"].min(), runs["score_b"].min()))
hi = float(max(runs["score_a"].max(), runs["score_b"].max()))
diagonal = pd.DataFrame({"score_a": [lo, hi], "score_b": [lo, hi]})
colour = alt.Color("moved:N", title="rank under B", scale=alt.Scale(
    domain=["climbed", "same", "fell"], range=["#1e6fd9", "#616161", "#d32f2f"]))
scatter = charts.named_points(
    moved, alt.X("score_a:Q", title=f"{measure} under {qrels_a}", scale=alt.Scale(zero=False)),
    alt.Y("score_b:Q", title=f"{measure} under {qrels_b}", scale=alt.Scale(zero=False)),
    "run", color=colour, by="rank_change",
    tooltip=["run", alt.Tooltip("score_a:Q", title=f"{measure} A", format=".4f"),
             alt.Tooltip("rank_a:Q", title="rank A"),
             alt.Tooltip("score_b:Q", title=f"{measure} B", format=".4f"),
             alt.Tooltip("rank_b:Q", title="rank B"),
             alt.Tooltip("rank_change:Q", title="rank Δ", format="+d")])
line = alt.Chart(diagonal).mark_line(color="gray", strokeDash=[4, 4]).encode(
    x="score_a:Q", y="score_b:Q")
widgets.chart(line + scatter, runs, f"scores-{snapshot}-{qrels_a}-vs-{qrels_b}-{measure}",
              caption=f"How to read this: one point per run; on the dashed diagonal a run "
              f"scores the same under both sets, above it {_b} credits it more. Blue: "
              f"the run climbs in the ranking under {_b}, red: it falls; "
              f"{TAU_FIGURES['kendall_tau']} = {taus['kendall_tau']} between the two rankings.")
widgets.table(runs.drop(columns="moved"), {k: v for k, v in RUN_COLUMNS.items()
                     if k not in ("unjudged_top_k", "new_relevant_top_k")})

PER_TOPIC_TAU = TAU_FIGURES["kendall_tau"]  # what the report computes per topic
st.subheader(f"Per-topic {PER_TOPIC_TAU}")
topic_tau = pd.DataFrame([t.model_dump() for t in report.tau_per_topic],
                         columns=["topic", "tau", "n_runs"]).dropna(subset=["tau"])
threshold = result.threshold
below = len(report.per_topic_tau.below_threshold) if report.per_topic_tau else 0
ranked = topic_tau.sort_values("tau")
figure = alt.Chart(topic_tau).mark_bar().encode(
    x=alt.X("topic:N", sort=ranked["topic"].tolist(),
            axis=charts.topic_axis(len(topic_tau), "lowest τ first")),
    y=alt.Y("tau:Q", title=PER_TOPIC_TAU, scale=alt.Scale(
        domain=[min(0.0, float(topic_tau["tau"].min()) if len(topic_tau) else 0.0), 1.0])),
    color=alt.condition(alt.datum.tau < threshold, alt.value("#e53935"), alt.value("#90a4ae")),
    tooltip=["topic", alt.Tooltip("tau:Q", title=PER_TOPIC_TAU, format=".3f"),
             alt.Tooltip("n_runs:Q", title="runs")],
).properties(height=charts.HEIGHT)
rule = alt.Chart(pd.DataFrame({"tau": [threshold]})).mark_rule(
    strokeDash=[4, 4], color="#37474f").encode(y="tau:Q")
widgets.chart(figure + rule, topic_tau,
              f"per-topic-tau-{snapshot}-{qrels_a}-vs-{qrels_b}-{measure}",
              caption=f"How to read this: {PER_TOPIC_TAU} between the two rankings on each "
              "topic alone; "
              f"{below:,} of {len(topic_tau):,} topics fall below {threshold:g} (red, under "
              "the dashed line), the usual bar for 'the same ranking'.")

st.subheader(f"New relevant vs unjudged in the top {depth}")
counts = moved.dropna(subset=["unjudged_top_k"])
if counts.empty:
    st.caption("No run has stored entries (imported scores only): nothing to count.")
else:
    order = counts.sort_values(["new_relevant_top_k", "unjudged_top_k"],
                               ascending=False)["run"].tolist()
    tooltip: list[Any] = ["run", alt.Tooltip("n_retrieved:Q", title="retrieved", format=",d"),
               alt.Tooltip("unjudged_top_k:Q", title=f"unjudged @{depth}", format=",d"),
               alt.Tooltip("new_relevant_top_k:Q", title=f"new relevant @{depth}", format=",d"),
               alt.Tooltip("rank_change:Q", title="rank Δ", format="+d")]
    base = alt.Chart(counts).encode(y=alt.Y("run:N", sort=order, title=None,
                                            axis=alt.Axis(labelLimit=0, labelFontSize=12)),
                                    tooltip=tooltip)
    unjudged = base.mark_bar(color="#cfd8dc").encode(
        x=alt.X("unjudged_top_k:Q", title=f"documents in its top {depth}, summed over topics",
                axis=alt.Axis(format=",d")))
    relevant = base.mark_bar(color="#1e6fd9").encode(x="new_relevant_top_k:Q")
    said = base.mark_text(align="left", dx=4, fontSize=11, color="#263238").encode(
        x="unjudged_top_k:Q", text=alt.Text("new_relevant_top_k:Q", format=",d"))
    figure = (unjudged + relevant + said).properties(height=26 * len(counts) + 60)
    widgets.chart(figure, counts[["run", "n_retrieved", "unjudged_top_k", "new_relevant_top_k",
                                  "rank_change"]],
                  f"new-relevant-{snapshot}-{qrels_a}-vs-{qrels_b}-top{depth}",
                  caption=f"How to read this: per run, the grey bar counts its top-{depth} "
                  f"documents {_a} never judged, the blue part (number at the end) those "
                  f"of them {_b} judges relevant. A long blue bar: the original pool "
                  "missed what this run found, and under-scored it.")
    widgets.table(counts, {k: RUN_COLUMNS[k] for k in (
        "run", "unjudged_top_k", "new_relevant_top_k", "rank_change")})

st.subheader("Leave-out (Zobel's uniques test)")
st.caption("Would a group's runs score the same had the group not contributed to the pools? "
           f"Each group's runs are scored on {code(qrels_a)} without the relevant documents only "
           "that group found in its top K, and re-ranked among the other runs (nothing is stored).")
by = widgets.select("Leave out each", ["group", "run-type", "category"], "by", default="group",
                    sidebar=False) or "group"
pool_depth = widgets.number("Pool depth K of the contributing runs", "pool_depth", depth,
                            sidebar=False)
if not widgets.toggle("Compute the leave-out", "leave_out"):
    st.stop()
try:
    (left,) = data.run_operation(  # the one measure asked for
        url, "leave_out", collection=collection, snapshot=snapshot, qrels=qrels_a,
        depth=int(pool_depth), by=by, measures=[measure], compute=False).measures.values()
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
for group in left.groups:
    st.markdown(f"**without {plain(group.group)}** — {group.n_removed:,} relevant removed · "
                + ", ".join(f"{plain(name)} = {widgets.fmt(getattr(group, key))}"
                            for key, name in TAU_FIGURES.items())
                + f" · largest drop {group.max_drop} place(s)")
    widgets.table(pd.DataFrame([r.model_dump() for r in group.runs], columns=[
        "run", "score_full", "score_reduced", "rank_full", "rank_reduced", "rank_change"]), {
        "run": c.text("run"), "score_full": c.score(f"{measure}, all qrels"),
        "score_reduced": c.score(f"{measure}, without"), "rank_full": c.count("rank"),
        "rank_reduced": c.count("rank without"),
        "rank_change": c.signed("rank Δ", "Places gained (+) or lost (−) without the group's "
                                "unique relevant documents")})
if left.groups:
    st.caption(plain(tau_legend(f"the ranking under {qrels_a}")))
