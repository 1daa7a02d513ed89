"""Diff runs: two runs of a snapshot topic by topic (the `diff_runs` report), largest difference
first, and one topic's rankings side by side with each document's grade and the start of its
text; above them, what each run's ir_metadata says of it. Everything from the data is plain
text (tables, `st.code`, `plain` captions)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import columns as c
from tcdb.dashboard import data, widgets
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError

UNJUDGED = "unjudged"
SNIPPET = 100  # characters of text: what a table cell shows whole on a wide screen


@st.cache_data(ttl=data.TTL, show_spinner=False)
def _diff(url: str, collection: str, snapshot: str, run_a: str, run_b: str, measure: str,
          qrels: str, topic: str | None, depth: int) -> Any:
    """The `diff_runs` operation, read only (`compute=False`)."""
    return data.run_operation(url, "diff_runs", collection=collection, snapshot=snapshot,
                              run_a=run_a, run_b=run_b, measure=measure, qrels=qrels,
                              topic=topic, depth=depth, snippet=SNIPPET, compute=False)


def _describe(side: str, row: pd.Series) -> None:
    """One run's metadata as text: group, category, type, platform, description, ir_metadata."""
    st.markdown(f"**{side}: {plain(row['run'])}**")
    facts = [("group", row["group"]), ("category", row["category"]),
             ("type", row["run_type"]), ("platform", row["platform"])]
    st.caption(" · ".join(f"{name}: {plain(value)}" for name, value in facts
                          if value is not None and not pd.isna(value)) or "no metadata")
    if row["description"] is not None and not pd.isna(row["description"]):
        st.text(str(row["description"]))
    if row["ir_metadata"] is not None and not pd.isna(row["ir_metadata"]):
        with st.expander("ir_metadata (PRIMAD)"):
            st.code(str(row["ir_metadata"]), language="yaml", wrap_lines=True)


def _grade(doc: Any) -> str:
    return UNJUDGED if doc.grade is None else str(doc.grade)


def _side(result: Any, side: str) -> pd.DataFrame:
    """One run's ranking as a table: rank, document, grade, the other run's rank."""
    rows = []
    for pair in result.rankings.ranks:
        doc = pair.a if side == "a" else pair.b
        if doc is not None:
            rows.append({"rank": pair.rank, "document": doc.document, "grade": _grade(doc),
                         "other": doc.other_rank})
    return pd.DataFrame(rows, columns=["rank", "document", "grade", "other"])


def _texts(result: Any) -> pd.DataFrame:
    """Every document of the two rankings once (in rank order, A's first at a tie): where each
    run ranks it, its grade, and the start of its text."""
    rows: dict[str, dict[str, Any]] = {}
    for pair in result.rankings.ranks:
        for doc, own in ((pair.a, "a"), (pair.b, "b")):
            if doc is None or doc.document in rows:
                continue
            ranks = {own: pair.rank, "b" if own == "a" else "a": doc.other_rank}
            rows[doc.document] = {"document": doc.document, "rank_a": ranks["a"],
                                  "rank_b": ranks["b"], "grade": _grade(doc),
                                  "text": doc.snippet}
    return pd.DataFrame(list(rows.values()),
                        columns=["document", "rank_a", "rank_b", "grade", "text"])


collection, url = widgets.collection_page("Diff runs")
snapshot = widgets.pick_snapshot(collection)
if snapshot is None:
    st.stop()
runs = data.runs(url, collection, snapshot)
tags = runs["run"].tolist()
if len(tags) < 2:
    st.info(f"Snapshot **{plain(snapshot)}** has {len(tags)} run(s); a diff needs two. Import "
            "runs with `tcdb run import`.")
    st.stop()
run_a = widgets.select("Run A", tags, "run_a", default=tags[0])
run_b = widgets.select("Run B", [t for t in tags if t != run_a], "run_b",
                       default=tags[1] if tags[1] != run_a else tags[0])
qrels = widgets.pick_qrels(collection, [snapshot])
measure = widgets.pick_measure()
depth = widgets.number("Ranks side by side", "depth", 10, max_value=100)
if not (run_a and run_b and qrels and measure):
    st.stop()

left, right = st.columns(2)
with left:
    _describe("A", runs[runs["run"] == run_a].iloc[0])
with right:
    _describe("B", runs[runs["run"] == run_b].iloc[0])

