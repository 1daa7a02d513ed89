"""Judge agreement: two qrels sets of one snapshot (NIST and an LLM judge, two assessors) —
the confusion heatmap of their grades, κ and α per topic, and the ranking scatter of every run's
mean under each set (`report judge-agreement`, computed by the operation, displayed here)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError

BOOTSTRAP = 1_000  # resamples behind the intervals (the report's default)
P_CHOICES = ["0.8", "0.9", "0.95"]

collection, url = widgets.collection_page("Judge agreement")
all_sets = data.qrels_sets(url, collection)
per_snapshot = all_sets.groupby("snapshot")["name"].nunique()
pairs = [s for s in per_snapshot.index if per_snapshot[s] >= 2]
snapshot = widgets.pick_snapshot(collection, prefer=pairs)
if snapshot is None:
    st.stop()
# original first; a pool's own set last: it judges what the others left out (no pair in common)
here = all_sets[all_sets["snapshot"] == snapshot]
kinds = dict(zip(here["name"], here["kind"], strict=True))
names = sorted(kinds, key=lambda n: (n != "original", kinds[n] == "pooled", n))
if len(names) < 2:
    st.info(f"Judge agreement compares two qrels sets of one snapshot; **{plain(snapshot)}** "
            f"has {len(names)}. Import a second judge's labels (an LLM's, say) with "
            f"{code('tcdb qrels import COLLECTION SNAPSHOT NAME FILE')}.")
    st.stop()
qrels_a = widgets.select("First judge (qrels)", names, "qrels", default="original")
qrels_b = widgets.select("Second judge (vs)", [n for n in names if n != qrels_a], "vs")
measure = widgets.pick_measure()
k = widgets.number("Top k runs", "k", 10, max_value=1_000)
p = widgets.select("RBO persistence p", P_CHOICES, "p", default="0.9") or "0.9"
relevant = widgets.number("Relevant from grade", "relevant", 1, min_value=-10, max_value=100)
if not (qrels_a and qrels_b and measure):
    st.stop()
try:
    result = data.run_operation(url, "judge_agreement", collection=collection,
                                snapshot=snapshot, qrels=qrels_a, vs=qrels_b, measure=measure,
                                k=k, p=float(p), relevant=relevant, bootstrap=BOOTSTRAP,
                                compute=False)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()

_a, _b, _measure = plain(qrels_a), plain(qrels_b), plain(measure)
if result.n_pairs == 0:
    st.info(f"{_a} and {_b} judged no (topic, document) pair in common: there is nothing to "
            "agree or disagree on. A pool's set judges what the others left out; compare two "
            "judges of the same documents.")
    st.stop()
intervals = result.intervals or {}


def _with_interval(key: str) -> str:
    interval = intervals.get(key)
    return "95 % interval " + (f"[{widgets.fmt(interval.low)}, {widgets.fmt(interval.high)}]"
                               if interval else "–")


LABELS = {"kappa": "κ", "kappa_linear": "κ linear", "kappa_quadratic": "κ quadratic",
          "alpha_ordinal": "α ordinal", "alpha_nominal": "α nominal"}
RANKS = {"tau_b": "τ-b", "tau_ap": "τ_AP", "top_k_tau_b": f"top-{k} τ-b", "rbo": "RBO"}
cols = st.columns(len(LABELS))
for col, (key, name) in zip(cols, LABELS.items(), strict=True):
    col.metric(name, widgets.fmt(result.agreement.get(key)),
               help=f"{_with_interval(key)} over topics")
cols = st.columns(len(RANKS) + 1)
for col, (key, name) in zip(cols[:-1], RANKS.items(), strict=True):
    col.metric(name, widgets.fmt(result.ranking.get(key)),
               help=f"{_with_interval(key)} over topics")
cols[-1].metric("Pairs judged by both", f"{result.n_pairs:,}")
st.caption(plain(
    f"{result.n_pairs:,} (topic, document) pairs judged in both {qrels_a} and {qrels_b} over "
    f"{result.n_topics} topics; binary figures at grade ≥ {result.relevant}; runs ranked by "
    f"mean {measure} ({result.n_runs} runs); τ_AP with {qrels_a} as the truth; RBO "
    f"extrapolated (Webber et al. 2010) to k = {result.k}, p = {result.p:g}; intervals: "
    f"percentile bootstrap over topics, {BOOTSTRAP:,} resamples, seed {result.seed}."))

st.subheader(f"Grades: {_a} (rows) vs {_b} (columns)")
cells = pd.DataFrame([{"grade_a": str(a), "grade_b": str(b), "pairs": result.confusion[i][j]}
                      for i, a in enumerate(result.labels)
                      for j, b in enumerate(result.labels)])
order = [str(g) for g in result.labels]
base = alt.Chart(cells).encode(
    x=alt.X("grade_b:O", sort=order, title=f"grade under {qrels_b}",
            axis=alt.Axis(labelAngle=0)),
    y=alt.Y("grade_a:O", sort=order[::-1], title=f"grade under {qrels_a}"))
heat = base.mark_rect().encode(
    color=alt.Color("pairs:Q", title="pairs", scale=alt.Scale(scheme="blues")),
    tooltip=[alt.Tooltip("grade_a:O", title=f"grade {qrels_a}"),
             alt.Tooltip("grade_b:O", title=f"grade {qrels_b}"),
             alt.Tooltip("pairs:Q", format=",d")])
top = float(cells["pairs"].max() or 1)
numbers = base.mark_text(fontSize=13).encode(
    text=alt.Text("pairs:Q", format=",d"),
    color=alt.condition(alt.datum.pairs > top / 2, alt.value("white"), alt.value("#263238")))
widgets.chart((heat + numbers).properties(height=60 * len(order) + 40), cells,
              f"confusion-{snapshot}-{qrels_a}-vs-{qrels_b}",
              caption=f"How to read this: each cell counts the pairs {_a} graded as its row "
              f"and {_b} as its column; on the diagonal they agree, right of it {_b} grades "
              f"higher. κ quadratic {widgets.fmt(result.agreement.get('kappa_quadratic'))}.")

st.subheader("κ and α per topic")
per_topic = pd.DataFrame([t.model_dump() for t in result.per_topic])
FIGURE_NAMES = {"kappa": "κ", "kappa_quadratic": "κ quadratic", "alpha_ordinal": "α ordinal"}
long = per_topic.melt(id_vars=["topic", "n_pairs"], value_vars=list(FIGURE_NAMES),
                      var_name="figure", value_name="value").dropna(subset=["value"])
long["figure"] = long["figure"].map(FIGURE_NAMES)
by_kappa = per_topic.sort_values("kappa_quadratic")["topic"].tolist()
dots = alt.Chart(long).mark_point(filled=True, size=70).encode(
    x=alt.X("topic:N", sort=by_kappa, axis=charts.topic_axis(len(per_topic),
                                                            "lowest κ quadratic first")),
    y=alt.Y("value:Q", title="agreement", scale=alt.Scale(domain=[
        min(0.0, float(long["value"].min()) if len(long) else 0.0), 1.0])),
    color=alt.Color("figure:N", title=None, sort=list(FIGURE_NAMES.values())),
    shape=alt.Shape("figure:N", title=None, sort=list(FIGURE_NAMES.values())),
    tooltip=["topic", "figure", alt.Tooltip("value:Q", format=".3f"),
             alt.Tooltip("n_pairs:Q", title="pairs", format=",d")],
).properties(height=charts.HEIGHT)
widgets.chart(dots + charts.zero_rule("value"), long,
              f"per-topic-agreement-{snapshot}-{qrels_a}-vs-{qrels_b}",
              caption="How to read this: one column per topic, lowest quadratic κ first; a "
              "topic low on every figure is one the two judges read differently. 1: the "
              "same grades; 0: no better than chance.")
widgets.table(per_topic, {
    "topic": c.text("topic"), "n_pairs": c.count("pairs"), "kappa": c.score("κ"),
    "kappa_linear": c.score("κ linear"), "kappa_quadratic": c.score("κ quadratic"),
    "alpha_ordinal": c.score("α ordinal"), "alpha_nominal": c.score("α nominal"),
    "kappa_binary": c.score("κ binary", f"Labels binarised at grade ≥ {result.relevant}")})

st.subheader(f"Mean {_measure}: {_a} vs {_b}")
if result.n_runs < 2:
    st.info(f"Fewer than two runs have {_measure} scores under both {code(qrels_a)} and "
            f"{code(qrels_b)}. Evaluate with "
            f"{code(f'tcdb evaluate {collection} {snapshot} --qrels {qrels_b}')}.")
    st.stop()
runs = result.runs_frame()
runs["moved"] = runs["rank_change"].map(lambda x: "climbed" if x > 0 else
                                        ("fell" if x < 0 else "same"))
runs["top_k"] = runs["run"].isin(result.top_k).map({True: f"top {k} of {qrels_a}",
                                                    False: "below"})
lo = float(min(runs["score_a"].min(), runs["score_b"].min()))
hi = float(max(runs["score_a"].max(), runs["score_b"].max()))
diagonal = alt.Chart(pd.DataFrame({"score_a": [lo, hi], "score_b": [lo, hi]})).mark_line(
    color="gray", strokeDash=[4, 4]).encode(x="score_a:Q", y="score_b:Q")
colour = alt.Color("moved:N", title=f"rank under {qrels_b}", scale=alt.Scale(
    domain=["climbed", "same", "fell"], range=["#1e6fd9", "#616161", "#d32f2f"]))
scatter = charts.named_points(
    runs, alt.X("score_a:Q", title=f"{measure} under {qrels_a}", scale=alt.Scale(zero=False)),
    alt.Y("score_b:Q", title=f"{measure} under {qrels_b}", scale=alt.Scale(zero=False)),
    "run", color=colour, by="rank_change",
    shape=alt.Shape("top_k:N", title=None),
    tooltip=["run", alt.Tooltip("score_a:Q", title=f"{measure} A", format=".4f"),
             alt.Tooltip("rank_a:Q", title="rank A"),
             alt.Tooltip("score_b:Q", title=f"{measure} B", format=".4f"),
             alt.Tooltip("rank_b:Q", title="rank B"),
             alt.Tooltip("rank_change:Q", title="rank Δ", format="+d")])
# runs that name the model family of an LLM judge of either set: ringed, and said below
circular = result.lineage.circular if result.lineage is not None else []
runs["circular"] = runs["run"].isin({flag.run for flag in circular})
rings = alt.Chart(runs[runs["circular"]]).mark_point(
    size=360, filled=False, color="#ef6c00", strokeWidth=2).encode(
    x="score_a:Q", y="score_b:Q", tooltip=["run"])
ringed = (" Orange rings: runs that name their judge's model family (circularity)."
          if circular else "")
widgets.chart(diagonal + scatter + rings, runs,
              f"ranking-{snapshot}-{qrels_a}-vs-{qrels_b}-{measure}",
              caption=f"How to read this: one point per run; on the dashed diagonal a run "
              f"scores the same under both sets, above it {_b} credits it more. Blue: it "
              f"climbs under {_b}, red: it falls; squares mark {_a}'s top {k}.{ringed} "
              f"τ-b {widgets.fmt(result.ranking.get('tau_b'))}, top-{k} τ-b "
              f"{widgets.fmt(result.ranking.get('top_k_tau_b'))}.")
for flag in circular:
    st.warning(plain(flag.line()), icon="⚠️")
st.markdown(f"**Among the top {k}** of {_a}: "
            f"{int(result.ranking.get('top_k_overlap') or 0)} also in {_b}'s top {k} · "
            f"τ-b {widgets.fmt(result.ranking.get('top_k_tau_b'))} · τ_AP "
            f"{widgets.fmt(result.ranking.get('top_k_tau_ap'))}")
st.markdown("**Runs whose rank moves most**")
widgets.table(pd.DataFrame([r.model_dump() for r in result.movers],
                           columns=["run", "score_a", "rank_a", "score_b", "rank_b",
                                    "rank_change"]), {
    "run": c.text("run"), "score_a": c.score(f"{measure} A", f"Mean {_measure} under {_a}"),
    "rank_a": c.count("rank A"),
    "score_b": c.score(f"{measure} B", f"Mean {_measure} under {_b}"),
    "rank_b": c.count("rank B"),
    "rank_change": c.signed("rank Δ", "Places gained under B (+) or lost (−)")})
if result.skipped:
    st.caption("Left out (scored under only one of the two): "
               + ", ".join(plain(tag) for tag in result.skipped))
