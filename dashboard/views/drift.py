"""Drift: documents added / removed / changed / unchanged between consecutive snapshots, topic
overlap and core topics, judgments per topic."""

from __future__ import annotations

import altair as alt
import streamlit as st

from tcdb.dashboard import data, widgets
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Snapshot drift")
try:
    drift = data.drift(url, collection)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
labels = drift["labels"]
if not labels:
    st.info(f"Collection **{collection}** has no complete snapshot yet.")
    st.stop()

st.subheader("Documents between consecutive snapshots")
documents = drift["documents"]
if documents.empty:
    st.info("Only one snapshot so far: drift needs two.")
else:
    order = ["unchanged", "changed", "added", "removed"]
    figure = alt.Chart(documents).mark_bar().encode(
        x=alt.X("transition:N", title=None, sort=None),
        y=alt.Y("documents:Q", title="documents", stack="zero"),
        color=alt.Color("kind:N", sort=order, scale=alt.Scale(
            domain=order, range=["#90a4ae", "#ffb300", "#43a047", "#e53935"])),
        order=alt.Order("kind_order:Q"),
        tooltip=["transition", "kind", "documents"],
    ).transform_calculate(kind_order=f"indexof({order!r}, datum.kind)")
    widgets.chart(figure, documents, f"document-drift-{collection}",
                  caption="Documents keep their identity by the collection's rule (id or URL); "
                  "changed = same document, new content.")
    wide = documents.pivot(index="transition", columns="kind", values="documents")
    widgets.table(wide.reindex(columns=order).reset_index())

st.subheader("Topics")
cols = st.columns(3)
cols[0].metric("Snapshots", len(labels))
cols[1].metric("Core topics (in every snapshot)", drift["core"])
if len(drift["qrels"]):
    cols[2].metric(f"Judged topics in {labels[-1]}", int(drift["qrels"]["topics"].iloc[-1]))
topics = drift["topics"]
if not topics.empty:
    melted = topics.melt(id_vars="transition", value_vars=["kept", "added", "removed"],
                         var_name="kind", value_name="topics")
    figure = alt.Chart(melted).mark_bar().encode(
        x=alt.X("transition:N", title=None, sort=None),
        y=alt.Y("topics:Q", stack="zero"),
        color=alt.Color("kind:N", scale=alt.Scale(domain=["kept", "added", "removed"],
                                                  range=["#90a4ae", "#43a047", "#e53935"])),
        tooltip=["transition", "kind", "topics"],
    )
    widgets.chart(figure, melted, f"topic-overlap-{collection}",
                  caption="kept = present in both (re-numbered ones included: see the table).")
    widgets.table(topics)

st.subheader("Judgments")
qrels = drift["qrels"]
if not qrels.empty:
    melted = qrels.melt(id_vars="snapshot",
                        value_vars=["judgments_per_topic", "relevant_per_topic"],
                        var_name="per topic", value_name="documents")
    figure = alt.Chart(melted).mark_bar().encode(
        x=alt.X("snapshot:N", sort=labels, title=None),
        xOffset="per topic:N",
        y=alt.Y("documents:Q", title="documents per topic"),
        color="per topic:N",
        tooltip=["snapshot", "per topic", alt.Tooltip("documents:Q", format=".1f")],
    )
    widgets.chart(figure, melted, f"judgments-per-topic-{collection}",
                  caption="Original qrels of each snapshot.")
    widgets.table(qrels)

snapshot = widgets.pick_snapshot(collection)
qrels_name = widgets.pick_qrels(collection, [snapshot]) if snapshot else None
if snapshot and qrels_name:
    try:
        per_topic = data.judgments_per_topic(url, collection, snapshot, qrels_name)
    except TcdbError as exc:
        widgets.show_error(exc)
        st.stop()
    st.markdown(f"**Judgments per topic** — {snapshot}, qrels `{qrels_name}`")
    figure = alt.Chart(per_topic).transform_fold(
        ["judged", "relevant"], as_=["documents", "count"]).mark_bar().encode(
        x=alt.X("topic:N", sort=per_topic["topic"].tolist(), title="topic"),
        y=alt.Y("count:Q", stack=None, title="documents"),
        color=alt.Color("documents:N", scale=alt.Scale(domain=["judged", "relevant"],
                                                       range=["#b0bec5", "#1e88e5"])),
        tooltip=["topic:N", "documents:N", "count:Q"],
    )
    widgets.chart(figure, per_topic, f"judgments-{collection}-{snapshot}-{qrels_name}")
