"""Persistence: ARP per system across snapshots, the RΔ / ER / ΔRI / p table and how to read
it, the ER-vs-ΔRI scatter with the ideal point (1, 0), per-topic Δ against the pivot for one
system, one chart per snapshot.

Each snapshot is judged by a qrels set of its own choosing (default: its designated original
qrels), as `tcdb report persistence --qrels S1=A --qrels S2=B …` does (original, then expanded,
say); a tab sets several qrels sets side by side, as `--qrels A --qrels B` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import altair as alt
import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data, longitudinal, qrels_side_by_side, widgets
from tcdb.dashboard import columns as c
from tcdb.dashboard.widgets import code, plain
from tcdb.errors import TcdbError
from tcdb.vocabulary import BELOW_PIVOT_MARK, PERSISTENCE_FIGURES, below_pivot_said

ER_RANGE = (-1.0, 3.0)  # ER drawn within; beyond, at the edge with its value in the label
SHAPES = ["circle", "diamond", "triangle-up", "square", "triangle-down", "triangle-right"]
ABOVE, BELOW = "#1f6fb2", "#e65100"
GAIN, LOSS = "#43a047", "#e53935"
DELTA_HEIGHT = 230  # px, a per-topic Δ chart with its title and axes (Streamlit fits them in)

collection, url = widgets.collection_page("Persistence over time")
labels = data.complete_labels(url, collection)
if len(labels) < 2:
    st.info(f"Persistence compares at least two snapshots; **{plain(collection)}** has "
            f"{len(labels)} complete.")
    st.stop()
chosen = widgets.multiselect("Snapshots (first = reference)", labels, "snapshots")
if len(chosen) < 2:
    st.info("Choose at least two snapshots.")
    st.stop()
runs = data.runs(url, collection)
in_all: set[str] | None = None
for label in chosen:
    present = set(runs.loc[runs["snapshot"] == label, "system"])
    in_all = present if in_all is None else in_all & present
systems = sorted(in_all or set())
if not systems:
    st.info("No system has runs in every chosen snapshot. Import runs with `tcdb run import`.")
    st.stop()
pivot_choice = widgets.select("Pivot system", systems, "pivot", default="bm25")
per_snapshot = widgets.pick_qrels_per_snapshot(collection, chosen)
measure_choice = widgets.pick_measure()
topics_choice = widgets.select("Topics", ["all", "core"], "topics", default="all",
                               help="core: only topics judged in every chosen snapshot")
if not (pivot_choice and per_snapshot and measure_choice and topics_choice):
    st.stop()
pivot, measure, topics = str(pivot_choice), str(measure_choice), str(topics_choice)  # chosen
qrels = tuple(per_snapshot[label] for label in chosen)  # one set, or one per snapshot:
QRELS = [qrels[0]] if len(set(qrels)) == 1 else dict(zip(chosen, qrels, strict=True))
qrels_said = (f"qrels {code(qrels[0])}" if len(set(qrels)) == 1 else "qrels "
              + ", ".join(f"{plain(label)}: {code(name)}" for label, name in per_snapshot.items()))
asked = {"collection": collection, "snapshots": chosen, "pivot": pivot, "measures": [measure],
         "qrels": QRELS, "topics": topics, "compute": False}  # also the per-topic Δ's
try:
    report = data.run_operation(url, "persistence", **asked)
except TcdbError as exc:
    widgets.show_error(exc)
    st.stop()
frames = data.persistence_frames(report, measure)
arp, table = frames["arp"], frames["table"]
if table.empty:
    st.info(f"No system has {plain(measure)} scores in every chosen snapshot on its qrels set "
            f"({qrels_said}). Evaluate with "
            f"{code(f'tcdb evaluate {collection} SNAPSHOT --qrels NAME --measure {measure}')}.")
    if len(frames["skipped"]):
        widgets.table(frames["skipped"], {"system": c.text("system"), "reason": c.text("why")})
    st.stop()

first, last = chosen[0], chosen[-1]
# Names from the data as literal text in captions (`plain`): no Markdown, no link.
_first, _last, _pivot, _measure = (plain(v) for v in (first, last, pivot, measure))
n_topics = report.topics.n_topics
st.caption(f"{_measure} on {qrels_said}, pivot **{_pivot}**, topics: {topics} ("
           + ", ".join(f"{plain(s)}: {n:,}" for s, n in n_topics.items()) + ")")
pivot_arp = arp[arp["system"] == pivot].set_index("snapshot")["arp"]

# Time runs along x by the snapshots' dates (2022-06, 2022-07 and 2022-09 are not evenly apart);
# when a snapshot has no date, by their order.
_dates = data.snapshots(url, collection).set_index("label")["date"]
DATED = all(pd.notna(_dates.get(label)) for label in chosen)
if DATED:
    arp = arp.assign(when=pd.to_datetime(arp["snapshot"].map(_dates)))


def time_axis(labels: list[str]) -> alt.X:
    """Snapshots along x: on a time scale with a tick at each snapshot's date, or in order."""
    if not DATED:
        return alt.X("snapshot:N", sort=labels, title=None,
                     axis=alt.Axis(labelAngle=0, labelFontSize=12))
    ticks = [pd.Timestamp(_dates[label]).isoformat() for label in labels]
    return alt.X("when:T", title=None,  # the caption says the snapshots stand at their dates
                 axis=alt.Axis(values=ticks, format="%Y-%m-%d", labelAngle=0, labelFontSize=12))

