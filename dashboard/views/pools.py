"""Pools: status, sizes per topic, judged fraction, blind export downloads."""

from __future__ import annotations

import altair as alt
import streamlit as st

from tcdb.dashboard import data, widgets
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Assessment pools")
pools = data.pools(url, collection)
if pools.empty:
    st.info(f"**{collection}** has no pools yet. Build one with `tcdb pool build "
            f"{collection} SNAPSHOT --depth K` and export it for assessors with "
            "`tcdb pool export`.")
    st.stop()

columns = ["name", "snapshot", "status", "depth", "n_runs", "n_topics", "n_documents",
           "n_judged", "judged_fraction", "exclude_judged", "pooled_qrels", "created_at",
           "exported_at"]
widgets.table(pools[[c for c in columns if c in pools.columns]],
              judged_fraction=st.column_config.ProgressColumn(
                  "judged", format="percent", min_value=0.0, max_value=1.0))
judged = pools[["name", "n_documents", "n_judged", "judged_fraction"]]
figure = alt.Chart(judged).mark_bar().encode(
    x=alt.X("judged_fraction:Q", title="judged fraction", scale=alt.Scale(domain=[0, 1]),
            axis=alt.Axis(format="%")),
    y=alt.Y("name:N", title=None),
    tooltip=["name", "n_documents", "n_judged", alt.Tooltip("judged_fraction:Q", format=".1%")],
)
widgets.chart(figure, judged, f"pools-judged-{collection}")

name = widgets.select("Pool", pools["name"].tolist(), "pool")
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
cols[1].metric("Documents", detail["n_documents"])
cols[2].metric("Topics", detail["n_topics"])
cols[3].metric("Judged", f"{detail['judged_fraction']:.0%}")
per_topic = detail["per_topic"]
figure = alt.Chart(per_topic).transform_calculate(
    n_unjudged="datum.n_documents - datum.n_judged").transform_fold(
    ["n_judged", "n_unjudged"], as_=["documents", "count"]).mark_bar().encode(
    x=alt.X("topic:N", sort=per_topic["topic"].tolist()),
    y=alt.Y("count:Q", stack="zero", title="documents to judge"),
    color=alt.Color("documents:N", scale=alt.Scale(domain=["n_judged", "n_unjudged"],
                                                   range=["#43a047", "#b0bec5"])),
    tooltip=["topic:N", "documents:N", "count:Q"],
)
widgets.chart(figure, per_topic, f"pool-{name}-per-topic", caption="Pool size per topic.")
st.markdown("**Contributing runs** — pooled documents in their top k, and those only they had")
widgets.table(detail["runs"])

st.subheader("Export")
st.download_button(
    "⬇ Blind pool (topic Q0 docid)", data.pool_export(url, name).encode("utf-8"),
    file_name=f"{widgets.slug(name)}.pool.txt", mime="text/plain", key="pool_export",
    on_click="ignore")
st.caption("The download carries no run names, ranks or scores. For assessors, export with "
           f"`tcdb pool export {name} --format jsonl` (with query and document text), which "
           "also marks the pool exported.")
