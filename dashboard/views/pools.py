"""Pools: status, sizes per topic, judged fraction, the runs pooled, blind export downloads."""

from __future__ import annotations

import altair as alt
import streamlit as st

from tcdb.dashboard import charts, data, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError

collection, url = widgets.collection_page("Assessment pools")
pools = data.run_operation(url, "pools", collection=collection).to_frame()
if pools.empty:
    st.info(f"**{plain(collection)}** has no pools yet. Build one with "
            f"{code(f'tcdb pool build {collection} SNAPSHOT --depth K')} and export it for "
            "assessors with `tcdb pool export`.")
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
    detail = data.run_operation(url, "pool_show", name=name)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
st.subheader(f"Pool {plain(name)}")
cols = st.columns(4)
cols[0].metric("Status", detail.status)
cols[1].metric("Documents", f"{detail.n_documents:,}")
cols[2].metric("Topics", f"{detail.n_topics:,}")
cols[3].metric("Judged", f"{detail.judged_fraction:.0%}")
said = [f"depth {detail.depth} ({detail.tie_order} tie order)", f"{detail.n_runs} run(s)"]
if detail.budget:
    said.append(f"the first {detail.budget:,} documents"
                f"{' per topic' if detail.budget_per_topic else ''} of {code(detail.strategy)}")
if detail.max_per_topic:
    said.append(f"at most {detail.max_per_topic:,} documents per topic")
if detail.exclude_judged:
    said.append(f"leaves out what {code(detail.exclude_judged)} judged")
if detail.pooled_qrels:
    said.append(f"judgments in {code(detail.pooled_qrels)}")
st.caption(" · ".join(said) + (f" — {plain(detail.description)}" if detail.description else ""))

per_topic = detail.to_frame()
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
runs = detail.runs_frame()
widgets.table(runs, {
    "run": c.text("run"),
    "contributed": c.flag("in the original pools", "Whether the run contributed to the "
                          "snapshot's original judgments (`run import --contributed`)"),
    "n_pooled": c.count("pooled documents"), "unique": c.count("only this run")})
if detail.only_new_runs:
    st.caption("No run here contributed to the original judgments: this pool judges what "
               "they retrieved that the original pools missed.")

st.subheader("Export")
st.download_button(
    "⬇ Blind pool (qrels template: topic 0 docid)", data.pool_export(url, name).encode("utf-8"),
    file_name=f"{widgets.slug(name)}.pool.txt", mime="text/plain", key="pool_export",
    on_click="ignore")
st.caption("The download carries no run names, ranks or scores. For assessors, export with "
           f"{code(f'tcdb pool export {name} --format jsonl')} (with query and document text), "
           "which also marks the pool exported.")

st.subheader("Simulate strategies before judging")
st.caption("Pretend only the documents a strategy pools within a budget had been judged "
           "(their grades read from a complete qrels set), and see how many relevant ones it "
           "finds and how well the systems would be ranked: `tcdb pool simulate`.")
with st.form("simulate"):
    from tcdb.dashboard import pool_simulation
    from tcdb.pools.strategies import strategy_names

    names = data.qrels_names(url, collection, [detail.snapshot])
    sim_cols = st.columns(3)
    sim_qrels = sim_cols[0].selectbox("Complete qrels", names, key="sim_qrels")
    sim_budgets = sim_cols[1].text_input("Budgets", "100,200,400,800", key="sim_budgets")
    sim_per_topic = sim_cols[2].toggle("Budgets per topic", key="sim_per_topic")
    sim_strategies = st.multiselect("Strategies", strategy_names(), default=strategy_names(),
                                    key="sim_strategies")
    asked = st.form_submit_button("Simulate")
if asked and sim_qrels and sim_strategies:
    try:
        simulated = pool_simulation.simulate(url, collection, detail.snapshot, sim_qrels,
                                             sim_budgets, tuple(sim_strategies), sim_per_topic)
    except TcdbError as exc:
        widgets.show_error(exc)
        st.stop()
    widgets.chart(pool_simulation.tau_chart(simulated, sim_strategies), simulated,
                  f"simulation-{detail.snapshot}",
                  caption="How to read this: one colour per strategy; higher is a system "
                  "ranking closer to the one under the complete qrels. Solid: every run "
                  "pooled; dashed: each group's runs judged on a pool built without them.")
    widgets.table(simulated, {
        "strategy": c.text("strategy"), "budget": c.count("budget"),
        "n_judged": c.count("judged"), "relevant_found": c.count("relevant found"),
        "tau_b": c.decimal("τ-b", 3), "tau_ap": c.decimal("τ_AP", 3),
        "logo_tau_b": c.decimal("LOGO τ-b", 3), "logo_tau_ap": c.decimal("LOGO τ_AP", 3)})
