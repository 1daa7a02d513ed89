"""Compare runs: means with bootstrap intervals, the pairwise significance matrix as a heat map,
effect sizes, for one-relevant-per-topic qrels the outcome breakdown, and the leaderboard over
time (mean by submission date, the SOTA chain, its significant steps)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data, leaderboard_data, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError
from tcdb.reports.aggregates import figure_said

TESTS = {"paired t-test": "t", "Wilcoxon signed-rank": "wilcoxon", "sign test": "sign",
         "randomisation test": "permutation", "Wilcoxon rank-sum": "ranksum"}
P_BINS = ["p < 0.001", "p < 0.01", "p < 0.05", "p ≥ 0.05"]

collection, url = widgets.collection_page("Compare runs")
snapshot = widgets.pick_snapshot(collection)
if snapshot is None:
    st.stop()
tags = data.runs(url, collection, snapshot)["run"].tolist()
if len(tags) < 2:
    st.info(f"Snapshot **{plain(snapshot)}** has {len(tags)} run(s); comparing needs two. Import "
            "runs with `tcdb run import`.")
    st.stop()
qrels = widgets.pick_qrels(collection, [snapshot])
measure = widgets.pick_measure()
chosen = widgets.multiselect("Runs", tags, "runs", default=tags[:3])
correction = widgets.select("Correction", ["holm", "bonferroni", "bh", "none"], "correction")
test_name = widgets.select("Test", list(TESTS), "test", default="paired t-test") or "paired t-test"
k = widgets.number("Outcome cut-off k", "k", 100)
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
test = TESTS[test_name]
corrected = "uncorrected" if correction == "none" else f"{correction}-corrected"
st.caption(f"{plain(measure)} on qrels {code(qrels)} of {plain(snapshot)}, "
           f"{report.n_topics:,} topics; "
           f"p-values {corrected} across the {len(report.pairs):,} pairs. p: "
           f"{report.tests[f'p_{test}_corrected']}.")

summed = report.aggregate == "sum"  # a count (NumRet…): each run's sum over the topics
st.subheader(f"{'Sums' if summed else 'Means'} with 95 % bootstrap intervals")
means = report.runs_frame()
order = means.sort_values("mean", ascending=False)["run"].tolist()
y = alt.Y("run:N", sort=order, title=None, axis=alt.Axis(labelLimit=0, labelFontSize=12))
base = alt.Chart(means).encode(y=y)
tooltip = ["run", "system", alt.Tooltip("mean:Q", format=".4f"),
           alt.Tooltip("ci_low:Q", title="95 % low", format=".4f"),
           alt.Tooltip("ci_high:Q", title="95 % high", format=".4f")]
bars = base.mark_rule(strokeWidth=3, color="#90a4ae").encode(
    x=alt.X("ci_low:Q", title=figure_said(measure, report.aggregate), scale=alt.Scale(
        zero=False)), x2="ci_high:Q",
    tooltip=tooltip)
points = base.mark_circle(size=120, color="#1f6fb2", opacity=1).encode(x="mean:Q",
                                                                      tooltip=tooltip)
values = base.mark_text(align="left", dx=8, dy=-10, fontSize=12).encode(
    x="mean:Q", text=alt.Text("mean:Q", format=".4f"))
widgets.chart((bars + points + values).properties(height=44 * len(means) + 60), means,
              f"means-{snapshot}-{measure}",
              caption=f"How to read this: the dot is the run's "
              f"{'sum of' if summed else 'mean'} {plain(measure)} over the "
              f"{report.n_topics:,} topics{' (a count, as trec_eval sums it)' if summed else ''}, "
              "the grey bar where 95 % of "
              f"{report.bootstrap:,} bootstrap resamples of the topics (seed {report.seed}) put "
              "it; overlapping "
              "bars are a hint, not a test — see the matrix below.")

st.subheader("Which differences are significant")
pairs = pd.DataFrame([p.model_dump() for p in report.pairs])
p_column = f"p_{test}_corrected"


def p_bin(p: float | None) -> str:
    """The heat map's colour class of a p-value (a missing p is not significant)."""
    if p is None or pd.isna(p):
        return P_BINS[3]
    return next((label for bound, label in zip((1e-3, 1e-2, 5e-2), P_BINS, strict=False)
                 if p < bound), P_BINS[3])


