"""Overview: collections, snapshots on a timeline, counts, ingest status, last flow runs."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import data, widgets

st.title("Overview")
url = data.database_url()
collections = data.collections(url)
if not collections:
    widgets.empty_database()
    st.stop()

snapshots = data.snapshots(url)
runs = data.runs(url)
qrels = data.qrels_sets(url)
complete = snapshots[snapshots["status"] == "complete"]
cols = st.columns(5)
cols[0].metric("Collections", len(collections))
cols[1].metric("Complete snapshots", len(complete))
cols[2].metric("Runs", len(runs))
cols[3].metric("Qrels sets", len(qrels))
cols[4].metric("Judgments", int(qrels["n_judgments"].sum()) if len(qrels) else 0)

st.subheader("Collections")
summary = pd.DataFrame([{
    "collection": c["name"],
    "documents by": c["doc_identity"], "topics by": c["topic_identity"],
    "snapshots": len(c["snapshots"]),
    "runs": int((runs["collection"] == c["name"]).sum()),
    "qrels sets": int((qrels["collection"] == c["name"]).sum()),
    "description": c["description"] or "",
} for c in collections])
widgets.table(summary)

st.subheader("Snapshots over time")
timeline = snapshots.assign(
    when=pd.to_datetime(snapshots["date"].where(snapshots["date"].notna(),
                                                snapshots["completed_at"]), utc=True,
                        errors="coerce"))
timeline = timeline[["collection", "label", "when", "status", "documents", "topics",
                     "judgments"]]
figure = alt.Chart(timeline.dropna(subset=["when"])).mark_point(filled=True).encode(
    x=alt.X("when:T", title="snapshot date"),
    y=alt.Y("collection:N", title=None),
    size=alt.Size("documents:Q", title="documents"),
    color=alt.Color("status:N", scale=alt.Scale(domain=["complete", "ingesting", "failed"],
                                                range=["#2e7d32", "#f9a825", "#c62828"])),
    tooltip=["collection", "label", "when", "status", "documents", "topics", "judgments"],
)
labels = alt.Chart(timeline.dropna(subset=["when"])).mark_text(dy=-14).encode(
    x="when:T", y="collection:N", text="label:N")
widgets.chart(figure + labels, timeline, "snapshots-timeline")

st.subheader("Ingest status")
status = snapshots[["collection", "label", "date", "status", "documents", "topics", "judgments",
                    "completed_at", "source", "error"]]
widgets.table(status)
unfinished = snapshots[snapshots["status"] != "complete"]
if len(unfinished):
    st.warning(f"{len(unfinished)} snapshot(s) not complete: "
               + ", ".join(f"{r.collection}/{r.label} ({r.status})"
                           for r in unfinished.itertuples()))

st.subheader("Last flow runs")
flows = data.flow_runs(url)
if flows is None:
    st.caption("No Prefect server is configured (`PREFECT_API_URL`); the latest ingests "
               "recorded in the database:")
    latest = snapshots.dropna(subset=["completed_at"]).sort_values("completed_at",
                                                                   ascending=False).head(10)
    widgets.table(latest[["collection", "label", "status", "completed_at", "source"]])
elif flows.empty:
    st.caption("Prefect has no flow runs yet.")
else:
    widgets.table(flows)