# ---------------------------------------------------------------------------- ARP per system
def _arp_over_time() -> None:
    st.subheader("ARP per system")
    top = math.ceil(float(arp["arp"].max()) * 10 + 0.5) / 10  # room above the highest line
    x = time_axis(chosen)
    system_colour = alt.Color("system:N", legend=None, scale=alt.Scale(scheme="category10"))
    lines = alt.Chart(arp).mark_line(point=True).encode(
        x=x, y=alt.Y("arp:Q", title=f"ARP ({measure})", scale=alt.Scale(domain=[0, top])),
        color=system_colour,
        strokeDash=alt.condition(alt.datum.system == pivot, alt.value([6, 3]), alt.value([1, 0])),
        tooltip=["system", "snapshot", alt.Tooltip("arp:Q", title="ARP", format=".4f")])
    spacing = ("Snapshots are placed by their dates, so a gap between them is a gap in time."
               if DATED else "Some snapshots have no date: they are spaced evenly, in order.")
    moved = table[table["to"] == last].set_index("system")["RΔ"].abs()
    ends = arp[arp["snapshot"] == last].assign(
        _moved=lambda f: f["system"].map(moved).fillna(0.0) + 10.0 * (f["system"] == pivot),
        _name=lambda f: f["system"].where(f["system"] != pivot, f"{pivot} (pivot)"))
    named = charts.runs_to_name(ends, "_moved")
    widgets.chart((lines + charts.end_labels(named, x, "arp", "_name", color=system_colour,
                                             top=top)).properties(height=charts.HEIGHT),
                  arp[["system", "snapshot", "arp"]], f"arp-{collection}-{measure}",
                  caption=f"How to read this: each system's mean {_measure} (ARP) in every "
                  "snapshot, on that snapshot's qrels and topics; the pivot is dashed. Lines that "
                  "rise or fall together say the collection got easier or harder; persistence is "
                  f"about each line's distance to {_pivot}'s. {spacing}"
                  + ("" if len(named) == len(ends) else " Named: the pivot and the "
                     f"{len(named) - 1} systems whose ARP moved most by {_last}; hover a line "
                     "for the others."))