cells = []
for row in pairs.itertuples(index=False):
    p = getattr(row, p_column)
    for a, b, diff in ((row.run_a, row.run_b, row.mean_diff),
                       (row.run_b, row.run_a, -row.mean_diff)):
        cells.append({"row": a, "column": b, "difference": diff, "p": p,
                      "significance": p_bin(p), "p shown": c.format_p(p)})
matrix = pd.DataFrame(cells, columns=["row", "column", "difference", "p", "significance",
                                      "p shown"])
# Names are never cut (labelLimit 0: no limit). The column names slant when they would not fit
# side by side (many runs, or a name wider than its column on a 1024 px projector): each ends
# at its column and rises to the left, over the row names' margin, so none leaves the chart.
name_px = charts.text_px(max(order, key=len))
slanted = len(order) > 5 or name_px > (charts.NARROW_PLOT_PX - name_px) / len(order) - 8
heat = alt.Chart(matrix).encode(
    x=alt.X("column:N", sort=order, title=None, axis=alt.Axis(
        orient="top", labelAngle=40 if slanted else 0, labelAlign="right" if slanted else "center",
        labelLimit=0)),
    y=alt.Y("row:N", sort=order, title=None, axis=alt.Axis(labelLimit=0)))
squares = heat.mark_rect(stroke="white", strokeWidth=2).encode(
    color=alt.Color("significance:N", title=f"{test_name}, {corrected}", sort=P_BINS,
                    scale=alt.Scale(domain=P_BINS,
                                    range=["#08306b", "#2171b5", "#6baed6", "#eceff1"]),
                    legend=alt.Legend(orient="bottom", direction="horizontal")),
    tooltip=[alt.Tooltip("row:N", title="run"), alt.Tooltip("column:N", title="vs"),
             alt.Tooltip("difference:Q", title=f"Δ {measure}", format="+.4f"),
             alt.Tooltip("p shown:N", title="p")])
digits = 4 if len(order) <= 6 else 3  # more runs: narrower cells
labels = heat.mark_text(fontSize=12 if digits == 4 else 10).encode(
    text=alt.Text("difference:Q", format=f"+.{digits}f"),
    color=alt.condition(alt.FieldOneOfPredicate("significance", P_BINS[:2]),
                        alt.value("white"), alt.value("#212121")))
