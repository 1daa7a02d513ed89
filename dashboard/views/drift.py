"""Drift: documents added / removed / changed / unchanged between consecutive snapshots, topic
overlap and core topics, judgments per topic."""

from __future__ import annotations

import altair as alt
import streamlit as st

from tcdb.dashboard import charts, data, longitudinal, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Snapshot drift")
try:
    drift = data.drift(url, collection)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
labels = drift["labels"]
if not labels:
    st.info(f"Collection **{plain(collection)}** has no complete snapshot yet.")
    st.stop()

def _documents() -> None:
    st.subheader("Documents between consecutive snapshots")
    documents = drift["documents"]
    if documents.empty:
        st.info("Only one snapshot so far: drift needs two.")
    else:
        order = ["unchanged", "changed", "added", "removed"]
        figure = charts.signed_bars(
            documents, "transition", "kind", "documents", below=["removed"], order=order,
            colours=["#90a4ae", "#ffb300", "#43a047", "#e53935"], x_title=None,
            y_title="documents", legend="documents")
        widgets.chart(figure + charts.zero_rule(), documents, f"document-drift-{collection}",
                      caption="How to read this: above 0, the later snapshot — unchanged + changed "
                      "(same document, new text) + added = its size; below 0, in red, the "
                      "documents "
                      "of the earlier snapshot it no longer has. Identity by the collection's rule "
                      "(id or URL).")
        wide = documents.pivot(index="transition", columns="kind", values="documents")
        wide = wide.reindex(index=documents["transition"].unique(), columns=order).reset_index()
        widgets.table(wide, {"transition": c.text("snapshots")}
                      | {kind: c.count(kind) for kind in order})

        stats = longitudinal.snapshot_stats(url, collection)
        churn = stats["churn"]
        figure = alt.Chart(churn).mark_bar().encode(
            x=alt.X("transition:N", sort=list(documents["transition"].unique()), title=None,
                    axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("direction:N", sort=["grew", "shrank", "same length"]),
            y=alt.Y("changed documents:Q", title="changed documents"),
            color=alt.Color("direction:N", title="text", sort=["grew", "shrank", "same length"],
                            scale=alt.Scale(domain=["grew", "shrank", "same length"],
                                            range=["#43a047", "#e53935", "#90a4ae"])),
            tooltip=["transition", "direction", alt.Tooltip("changed documents:Q", format=",d")],
        ).properties(height=charts.HEIGHT)
        widgets.chart(figure, churn, f"length-churn-{collection}",
                      caption="How to read this: the changed documents of each transition (same "
                      "document, new text) by whether their text grew, shrank or kept its length "
                      "(characters of the normalised text).")


def _topics() -> None:
    st.subheader("Topics")
    cols = st.columns(3)
    cols[0].metric("Snapshots", f"{len(labels):,}")
    cols[1].metric("Core topics", f"{drift['core']:,}", help="Topics present in every snapshot")
    if len(drift["qrels"]):
        cols[2].metric(f"Judged topics in {plain(labels[-1])}",
                       f"{int(drift['qrels']['topics'].iloc[-1]):,}")
    topics = drift["topics"]
    if not topics.empty:
        melted = topics.melt(id_vars="transition", value_vars=["kept", "added", "removed"],
                             var_name="kind", value_name="topics")
        figure = charts.signed_bars(
            melted, "transition", "kind", "topics", below=["removed"],
            order=["kept", "added", "removed"], colours=["#90a4ae", "#43a047", "#e53935"],
            x_title=None, y_title="topics", legend="topics")
        widgets.chart(figure + charts.zero_rule(), melted, f"topic-overlap-{collection}",
                      caption="How to read this: above 0, the later snapshot's topics — kept (also "
                      "when re-numbered) + added; below 0, the earlier snapshot's topics it "
                      "dropped.")
        widgets.table(topics, {"transition": c.text("snapshots"), "kept": c.count("kept"),
                               "added": c.count("added"), "removed": c.count("removed"),
                               "renumbered": c.count("re-numbered", "Kept under a new topic id")})


def _judgments() -> None:
    st.subheader("Judgments")
    qrels = drift["qrels"]
    if not qrels.empty:
        melted = qrels.melt(id_vars="snapshot", value_vars=["judgments_per_topic",
                                                            "relevant_per_topic"],
                            var_name="documents", value_name="per topic")
        melted["documents"] = melted["documents"].map({"judgments_per_topic": "judged",
                                                       "relevant_per_topic": "relevant"})
        figure = alt.Chart(melted).mark_bar().encode(
            x=alt.X("snapshot:N", sort=labels, title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("documents:N", sort=["judged", "relevant"]),
            y=alt.Y("per topic:Q", title="documents per judged topic"),
            color=alt.Color("documents:N", title="documents", sort=["judged", "relevant"],
                            scale=charts.JUDGED_RELEVANT),
            tooltip=["snapshot", "documents", alt.Tooltip("per topic:Q", format=".1f")],
        ).properties(height=charts.HEIGHT)
        widgets.chart(figure, melted, f"judgments-per-topic-{collection}",
                      caption="How to read this: the original qrels of each snapshot — documents "
                      "judged, and judged relevant (grade > 0), per judged topic on average.")
        widgets.table(qrels, {
            "snapshot": c.text("snapshot"), "topics": c.count("judged topics"),
            "judgments": c.count("judgments"), "relevant": c.count("relevant"),
            "judgments_per_topic": c.decimal("judged per topic"),
            "relevant_per_topic": c.decimal("relevant per topic")})

    grades = longitudinal.snapshot_stats(url, collection)["grades"]
    if not grades.empty:
        order = sorted(grades["grade"].unique(), key=int)
        figure = alt.Chart(grades).mark_bar().encode(
            x=alt.X("snapshot:N", sort=labels, title=None, axis=alt.Axis(labelAngle=0)),
            xOffset=alt.XOffset("grade:N", sort=order),
            y=alt.Y("judgments:Q", title="judgments"),
            color=alt.Color("grade:N", title="grade", sort=order,
                            scale=alt.Scale(scheme="blues")),
            tooltip=["snapshot", "grade", alt.Tooltip("judgments:Q", format=",d")],
        ).properties(height=charts.HEIGHT)
        widgets.chart(figure, grades, f"judgments-by-grade-{collection}",
                      caption="How to read this: the original qrels of each snapshot, judgments by "
                      "grade (0: not relevant); a shift to lower grades makes scores drop with no "
                      "change in the systems.")

    snapshot = widgets.pick_snapshot(collection)
    qrels_name = widgets.pick_qrels(collection, [snapshot]) if snapshot else None
    if snapshot and qrels_name:
        try:
            per_topic = data.judgments_per_topic(url, collection, snapshot, qrels_name)
        except TcdbError as exc:
            widgets.show_error(exc)
            return
        st.markdown(f"**Judgments per topic** — {plain(snapshot)}, qrels {code(qrels_name)}")
        ranked = per_topic.sort_values(["judged", "relevant"], ascending=False)
        figure = alt.Chart(per_topic).transform_fold(
            ["judged", "relevant"], as_=["documents", "count"]).mark_bar().encode(
            x=alt.X("topic:N", sort=ranked["topic"].tolist(),
                    axis=charts.topic_axis(len(per_topic), "most judged first")),
            y=alt.Y("count:Q", stack=None, title="documents"),
            color=alt.Color("documents:N", title="documents",
                            scale=charts.JUDGED_RELEVANT),
            tooltip=["topic:N", "documents:N", alt.Tooltip("count:Q", format=",d")],
        ).properties(height=charts.HEIGHT)
        widgets.chart(figure, per_topic, f"judgments-{collection}-{snapshot}-{qrels_name}",
                      caption="How to read this: one bar per topic, grey = judged, blue = of "
                      "those, relevant; a topic with few relevant documents gives noisy scores.")


# One part at a time: a projector shows a tab whole.
PARTS = {"Documents": _documents, "Topics": _topics, "Judgments": _judgments}
for _tab, _part in zip(st.tabs(list(PARTS)), PARTS.values(), strict=True):
    with _tab:
        _part()