# ------------------------------------------------------------------------------- the table
def _figures_table() -> None:
    st.subheader(f"RΔ, ER, ΔRI and p: each later snapshot against {_first}")
    marked = table["below_pivot"] & ~table["pivot"]  # ER reads backwards: said by its mark
    shown = table.assign(_system=table.system.where(~table["pivot"], table.system + " (pivot)")
                         .where(~marked, table.system + f" {BELOW_PIVOT_MARK}"))
    named = PERSISTENCE_FIGURES  # the CLI's column names too
    widgets.table(shown, {
        "_system": c.text("system"),
        "to": c.text(named["snapshot"], f"The later snapshot, compared with {_first}"),
        f"ARP {first}": c.score(f"{named['arp']} {first}", f"Mean {_measure} in {_first}"),
        "ARP": c.score(named["arp"], f"Mean {_measure} in the later snapshot"),
        "RΔ": c.score(named["result_delta"], f"ARP {_first} − ARP later: positive when the system "
                      "scores lower later"),
        "relative drop": c.decimal(named["relative_drop"], 4, f"RΔ / ARP {_first} (+: a drop)"),
        "ER": c.decimal(named["er"], 4, "Effect Ratio: the system's mean per-topic gain over the "
                        f"pivot later ÷ in {_first} (1: persisted)"),
        "ΔRI": c.decimal(named["delta_ri"], 4, f"RI in {_first} − RI later, RI = (ARP − pivot's "
                         "ARP) ÷ pivot's ARP (0: persisted)"),
        "p": c.p_value(named["p_value"], report.tests["p_value"]),
    })
    st.caption(f"p: {report.tests['p_value']}."
               + (f" {plain(below_pivot_said(report.pivot, first))}." if marked.any() else ""))
    # The example: a system below the pivot that falls and shows ER above 1 (the nearest to 2).
    backwards = table[marked & (table["ER"] > 1) & (table["RΔ"] > 0)]
    if len(backwards):
        row = backwards.loc[(backwards["ER"] - 2).abs().idxmin()]
        example = (f"{plain(row['system'])} falls from {row[f'ARP {first}']:.4f} to "
                   f"{row['ARP']:.4f} in {plain(row['to'])} while {_pivot} goes from "
                   f"{pivot_arp[first]:.4f} to {pivot_arp[row['to']]:.4f}, and shows ER "
                   f"{row['ER']:.4f}")
    else:
        example = "a system falling from 0.27 to 0.20 under a pivot steady at 0.31 shows ER 2.64"
    st.caption(
        "How to read this:\n"
        f"- **RΔ** = ARP in {_first} − ARP in the later snapshot: positive means the system scores "
        f"lower later, negative that it gained; the relative drop is RΔ as a share of its "
        f"{_first} ARP.\n"
        f"- **ER** (Effect Ratio) = the system's mean per-topic gain over {_pivot} in the later "
        f"snapshot ÷ that in {_first}. ER 1: the advantage persisted; below 1: it shrank; above 1: "
        f"it grew. **ΔRI** = RI in {_first} − RI later, RI = (ARP − {_pivot}'s ARP) ÷ {_pivot}'s "
        f"ARP: 0 is ideal, positive means the relative gain shrank. The pivot {_pivot} has no ER "
        "or ΔRI (its gain over itself is 0/0): shown as –.\n"
        "- **p**: two-sided unpaired Student t-test (equal variances, `scipy.stats.ttest_ind`, as "
        f"repro_eval) between the system's per-topic {_measure} in {_first} and in the later "
        "snapshot: did its own score change — not its gap to the pivot. Not corrected for the "
        "number of systems.\n"
        f"- **ER reads backwards below the pivot**: for a system below {_pivot} in {_first} the "
        "“gain” is a shortfall, so ER above 1 means the shortfall grew: " + example + ".")


