"""Pools: status, sizes per topic, judged fraction, the runs pooled, blind export downloads."""

from __future__ import annotations

import altair as alt
import streamlit as st

from tcdb.dashboard import charts, data, widgets
from tcdb.dashboard import columns as c
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Assessment pools")
pools = data.pools(url, collection)
if pools.empty:
    st.info(f"**{collection}** has no pools yet. Build one with `tcdb pool build "
            f"{collection} SNAPSHOT --depth K` and export it for assessors with "
            "`tcdb pool export`.")
    st.stop()

widgets.table(pools, {
    "name": c.text("pool"), "snapshot": c.text("snapshot"), "status": c.text("status"),
    "depth": c.count("depth k", "Each pooled run's top k per topic"),
    "n_documents": c.count("documents", "Documents to judge, all topics"),
    "judged_fraction": c.progress("judged", "Share of the pool's documents judged in its "
                                  "pooled qrels set"),
})

name = widgets.select("Pool", pools["name"].tolist(), "pool", sidebar=False,
                      default=pools.sort_values("created_at")["name"].iloc[-1])
if name is None:
    st.stop()
try:
    detail = data.pool_detail(url, name)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
st.subheader(f"Pool {name}")
cols = st.columns(4)
cols[0].metric("Status", detail["status"])
cols[1].metric("Documents", f"{detail['n_documents']:,}")
cols[2].metric("Topics", f"{detail['n_topics']:,}")
cols[3].metric("Judged", f"{detail['judged_fraction']:.0%}")
said = [f"depth {detail['depth']} ({detail['tie_order']} tie order)",
        f"{detail['n_runs']} run(s)"]
if detail["max_per_topic"]:
    said.append(f"at most {detail['max_per_topic']:,} documents per topic")
if detail["exclude_judged"]:
    said.append(f"leaves out what `{detail['exclude_judged']}` judged")
if detail["pooled_qrels"]:
    said.append(f"judgments in `{detail['pooled_qrels']}`")
st.caption(" · ".join(said) + (f" — {detail['description']}" if detail["description"] else ""))

per_topic = detail["per_topic"].assign(
    n_unjudged=lambda f: f["n_documents"] - f["n_judged"])
ranked = per_topic.sort_values("n_documents", ascending=False)
figure = alt.Chart(per_topic).transform_fold(
    ["n_judged", "n_unjudged"], as_=["key", "count"]).transform_calculate(
    documents="datum.key == 'n_judged' ? 'judged' : 'not judged yet'").mark_bar().encode(
    x=alt.X("topic:N", sort=ranked["topic"].tolist(),
            axis=charts.topic_axis(len(per_topic), "largest pool first")),
    y=alt.Y("count:Q", stack="zero", title="documents to judge"),
    color=alt.Color("documents:N", title="documents", scale=alt.Scale(
        domain=["judged", "not judged yet"], range=["#43a047", "#b0bec5"])),
    tooltip=["topic:N", "documents:N", alt.Tooltip("count:Q", format=",d")],
).properties(height=charts.HEIGHT)
widgets.chart(figure, per_topic, f"pool-{name}-per-topic",
              caption="How to read this: one bar per topic, its height the documents the "
              "assessors get for it; green = judged already, grey = still to judge.")

st.markdown("**Runs pooled** — the runs this pool was built from: the pooled documents in "
            "their top k, and those no other pooled run retrieved")
runs = detail["runs"]
known = data.runs(url, collection, detail["snapshot"]).set_index("run")
runs = runs.assign(contributed=runs["run"].map(known["contributed"]).fillna(False).astype(bool))
widgets.table(runs, {
    "run": c.text("run"),
    "contributed": c.flag("in the original pools", "Whether the run contributed to the "
                          "snapshot's original judgments (`run import --contributed`)"),
    "n_pooled": c.count("pooled documents"), "unique": c.count("only this run")})
if len(runs) and not runs["contributed"].any():
    st.caption("No run here contributed to the original judgments: this pool judges what "
               "they retrieved that the original pools missed.")

st.subheader("Export")
st.download_button(
    "⬇ Blind pool (topic Q0 docid)", data.pool_export(url, name).encode("utf-8"),
    file_name=f"{widgets.slug(name)}.pool.txt", mime="text/plain", key="pool_export",
    on_click="ignore")
st.caption("The download carries no run names, ranks or scores. For assessors, export with "
           f"`tcdb pool export {name} --format jsonl` (with query and document text), which "
           "also marks the pool exported.")
