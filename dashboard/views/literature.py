"""Literature: what publications reported on the collection over the years — each best and
baseline figure by model category, a least-squares trend per category, gains over a reference
typed in the sidebar, and how often each metric is reported (`tcdb literature report`)."""

from __future__ import annotations

from typing import cast

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import columns as c
from tcdb.dashboard import literature_data, widgets
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError
from tcdb.vocabulary import ModelCategory

CATEGORY_COLOURS = {"probabilistic": "#1f6fb2", "neural": "#e8710a", "llm": "#2e7d32"}
CV, NOT_CV = "cross-validated", "not cross-validated"

collection, url = widgets.collection_page(
    "Literature", prefer=literature_data.collections_with_literature)
listed = literature_data.reported(url, collection)
if not listed.results:
    st.info(f"No results reported in the literature are stored for **{plain(collection)}**. "
            "Import a CSV or YAML file of publication, year, venue, model, category, role, "
            "metric, value, cross_validated, notes with "
            f"{code(f'tcdb literature import FILE {collection}')}.")
    st.stop()
rows = listed.to_frame()
metric = widgets.select("Metric", [u.metric for u in listed.metric_usage], "metric",
                        default="nDCG@10",
                        help="Metrics by how many publications report them.")
if metric is None:
    st.stop()


def reference_picker() -> tuple[float | None, str | None]:
    """A reference value (empty: none) and its name, both kept in the URL."""
    if "picker_reference" not in st.session_state:
        raw = st.query_params.get("reference")
        try:
            st.session_state["picker_reference"] = float(raw) if raw else None
        except ValueError:
            st.session_state["picker_reference"] = None
        st.session_state["picker_reference_name"] = st.query_params.get("reference_name", "")
    value = cast(float | None, st.sidebar.number_input(  # None while the box is empty
        f"Reference {plain(metric)}", min_value=0.0, step=0.01, format="%.4f",
        key="picker_reference",
        help="Gains in % are over this value (say, the best TREC run's); empty for none."))
    name = st.sidebar.text_input("Reference name", key="picker_reference_name",
                                 placeholder="reference")
    if value is None:
        st.query_params.pop("reference", None)
    else:
        st.query_params["reference"] = f"{value:g}"
    if name:
        st.query_params["reference_name"] = name
    else:
        st.query_params.pop("reference_name", None)
    return value, (name or None)


reference_value, reference_name = reference_picker()
try:
    report = literature_data.report(url, collection, metric, reference_value, reference_name)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
reference = report.reference
points = rows[rows["metric"] == metric].assign(
    validation=lambda f: f["cross_validated"].map({True: CV, False: NOT_CV}))[
    ["year", "value", "category", "role", "validation", "publication", "model", "venue"]]
st.caption(f"{report.n_results} {plain(metric)} figures from {report.n_publications} "
           f"publications on {plain(collection)}, {points['year'].min()}–{points['year'].max()}.")

st.subheader(f"{plain(metric)} reported over the years")
categories = [m.value for m in ModelCategory] + sorted(
    set(points["category"]) - {m.value for m in ModelCategory})
colour = alt.Scale(domain=categories,
                   range=[CATEGORY_COLOURS.get(k, "#757575") for k in categories])
x = alt.X("year:Q", title="year", scale=alt.Scale(zero=False, nice=False, padding=12),
          axis=alt.Axis(format="d", tickMinStep=1))
y = alt.Y("value:Q", title=metric, scale=alt.Scale(zero=False))
marks = alt.Chart(points).mark_point(filled=True, size=90, strokeWidth=2).encode(
    x=x, y=y,
    color=alt.Color("category:N", title="category", scale=colour),
    stroke=alt.Stroke("category:N", title="category", scale=colour),  # one legend with color
    # a baseline hollow by a condition: by the scale alone it was drawn half filled
    fillOpacity=alt.condition(alt.datum.role == "baseline", alt.value(0.0), alt.FillOpacity(
        "role:N", title="role (hollow: baseline)", legend=None, scale=alt.Scale(
            domain=["best", "baseline", "other"], range=[1.0, 0.0, 0.35]))),
    shape=alt.Shape("validation:N", title=None,
                    scale=alt.Scale(domain=[NOT_CV, CV], range=["circle", "diamond"])),
    tooltip=["publication:N", "venue:N", "model:N", "category:N", "role:N", "validation:N",
             alt.Tooltip("year:Q", format="d"), alt.Tooltip("value:Q", format=".4f")])
lines = pd.DataFrame([
    {"category": t.category, "year": year, "trend": value, "slope": t.slope}
    for t in report.trends if t.slope is not None
    for year, value in ((t.first_year, t.trend_first), (t.last_year, t.trend_last))],
    columns=["category", "year", "trend", "slope"])
layers: list[alt.Chart] = [marks]
if len(lines):
    layers.insert(0, alt.Chart(lines).mark_line(strokeWidth=2, opacity=0.8).encode(
        x=x, y=alt.Y("trend:Q", title=metric),
        color=alt.Color("category:N", title="category", scale=colour),
        detail="category:N",
        tooltip=["category:N", alt.Tooltip("slope:Q", title="slope / year", format="+.4f")]))
if reference is not None:
    rule = pd.DataFrame({"reference": [reference.value], "name": [reference.name]})
    layers.append(alt.Chart(rule).mark_rule(color="#37474f", strokeDash=[6, 4]).encode(
        y=alt.Y("reference:Q", title=metric), tooltip=["name:N", "reference:Q"]))
    layers.append(alt.Chart(rule).mark_text(align="left", baseline="bottom", dx=4, dy=-3,
                                            fontSize=12, color="#37474f").encode(
        x=alt.value(0), y="reference:Q", text="name:N"))
widgets.chart(alt.layer(*layers).properties(height=380), points,
              f"literature-{collection}-{metric}",
              caption="How to read this: one mark per reported figure, coloured by model "
              "category; filled: the publication's best, hollow: its baseline; diamonds were "
              "cross-validated. Lines: least-squares trends of the best figures per category"
              + ("; dashed: the reference." if reference is not None else "."))

st.subheader("Per year and category")
per_year = report.to_frame()
widgets.table(per_year, {
    "year": c.text("year"), "category": c.text("category"),
    "best": c.score("best", f"Highest {plain(metric)} reported as a publication's best"),
    "n_best": c.count("n best"),
    "baseline": c.score("baseline", f"Highest {plain(metric)} reported as a baseline"),
    "n_baseline": c.count("n baseline"),
    **({"best_gain": c.decimal("gain %", 1, f"Best over {plain(reference.name)}, in %")}
       if reference is not None else {})})

st.subheader("Trend per category")
trends = pd.DataFrame([t.model_dump() for t in report.trends])
trends = trends.assign(interval=[
    c.MISSING if lo is None or pd.isna(lo) else f"[{lo:+.4f}, {hi:+.4f}]"
    for lo, hi in zip(trends["ci_low"], trends["ci_high"], strict=True)])
widgets.table(trends, {
    "category": c.text("category"), "n": c.count("n", "Best figures the line is fitted to"),
    "slope": c.decimal("slope / year", 4, "Least-squares slope: change per year"),
    "interval": c.text("95 % CI", "Slope ± its standard error × Student's t (n − 2 df)"),
    "r": c.decimal("r", 3), "p": c.p_value("p", "Two-sided test of slope 0")})

st.subheader("Metric usage")
widgets.table(pd.DataFrame([u.model_dump() for u in report.metric_usage]), {
    "metric": c.text("metric"),
    "n_publications": c.count("publications", "Publications reporting the metric"),
    "n_results": c.count("results", "Figures reported with the metric")})