# ------------------------------------------------------------------------------ ER vs ΔRI
def _er_against_dri() -> None:
    st.subheader("ER vs ΔRI")
    points = table[~table["pivot"]].dropna(subset=["ER", "ΔRI"])
    if points.empty:
        st.caption(f"No system has an ER: every one scores as {_pivot} does in {_first}.")
    else:
        later = chosen[1:]
        lo = max(ER_RANGE[0], min(0.0, float(points["ER"].min())))
        hi = min(ER_RANGE[1], max(2.0, float(points["ER"].max())))
        clipped = (points["ER"] < lo) | (points["ER"] > hi)
        where_from = f"in {first}"
        start = [f"below {pivot} {where_from}" if b else f"above {pivot} {where_from}"
                 for b in points["below_pivot"]]
        points = points.assign(
            _er=points["ER"].clip(lo, hi), _start=start,
            _name=points["system"].where(~clipped, points["system"] + points["ER"].map(
                lambda er: f" (ER {er:.2f})")),
            _named=points["to"] == last, _far=(points["ER"] - 1).abs() + points["ΔRI"].abs(),
            _order=points["to"].map({s: i for i, s in enumerate(later)}))
        er_x = alt.X("_er:Q", title="ER (Effect Ratio)", scale=alt.Scale(domain=[lo, hi],
                                                                          nice=False))
        dri_y = alt.Y("ΔRI:Q", title="ΔRI (Delta Relative Improvement)")
        colour = alt.Color("_start:N", title="system", scale=alt.Scale(
            domain=[f"above {pivot} {where_from}", f"below {pivot} {where_from}"],
            range=[ABOVE, BELOW]))
        shape = alt.Shape("to:N", title="snapshot", scale=alt.Scale(
            domain=later, range=[SHAPES[i % len(SHAPES)] for i in range(len(later))]))
        scatter = charts.named_points(
            points, er_x, dri_y, "_name", color=colour, shape=shape, named="_named", by="_far",
            size=110, tooltip=["system", alt.Tooltip("to:N", title="snapshot"),
                               alt.Tooltip("ER:Q", format=".4f"),
                               alt.Tooltip("ΔRI:Q", format=".4f")])
        ideal = pd.DataFrame({"_er": [1.0], "ΔRI": [0.0], "ideal": [f"pivot {pivot}"]})
        marker = alt.Chart(ideal).mark_point(size=220, color="#263238", filled=True).encode(
            x="_er:Q", y="ΔRI:Q", tooltip=["ideal"],
            shape=alt.Shape("ideal:N", title="ideal (1, 0)", scale=alt.Scale(range=["cross"]),
                            legend=alt.Legend(symbolFillColor="#263238", symbolStrokeWidth=0)))
        rules = (alt.Chart(ideal).mark_rule(strokeDash=[4, 4], color="gray").encode(x="_er:Q")
                 + alt.Chart(ideal).mark_rule(strokeDash=[4, 4], color="gray").encode(y="ΔRI:Q"))
        layers = [rules]
        if len(later) > 1:
            layers.append(alt.Chart(points).mark_line(color="#b0bec5", strokeWidth=1).encode(
                x="_er:Q", y="ΔRI:Q", detail="system:N", order="_order:Q"))
        figure = alt.layer(*layers, marker, scatter).resolve_scale(shape="independent")
        joined = (f" (shape: the snapshot; a grey line joins a system's points, named at its "
                  f"{_last} one)" if len(later) > 1 else "")
        widgets.chart(figure.properties(height=charts.SCATTER_HEIGHT),
                      points[["system", "to", "ER", "ΔRI", "below_pivot"]],
                      f"er-delta-ri-{collection}-{measure}",
                      caption=f"How to read this: one point per system and later snapshot{joined}. "
                      f"The cross is the ideal (1, 0): the same "
                      f"advantage over {_pivot} as in {_first}. Right of it the advantage grew, "
                      "left of it it shrank (backwards for the orange systems, which start below "
                      f"{_pivot}); above the dashed line the relative gain shrank, below it grew."
                      + (f" An ER outside {lo:g} to {hi:g} is drawn on the edge, its value in the "
                         "name." if clipped.any() else ""))


