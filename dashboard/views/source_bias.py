"""Source bias: do the runs rank LLM-generated documents above the human-written ones they were
rewritten from (Cocktail)? Effectiveness against Relative Δ, Relative Δ per run with its
interval, and the documents of each source per snapshot."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import bias_data, charts, data, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import plain
from tcdb.errors import TcdbError
from tcdb.vocabulary import SOURCE_BIAS_FIGURES, source_bias_legend

collection, url = widgets.collection_page("Source bias", prefer=bias_data.labelled_collections)
counted = bias_data.documents_by_source(url, collection)
documents = counted.to_frame()


def documents_chart() -> None:
    """Each snapshot's documents by who wrote them (shown at the bottom, or alone)."""
    st.subheader("Documents per source")
    figure = alt.Chart(documents).mark_bar().encode(
        x=alt.X("documents:Q", title="documents", stack="zero"),
        y=alt.Y("snapshot:N", title=None, sort=documents["snapshot"].unique().tolist()),
        color=alt.Color("source:N", title="source"),
        tooltip=["snapshot", "source", alt.Tooltip("documents:Q", format=",d")])
    widgets.chart(figure.properties(height=max(140, 40 * documents["snapshot"].nunique() + 60)),
                  documents,
                  f"documents-per-source-{collection}",
                  caption="How to read this: each snapshot's documents by who wrote them.")


if not counted.labelled_snapshots:
    st.info(f"No document of **{plain(collection)}** says who wrote it. Label documents at ingest: "
            "JSONL/BEIR fields `source` (human, llm) and `twin_of` (the original an LLM text "
            "rewrites), or `tcdb snapshot ingest … --source-labels FILE` for any format.")
    documents_chart()
    st.stop()
snapshot = widgets.pick_snapshot(collection, prefer=counted.labelled_snapshots)
# Cocktail reports nDCG at 1, 3 and 5; then the measures the other pages offer.
MEASURES = list(dict.fromkeys(["nDCG@1", "nDCG@3", "nDCG@5", *data.CANDIDATE_MEASURES]))
measure = widgets.select("Measure", MEASURES, "measure", default="nDCG@10")
if snapshot is None or measure is None:
    st.stop()
try:
    report = bias_data.source_bias(url, collection, snapshot, measure)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
(result,) = report.measures.values()  # the one measure asked for
runs = pd.DataFrame([r.model_dump(exclude={"per_topic"}) for r in result.runs])
if runs.empty:
    st.info(f"Snapshot **{plain(snapshot)}** has no runs: import them with `tcdb run import`.")
    st.stop()
average, correlation = result.average, result.correlation
r_text = "–" if correlation.r is None else f"{correlation.r:+.2f}"
st.caption(f"{plain(measure)} of each run on the mixed corpus of {plain(snapshot)}, against the "
           f"judgments of the {plain(report.human)} documents only and of the "
           f"{plain(report.llm)} documents only "
           f"({report.sets[report.llm].n_copied:,} judgments carried from the originals "
           f"to their LLM twins), over {report.n_topics:,} topics. Relative Δ = (human − "
           f"llm) / mean × 100: positive when human-written text is ranked higher. Mean over "
           f"{average.n_runs} runs: {average.relative_delta or 0:+.1f} %; Pearson r "
           f"between effectiveness and Relative Δ {r_text}.")

st.subheader("Effectiveness against source bias")
zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color="#9e9e9e", strokeDash=[4, 4]) \
    .encode(y="y:Q")
tooltip = ["run", alt.Tooltip("effectiveness:Q", format=".4f"),
           alt.Tooltip("relative_delta:Q", title="Relative Δ %", format="+.2f"),
           alt.Tooltip("human:Q", format=".4f"), alt.Tooltip("llm:Q", format=".4f")]
# each name beside its dot, kept off the other dots and inside the plot (charts.named_points)
points = charts.named_points(
    runs, alt.X("effectiveness:Q", title=f"{measure} (mixed corpus)",
                scale=alt.Scale(zero=False)),
    alt.Y("relative_delta:Q", title="Relative Δ % (human − llm)"), "run", size=110,
    tooltip=tooltip)
widgets.chart((zero + points).properties(height=380), runs,
              f"source-bias-scatter-{snapshot}-{measure}",
              caption="How to read this: one dot per run; right is more effective, below the "
              "dashed line the run prefers LLM-generated text (Cocktail's Fig. 1).")

st.subheader("Relative Δ per run, with 95 % bootstrap intervals")
order = runs.sort_values("relative_delta")["run"].tolist()
bars_base = alt.Chart(runs).encode(y=alt.Y("run:N", sort=order, title=None,
                                           axis=alt.Axis(labelLimit=0)))
bars = bars_base.mark_bar(color="#90caf9").encode(
    x=alt.X("relative_delta:Q", title="Relative Δ %"), tooltip=tooltip)
whiskers = bars_base.mark_rule(strokeWidth=2, color="#37474f").encode(x="ci_low:Q",
                                                                       x2="ci_high:Q")
widgets.chart((bars + whiskers).properties(height=34 * len(runs) + 60), runs,
              f"source-bias-runs-{snapshot}-{measure}",
              caption="How to read this: bars left of 0 prefer LLM text; the black line is where "
              f"95 % of {report.bootstrap:,} resamples of the topics (seed {report.seed}) put "
              "Relative Δ.")
named = SOURCE_BIAS_FIGURES  # the CLI's column names
widgets.table(runs, {
    "run": c.text(named["run"]),
    "effectiveness": c.score(named["effectiveness"],
                             f"{measure} against both sources' judgments"),
    "human": c.score(f"{measure} {named['human']}",
                     f"{measure} against the human documents' judgments"),
    "llm": c.score(f"{measure} {named['llm']}", f"{measure} against the LLM documents' judgments"),
    "relative_delta": c.decimal(named["relative_delta"], 2,
                                "Relative Δ: (human − llm) / mean × 100"),
    "ci_low": c.decimal(named["ci_low"], 2, report.tests["ci_low/ci_high"]),
    "ci_high": c.decimal(named["ci_high"], 2, report.tests["ci_low/ci_high"]),
    "p_t": c.p_value(named["p_t"], report.tests["p_t"])})
st.caption(plain(source_bias_legend(report.tests)))  # what the CLI prints under its table
if result.first_stage:
    st.subheader("Bias carried from first stage to re-ranker")
    widgets.table(pd.DataFrame([f.model_dump() for f in result.first_stage]), {
        "run": c.text("re-ranker"), "first_stage": c.text("first stage"),
        "delta_first_stage": c.decimal("Δ first stage %", 2),
        "delta": c.decimal("Δ re-ranked %", 2), "change": c.decimal("change", 2)})
documents_chart()
