"""Overview: collections, snapshots on a timeline, counts, ingest status, last flow runs."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import columns as c
from tcdb.dashboard import data, widgets
from tcdb.dashboard.widgets import plain

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
cols[0].metric("Collections", f"{len(collections):,}")
cols[1].metric("Snapshots", f"{len(complete):,}", help="Complete snapshots (ingest finished)")
cols[2].metric("Runs", f"{len(runs):,}")
cols[3].metric("Qrels sets", f"{len(qrels):,}")
cols[4].metric("Judgments", f"{int(qrels['n_judgments'].sum()) if len(qrels) else 0:,}")

st.subheader("Collections")
summary = pd.DataFrame([{
    "collection": item["name"], "snapshots": len(item["snapshots"]),
    "runs": int((runs["collection"] == item["name"]).sum()),
    "qrels sets": int((qrels["collection"] == item["name"]).sum()),
    "documents by": item["doc_identity"], "topics by": item["topic_identity"],
    "description": item["description"] or "",
} for item in collections])
widgets.table(summary, {
    "collection": c.text("collection"), "snapshots": c.count("snapshots", width="small"),
    "runs": c.count("runs", width="small"), "qrels sets": c.count("qrels sets", width="small"),
    "documents by": c.text("documents by", "How a document keeps its identity across "
                           "snapshots: its id, or its URL"),
    "topics by": c.text("topics by", "How a topic keeps its identity across snapshots: its "
                        "id, or its query text"),
})
described = summary[summary["description"] != ""]
if len(described):
    st.markdown("\n".join(f"- **{plain(row.collection)}** — {plain(row.description)}"
                           for row in described.itertuples()))

st.subheader("Snapshots over time")
when = pd.to_datetime(snapshots["date"].where(snapshots["date"].notna(),
                                              snapshots["completed_at"]),
                      utc=True, errors="coerce")
timeline = snapshots.assign(when=when)[["collection", "label", "when", "status", "documents",
                                        "topics", "judgments", "source"]].dropna(
    subset=["when"])
status_scale = alt.Scale(domain=["complete", "ingesting", "failed"],
                         range=["#2e7d32", "#f9a825", "#c62828"])
# One strip per collection, each with its own dates: collections years apart (or one dated by
# its ingest) would squeeze another's snapshots into one spot. Names alternate above and below
# their dots, so that snapshots a month apart keep theirs apart.
timeline = timeline.sort_values(["collection", "when"]).assign(
    _name=lambda f: f["label"].where(snapshots.loc[f.index, "date"].notna(),
                                     f["label"] + " (ingested)"),
    _above=lambda f: f.groupby("collection").cumcount() % 2 == 0)
STRIP_PX = 130  # a strip: its dots, their names above and below, the date axis
strips = []
for i, (_, rows) in enumerate(timeline.groupby("collection", sort=True)):
    first, last = rows["when"].min(), rows["when"].max()
    pad = max((last - first) * 0.08, pd.Timedelta(days=10))
    x = alt.X("when:T", title="snapshot date" if i == timeline["collection"].nunique() - 1
              else None, scale=alt.Scale(domain=[(first - pad).isoformat(),
                                                 (last + pad).isoformat()]),
              axis=alt.Axis(format="%Y-%m-%d", labelAngle=0, tickCount=6, grid=False))
    base = alt.Chart(rows).encode(x=x, y=alt.Y("collection:N", title=None, axis=alt.Axis(
        labelFontSize=12, labelFontWeight="bold", ticks=False, domain=False)))
    points = base.mark_circle(size=220, opacity=0.9).encode(
        color=alt.Color("status:N", title="ingest", scale=status_scale,
                        legend=alt.Legend(orient="right") if i == 0 else None),
        tooltip=["collection", alt.Tooltip("label", title="snapshot"), "source",
                 alt.Tooltip("when:T", title="date", format="%Y-%m-%d"), "status",
                 alt.Tooltip("documents:Q", format=",d"), alt.Tooltip("topics:Q", format=",d"),
                 alt.Tooltip("judgments:Q", format=",d")])
    above = base.transform_filter(alt.datum._above).mark_text(
        dy=-18, fontSize=12, fontWeight="bold").encode(text="_name:N")
    below = base.transform_filter(~alt.datum._above).mark_text(
        dy=20, fontSize=12, fontWeight="bold").encode(text="_name:N")
    strips.append((points + above + below).properties(height=STRIP_PX))
widgets.chart(
    strips, timeline.drop(columns=["_name", "_above"]), "snapshots-timeline",
    caption="How to read this: one strip per collection, each with its own dates; one dot per "
            "snapshot at its date (at its ingest time, marked “ingested”, when it has none); "
            "the colour says whether its ingest finished. Hover a dot for its documents, "
            "topics and judgments.")

st.subheader("Ingest status")
status = snapshots.sort_values(["collection", "ordinal"]).assign(
    ingested=lambda f: pd.to_datetime(f["completed_at"], utc=True, errors="coerce")
    .dt.strftime("%Y-%m-%d %H:%M").where(f["status"] == "complete", f["status"]))
widgets.table(status, {
    "collection": c.text("collection"), "label": c.text("snapshot"),
    "documents": c.count("documents"), "topics": c.count("topics"),
    "judgments": c.count("judgments", "Judgments of the snapshot's original qrels"),
    "ingested": c.text("ingested", "When the ingest finished (UTC), or where it stands"),
    "source": c.text("source"),
})
unfinished = snapshots[snapshots["status"] != "complete"]
for row in unfinished.itertuples():
    reason = f": {row.error}" if isinstance(row.error, str) and row.error else ""
    st.warning(plain(f"{row.collection} / {row.label} is {row.status}{reason}"),
               icon=":material/warning:")

st.subheader("Last flow runs")
flows = data.flow_runs(url)
if flows is None:
    st.caption("No Prefect server is configured (`PREFECT_API_URL`): the ingest times above "
               "are what the database records.")
elif flows.empty:
    st.caption("Prefect has no flow runs yet.")
else:
    widgets.table(flows, {"flow run": c.text("flow run"), "state": c.text("state"),
                          "start": c.time("start"), "end": c.time("end"),
                          "parameters": c.text("parameters", width="large")})