# ------------------------------------------------------------ system rankings across snapshots
def _rankings() -> None:
    st.subheader("System rankings across snapshots")
    RANK_BY = {"per-topic scores": "scores", "published results table": "results"}
    try:  # offer the organiser's published figures when a results table gives them all
        published = data.run_operation(url, "results", collection=collection,
                                       measures=[measure], snapshots=list(chosen))
        rank_by = widgets.select("Rank systems by", list(RANK_BY), "rank_by", sidebar=False,
                                 help="per-topic scores: the means of the runs' scores on the "
                                 "qrels above; published results table: the figures an organiser "
                                 "published (`tcdb results import`)") if published.figures \
            else "per-topic scores"
    except TcdbError:
        rank_by = "per-topic scores"
    try:
        if RANK_BY[rank_by or "per-topic scores"] == "results":
            rankings = data.run_operation(url, "ranking_across_snapshots", collection=collection,
                                          snapshots=list(chosen), measures=[measure],
                                          source="results")
        else:
            rankings = data.run_operation(url, "ranking_across_snapshots", collection=collection,
                                          snapshots=list(chosen), measures=[measure],
                                          qrels=QRELS, topics=topics, compute=False)
    except TcdbError as exc:
        widgets.show_error(exc)
        return
    ranked = rankings.measures[measure]
    pairs = pd.DataFrame([{"earlier": p.earlier, "later": p.later, "τ-b": p.tau_b, "τ-c": p.tau_c,
                           "τ_AP": p.tau_ap, "topics": p.n_topics, "systems": p.n_systems,
                           "moved": p.n_changed, "Pearson r": p.pearson_r} for p in ranked.pairs])
    if pairs.empty or pairs["τ-b"].isna().all():
        st.caption("Fewer than two systems to rank in every chosen snapshot.")
    else:
        pairs["_label"] = pairs["τ-b"].map(lambda v: "–" if pd.isna(v) else f"{v:.3f}")
        cell_x = alt.X("later:N", sort=chosen[1:], title="later snapshot",
                       axis=alt.Axis(labelAngle=0, orient="top"))
        cell_y = alt.Y("earlier:N", sort=chosen[:-1], title="earlier snapshot")
        # the plot under the top axis (~60 px) holds the legend: its title, gradient and end labels
        size = 70 * max(1, len(chosen) - 1) + 90
        ranked_by = (f"their published {_measure} (an imported results table)"
                     if rankings.source == "results" else
                     f"their mean {_measure} over {rankings.topics_said}")
        cells = alt.Chart(pairs).mark_rect(stroke="white", strokeWidth=2).encode(
            x=cell_x, y=cell_y,
            color=alt.Color("τ-b:Q", title="τ-b",
                            scale=alt.Scale(domain=[-1, 1], scheme="redblue"),
                            legend=alt.Legend(gradientLength=max(60, size - 110),
                                              values=[-1, 0, 1])),
            tooltip=["earlier", "later", *(alt.Tooltip(f"{k}:Q", format=".4f")
                                           for k in ("τ-b", "Pearson r", "τ-c", "τ_AP")),
                     "topics:Q", "systems:Q", alt.Tooltip("moved:Q", title="systems moved")])
        labels_ = alt.Chart(pairs).mark_text(fontSize=14).encode(
            x=cell_x, y=cell_y, text="_label:N",
            color=alt.condition("abs(datum['τ-b']) > 0.6", alt.value("white"),
                                alt.value("#263238")))
        widgets.chart((cells + labels_).properties(height=size),
                      pairs.drop(columns="_label"), f"rankings-{collection}-{measure}",
                      caption=f"How to read this: one cell per pair of snapshots, Kendall's τ-b "
                      f"between the systems ranked by {ranked_by} in the earlier and in the later "
                      "snapshot (hover for τ-c, τ_AP with the earlier ranking as truth, Pearson's "
                      "r between the means, and the counts). 1: the same order; 0: no relation; "
                      f"the top row compares each snapshot with {_first}. Means are rounded "
                      "first, so equal means tie.")
        moves = pd.DataFrame([{"later": p.later, "system": m.system, "rank_first": m.rank_earlier,
                               "rank_later": m.rank_later, "change": m.rank_change}
                              for p in ranked.pairs if p.against_first
                              for m in p.largest_changes])
        if len(moves):
            st.markdown(f"**Largest rank changes against {_first}**")
            widgets.table(moves, {
                "system": c.text("system"),
                "later": c.text(PERSISTENCE_FIGURES["snapshot"],
                               f"The later snapshot, compared with {_first}"),
                "rank_first": c.count(f"rank {first}", f"Rank in {_first} (1 = best)"),
                "rank_later": c.count("rank later", "Rank in the later snapshot"),
                "change": c.signed("change", "Places gained (+) or lost (−)")})