layers = squares + labels if len(order) <= 12 else squares  # beyond, hover for the numbers
row_px = min(72, max(44, 460 // len(order)))
names_px = int(0.65 * name_px) + 10 if slanted else 20  # the slanted names' height: sin 40°
widgets.chart(layers.properties(height=row_px * len(order) + 100 + names_px), matrix,
              f"significance-{snapshot}-{measure}-{test}",
              caption=f"How to read this: each cell is the row's mean {plain(measure)} minus "
              "the "
              f"column's; the darker, the smaller the p of the {test_name} ({corrected}); "
              "grey: not significant at 0.05.")

pairs = pairs.assign(
    ci=[f"[{lo:.4f}, {hi:.4f}]" if lo is not None and hi is not None else c.MISSING
        for lo, hi in zip(pairs["diff_ci_low"], pairs["diff_ci_high"], strict=True)],
    record=[f"{w}–{lost}" for w, lost in zip(pairs["wins"], pairs["losses"], strict=True)])
widgets.table(pairs, {
    "run_a": c.text("run A"), "run_b": c.text("run B"),
    "mean_diff": c.score("A − B", f"Mean {plain(measure)} of A minus B"),
    "ci": c.text("95 % interval", "Bootstrap interval of A − B over topics"),
    "effect_size": c.decimal("d", 2, "Effect size: Cohen's d for paired samples (the mean "
                             "per-topic difference over its standard deviation); 0.2 small, "
                             "0.5 medium, 0.8 large"),
    "p_t_corrected": c.p_value("p t-test", f"Paired t-test, {corrected}"),
    "p_wilcoxon_corrected": c.p_value("p Wilcoxon", f"Wilcoxon signed-rank, {corrected}"),
    "record": c.text("wins–losses", "Topics where A beats B, and where B beats A"),
})

st.subheader("Outcome breakdown")
outcomes = report.outcomes
if not outcomes.applicable:
    st.caption(f"Not applicable: {outcomes.reason}.")
else:
    frame = report.outcome_frame()
    kinds = ["both", "only_a", "only_b", "neither"]
    words = {"both": "both", "only_a": "only A", "only_b": "only B", "neither": "neither"}
    frame = frame.assign(found=frame["outcome"].map(words))
    figure = alt.Chart(frame).mark_bar().encode(
        x=alt.X("share:Q", stack="normalize", axis=alt.Axis(format="%"), title="topics"),
        y=alt.Y("pair:N", title=None, axis=alt.Axis(labelLimit=0)),
        color=alt.Color("found:N", title=f"relevant in the top {outcomes.k} of",
                        sort=[words[o] for o in kinds]),
        tooltip=["pair", alt.Tooltip("found:N", title="found by"),
                 alt.Tooltip("topics:Q", format=",d"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(height=44 * frame["pair"].nunique() + 60)
    widgets.chart(figure, frame, f"outcomes-{snapshot}-top{outcomes.k}",
                  caption=f"How to read this: where each run ranks the one relevant document: "
                  f"in the top {outcomes.k} of both runs, only one, or neither.")
    rows = [{"pair": f"{p.run_a} vs {p.run_b}", **p.both.model_dump(),
             "n_only_a": p.only_one.n_only_a, "n_only_b": p.only_one.n_only_b,
             "p_binomial": p.only_one.p_value} for p in outcomes.pairs]
    widgets.table(pd.DataFrame(rows), {
        "pair": c.text("pair"), "n": c.count("both", "Topics where both runs find it"),
        "mrr_a": c.score("RR A", "Mean reciprocal rank of A on those topics"),
        "mrr_b": c.score("RR B"), "p_rr": c.p_value("p RR", "Paired test of RR A vs B"),
        "n_only_a": c.count("only A"), "n_only_b": c.count("only B"),
        "p_binomial": c.p_value("p only-one", "Binomial test: only-A vs only-B topics")})

st.subheader("Leaderboard over time")
try:
    board = leaderboard_data.leaderboard(url, collection, snapshot, qrels, measure, test,
                                         correction)
except TcdbError as exc:
    st.caption(f"Not available: {plain(exc)}.")
    st.stop()
runs = leaderboard_data.leaderboard_frame(board)
# Room at both ends of the dates (the first and last runs sit on the axis' ends) and every
# run named beside its point (the SOTA runs first when there are too many to name).
when = alt.X(**charts.with_room(alt.X("submitted:T", title="submitted", axis=alt.Axis(
    format="%Y-%m-%d", labelAngle=0))))
step = alt.Chart(runs).mark_line(interpolate="step-after", color="#90a4ae", strokeWidth=2).encode(
    x=when, y=alt.Y("state_of_the_art:Q", title=figure_said(measure, board.aggregate),
                    scale=alt.Scale(zero=False)),
    tooltip=[alt.Tooltip("state_of_the_art:Q", title="state of the art", format=".4f")])
kinds = leaderboard_data.KINDS
marks = charts.named_points(
    runs.assign(_first=(runs["kind"] != kinds[3]).astype(float) * 10 + runs["mean"]), when,
    alt.Y("mean:Q", title=figure_said(measure, board.aggregate), scale=alt.Scale(zero=False)),
    "run",
    by="_first", size=110, label_color=alt.value("#37474f"),
    color=alt.Color("kind:N", title=None, sort=kinds, scale=alt.Scale(
        domain=kinds, range=["#c62828", "#ef9a9a", "#1f6fb2", "#90a4ae"]),
        legend=alt.Legend(orient="bottom", direction="horizontal")),
    shape=alt.Shape("kind:N", sort=kinds, scale=alt.Scale(
        domain=kinds, range=["diamond", "diamond", "circle", "circle"]), legend=None),
    tooltip=["run", alt.Tooltip("submitted:T", format="%Y-%m-%d"),
             alt.Tooltip("mean:Q", format=".4f"), alt.Tooltip("vs:N", title="vs SOTA"),
             alt.Tooltip("p:Q", title=f"p ({correction})", format=".4f")])
widgets.chart((step + marks).properties(height=340), runs,
              f"leaderboard-{snapshot}-{measure}-{test}",
              caption=f"How to read this: each point is a run's "
              f"{'sum of' if board.aggregate == 'sum' else 'mean'} {plain(measure)} on the "
              "date it "
              "was submitted; the grey steps are the state of the art (the best mean so far). A "
              f"diamond is a new SOTA, dark red when the {test_name} against the SOTA it "
              f"replaced is significant at 0.05 ({correction} within its family: it vs every "
              f"earlier SOTA). {board.n_significant} of {board.n_steps} steps "
              "significant.")