try:
    whole = _diff(url, collection, snapshot, run_a, run_b, measure, qrels, None, depth)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
st.caption(f"{plain(measure)} on qrels {code(qrels)} of {plain(snapshot)}, "
           f"{whole.n_topics:,} topics: mean A {widgets.fmt(whole.mean_a, 4)}, mean B "
           f"{widgets.fmt(whole.mean_b, 4)}; A better on {whole.a_better}, B on "
           f"{whole.b_better}, tied on {whole.tied}.")

st.subheader("Topics by difference")
topics = whole.to_frame()
topics = topics.assign(better=["A" if d > 0 else "B" if d < 0 else "tie"
                               for d in topics["difference"]])
bars = alt.Chart(topics).mark_bar().encode(
    x=alt.X("topic:N", sort=topics["topic"].tolist(), title=None,
            axis=alt.Axis(labels=len(topics) <= 40, labelAngle=-60, labelLimit=0)),
    y=alt.Y("difference:Q", title=f"A − B ({measure})"),
    color=alt.Color("better:N", title="better", sort=["A", "B", "tie"],
                    scale=alt.Scale(domain=["A", "B", "tie"],
                                    range=["#1f6fb2", "#c62828", "#90a4ae"]),
                    legend=alt.Legend(orient="bottom", direction="horizontal")),
    tooltip=["topic", alt.Tooltip("score_a:Q", title="A", format=".4f"),
             alt.Tooltip("score_b:Q", title="B", format=".4f"),
             alt.Tooltip("difference:Q", title="A − B", format="+.4f")],
).properties(height=260)
widgets.chart(bars, topics.drop(columns="better"), f"diff-{snapshot}-{run_a}-{run_b}-{measure}",
              caption=f"How to read this: one bar per topic, {plain(run_a)}'s {plain(measure)} "
              f"minus {plain(run_b)}'s, the largest difference (either way) on the left; blue: "
              "A is better, red: B.")
widgets.table(topics, {
    "topic": c.text("topic"), "score_a": c.score("A", f"{plain(run_a)}'s {plain(measure)}"),
    "score_b": c.score("B", f"{plain(run_b)}'s {plain(measure)}"),
    "difference": c.score("A − B", f"{plain(run_a)}'s {plain(measure)} minus "
                          f"{plain(run_b)}'s"), "better": c.text("better")})

st.subheader("One topic, side by side")
chosen = widgets.select("Topic", topics["topic"].tolist(), "topic", sidebar=False,
                        help="Topics in the table's order: the largest difference first.")
if chosen is None:
    st.stop()
try:
    result = _diff(url, collection, snapshot, run_a, run_b, measure, qrels, chosen, depth)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
ranks = result.rankings
st.caption(f"Topic {plain(ranks.topic)}"
           + (f": {plain(ranks.query)}" if ranks.query else "")
           + f" · {plain(measure)} A {widgets.fmt(ranks.score_a, 4)}, B "
           f"{widgets.fmt(ranks.score_b, 4)} · {ranks.n_relevant} relevant in qrels "
           f"{code(qrels)} · top {depth} in trec_eval's order. Grade: the qrels' grade "
           f"({UNJUDGED}: not judged); other run: where the other run ranks the document (a "
           "dash: not at all).")
left, right = st.columns(2)
for column, side, tag, other in ((left, "a", run_a, "B"), (right, "b", run_b, "A")):
    with column:
        st.markdown(f"**{side.upper()}: {plain(tag)}**")
        widgets.table(_side(result, side), {
            "rank": c.count("rank"), "document": c.text("document"),
            "grade": c.text("grade"),
            "other": c.count(f"rank in {other}", f"Where run {other} ranks this document")})
st.markdown("**The documents' text**")
# a block per document, not a table: a cell cuts its text at the column's edge without a
# mark, and the start of a document must read whole at any width
for doc in _texts(result).itertuples(index=False):
    where = " · ".join(f"rank in {side} {'–' if pd.isna(rank) else int(rank)}"
                       for side, rank in (("A", doc.rank_a), ("B", doc.rank_b)))
    st.markdown(f"**{plain(str(doc.document))}** · {where} · grade {plain(str(doc.grade))}")
    st.caption(plain(str(doc.text)) if doc.text else "(no text stored)")