# --------------------------------------------------------------------------- per-topic Δ
def _per_topic() -> None:
    st.subheader("Per-topic Δ against the pivot")
    others = [s for s in table["system"].unique() if s != pivot]
    system = widgets.select("System for per-topic Δ", others, "system", sidebar=False)
    if system:
        _system = plain(system)
        try:
            deltas = data.run_operation(url, "per_topic_deltas", **asked).to_frame()
        except TcdbError as exc:
            widgets.show_error(exc)
            return
        mine = deltas[(deltas["system"] == system) & (deltas["measure"] == measure)]
        mine = mine[["snapshot", "topic", "topic_key", "score", "pivot_score", "delta"]]
        low = min(0.0, float(mine["delta"].min()))
        high = max(0.0, float(mine["delta"].max()))
        figures = []
        for label in chosen:
            part = mine[mine["snapshot"] == label]
            order = part.sort_values("delta", ascending=False, kind="stable")["topic"].tolist()
            above = int((part["delta"] > 0).sum())
            title = alt.Title(f"{label}: {system} above {pivot} on {above:,} of {len(part):,} "
                              "topics", anchor="start", fontSize=13, fontWeight="normal")
            bars = alt.Chart(part).mark_bar().encode(
                x=alt.X("topic:N", sort=order,
                        axis=charts.topic_axis(len(part), "largest Δ first")),
                y=alt.Y("delta:Q", title=f"Δ {measure}", scale=alt.Scale(domain=[low, high])),
                color=alt.condition(alt.datum.delta >= 0, alt.value(GAIN), alt.value(LOSS)),
                tooltip=["topic", alt.Tooltip("score:Q", title=system, format=".4f"),
                         alt.Tooltip("pivot_score:Q", title=pivot, format=".4f"),
                         alt.Tooltip("delta:Q", title="Δ", format="+.4f")])
            figures.append((bars + charts.zero_rule("delta")).properties(height=DELTA_HEIGHT,
                                                                         title=title))
        widgets.chart(figures, mine, f"per-topic-delta-{collection}-{system}-{measure}",
                      caption=f"How to read this: one bar per topic, {_system}'s {_measure} minus "
                      f"{_pivot}'s in that snapshot, largest first; green: {_system} better, red: "
                      f"{_pivot} better. ER divides the mean of a later snapshot's bars by the "
                      f"mean of {_first}'s; an advantage carried by a few tall bars is fragile.")
        try:
            change = longitudinal.topic_change(url, collection, system, first, last, measure,
                                               (qrels[0], qrels[-1]), pivot)
        except TcdbError as exc:
            widgets.show_error(exc)
            return
        st.markdown(f"**{_system} from {_first} to {_last}**, per core topic (`tcdb report "
                    "topic-deltas`)")
        order = change["topic"].tolist()
        bars = alt.Chart(change).mark_bar().encode(
            x=alt.X("topic:N", sort=order,
                    axis=charts.topic_axis(len(change), "largest gain first")),
            # two short lines: one long title is longer than the short y axis, and is cut
            y=alt.Y("delta:Q", title=[f"Δ {measure}", f"{last} − {first}"]),
            color=alt.condition(alt.datum.delta >= 0, alt.value(GAIN), alt.value(LOSS)),
            tooltip=["topic", "topic_key", alt.Tooltip("delta:Q", title=system, format="+.4f"),
                     alt.Tooltip("pivot_delta:Q", title=pivot, format="+.4f")])
        ticks = alt.Chart(change).mark_tick(color="#263238", thickness=2).encode(
            x=alt.X("topic:N", sort=order), y="pivot_delta:Q",
            tooltip=["topic", alt.Tooltip("pivot_delta:Q", title=pivot, format="+.4f")])
        widgets.chart((bars + ticks + charts.zero_rule("delta")).properties(height=DELTA_HEIGHT),
                      change, f"topic-change-{collection}-{system}-{measure}",
                      caption=f"How to read this: one bar per topic in both snapshots, {_system}'s "
                      f"{_measure} in {_last} minus in {_first}, largest gain first; the dark "
                      f"tick is {_pivot}'s own change on that topic. Bars that follow the ticks "
                      "moved with the collection, not with the system.")


# The page's parts, one at a time: a projector shows a tab whole (the page was ~4,700 px
# tall at 1000 px wide).
PARTS: dict[str, Callable[[], None]] = {
    "ARP over time": _arp_over_time, "RΔ · ER · ΔRI · p": _figures_table,
    "ER vs ΔRI": _er_against_dri, "Rankings": _rankings, "Per-topic Δ": _per_topic,
    "Qrels sets": lambda: qrels_side_by_side.section(url, collection, chosen, pivot, measure,
                                                     topics)}
for _tab, _part in zip(st.tabs(list(PARTS)), PARTS.values(), strict=True):
    with _tab:
        _part()
if len(frames["skipped"]):
    with st.expander(f"{len(frames['skipped'])} system(s) left out"):
        widgets.table(frames["skipped"], {"system": c.text("system"), "reason": c.text("why")})
