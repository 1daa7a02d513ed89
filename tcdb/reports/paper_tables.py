"""The reports with significance tests as tables for papers (`Result.paper_table` overrides).

Conventions, as ranx's reports: one row per run or system, the best value of each figure column
in bold, significance as superscript marks explained under the table, the caption naming the
measure, qrels, topics, test and correction. Against a baseline the marks are † (p < α, better)
and ‡ (p < α, worse); between all pairs each run has a letter and carries the letters of the
runs it is significantly better than; in persistence † marks a later ARP that differs from the
first snapshot's (unpaired t-test) and ‡ one the paired test on the core topics finds.
"""

from __future__ import annotations

from string import ascii_lowercase
from typing import TYPE_CHECKING, Any

from tcdb.operations.paper import PaperTable, lineage_caption
from tcdb.reports.aggregates import SUM_WHY, aggregate_note, figure_said
from tcdb.vocabulary import (
    BELOW_PIVOT_MARK,
    CORRECTIONS,
    PERCENTILE_BOOTSTRAP,
    SIGNIFICANCE_TESTS,
    TAU_FIGURES,
    below_pivot_said,
    bootstrap_said,
    tau_legend,
)

if TYPE_CHECKING:
    from tcdb.reports.compare_result import CompareResult
    from tcdb.reports.leaderboard import LeaderboardResult
    from tcdb.reports.persistence import PersistenceResult
    from tcdb.reports.reusability import ReusabilityResult

BETTER, WORSE = "†", "‡"


def letter(i: int) -> str:
    """a, b, …, z, aa, ab, …: a run's letter."""
    return ascii_lowercase[i] if i < 26 else letter(i // 26 - 1) + ascii_lowercase[i % 26]


def _test(test: str, correction: str | None) -> str:
    words = SIGNIFICANCE_TESTS.get(test, test)
    if correction is None:
        return words
    return f"{words}, {CORRECTIONS.get(correction, correction)} correction"


def compare_paper(result: CompareResult, test: str = "t") -> PaperTable:
    """Runs with their mean; marks from the pairs' corrected p-values of `test`."""
    runs = [r.run for r in result.runs]
    means = {r.run: r.mean for r in result.runs}
    baseline = result.family.baseline if result.family.design == "baseline" else None
    marks: dict[str, str] = dict.fromkeys(runs, "")
    for pair in result.pairs:
        p = getattr(pair, f"p_{test}_corrected")
        a, b = pair.run_a, pair.run_b
        if p is None or p >= result.alpha or means[a] is None or means[b] is None \
                or means[a] == means[b]:
            continue
        winner, loser = (a, b) if means[a] > means[b] else (b, a)  # type: ignore[operator]
        if baseline is not None:
            other = a if b == baseline else b
            marks[other] += BETTER if winner == other else WORSE
        else:
            marks[winner] += letter(runs.index(loser))
    if baseline is None:
        marks = {run: "".join(sorted(m, key=lambda c: (len(c), c))) for run, m in marks.items()}
    boot = bool(result.bootstrap)
    columns = ([] if baseline else ["#"]) + ["run", "system", result.measure] + (
        ["95 % CI low", "95 % CI high"] if boot else [])
    rows = [([] if baseline else [letter(i)]) + [r.run, r.system, r.mean] + (
        [r.ci_low, r.ci_high] if boot else []) for i, r in enumerate(result.runs)]
    how = _test(test, result.correction)
    design = {"baseline": f"each run vs the baseline {baseline}",
              "vs-earlier": "each run vs the runs submitted before it",
              "all-pairs": "all pairs"}[result.family.design]
    if baseline:
        legend = (f"{BETTER} / {WORSE}: significantly better / worse than the baseline "
                  f"{baseline} (p < {result.alpha:g}, {how}).")
    else:
        legend = (f"Superscripts: the letters of the runs this run is significantly better "
                  f"than (p < {result.alpha:g}, {how} within each family: {design}).")
    topics = _topics_said(result.topic_set)
    figure = figure_said(result.measure, result.aggregate)
    caption = (f"{figure[0].upper()}{figure[1:]} on {result.collection} {result.snapshot}, "
               f"qrels {result.qrels}, {topics} ({result.n_topics} topics); best in bold. "
               f"{legend}{_summed(result.measure, result.aggregate, result.n_topics)}")
    return PaperTable(columns=columns, rows=rows, figures={result.measure: True},
                      marks=[{result.measure: marks[r.run]} for r in result.runs],
                      caption=caption, label="tab:compare", lineage=result.lineage,
                      notes=_bootstrap_note(result.bootstrap, result.seed))


def _topics_said(selection: str | None) -> str:
    """A caption's topics: a named set, else every judged topic (all and core alike on one
    snapshot)."""
    from tcdb.reports.fields import topic_set_name

    name = topic_set_name(selection)
    return "every judged topic" if name is None else f"topic set {name}"


def _summed(measure: str, aggregate: str, n_topics: int | None = None) -> str:
    """` NumRet is the sum over the n topics, not the mean (…); significance is tested on
    per-topic values.` for a count; nothing for a mean."""
    note = aggregate_note(measure, aggregate, n_topics)
    return f" {note[0].upper()}{note[1:]}; significance is tested on per-topic values." \
        if note else ""


def _counts_note(measures: list[str]) -> str:
    """` NumRet, NumRel: sums over the topics, not means (…).` for the counts among `measures`
    (a table of several measures); nothing when none is a count."""
    from tcdb.analysis.means import sums_over_topics

    counts = [m for m in measures if sums_over_topics(m)]
    return (f" {', '.join(counts)}: sums over the topics, not means ({SUM_WHY})."
            if counts else "")


def _bootstrap_note(samples: int, seed: int) -> list[str]:
    return ([f"95 % CI: percentile bootstrap over topics, {samples} samples, seed {seed}."]
            if samples else [])


def leaderboard_paper(result: LeaderboardResult) -> PaperTable:
    """Runs in submission order; † on a new SOTA significantly better than the one it
    replaced."""
    m = result.measure
    rows = [[r.run, r.system, r.submitted, r.mean, "yes" if r.is_sota else "",
             r.previous_sota, r.p_corrected] for r in result.runs]
    marks = [{m: BETTER if r.is_sota and r.significant else ""} for r in result.runs]
    how = _test(result.test, result.correction)
    topics = _topics_said(result.topic_set)
    caption = (f"Leaderboard over time: {figure_said(m, result.aggregate)} on "
               f"{result.collection} {result.snapshot}, "
               f"qrels {result.qrels}, {topics} ({result.n_topics} topics), in submission "
               f"order; best in bold. {BETTER}: a new state of the art significantly better "
               f"than the one it replaced (p < {result.alpha:g}, {how} within each new entry's "
               "family of earlier SOTAs; p: corrected)."
               f"{_summed(m, result.aggregate, result.n_topics)}")
    return PaperTable(columns=["run", "system", "submitted", m, "SOTA", "replaces", "p"],
                      rows=rows, figures={m: True}, marks=marks, p_columns=["p"],
                      caption=caption, label="tab:leaderboard", lineage=result.lineage)


def persistence_paper(result: PersistenceResult, alpha: float = 0.05) -> PaperTable:
    """One block of systems per measure: ARP per snapshot (bold best), and for each later
    snapshot RΔ, ER and ΔRI against the pivot; † on a later ARP whose change from the first
    snapshot is significant (unpaired t-test), ‡ with the paired one on the core topics."""
    first, later = result.snapshots[0], result.snapshots[1:]
    columns = ["system", *(f"ARP {s}" for s in result.snapshots)]
    for s in later:
        columns += [f"RΔ {s}", f"ER {s}", f"ΔRI {s}"]
    rows: list[list[Any]] = []
    marks: list[dict[str, str]] = []
    groups: list[str | None] = []
    multi = len(result.measures) > 1
    for measure, block in result.measures.items():
        for record in block.systems:
            name = record.system + (" (pivot)" if record.is_pivot else "")
            row: list[Any] = [name, *(record.arp.get(s) for s in result.snapshots)]
            mark: dict[str, str] = {}
            for s in later:
                row += [record.result_delta.get(s), record.er.get(s), record.delta_ri.get(s)]
                if record.er_backwards and record.er.get(s) is not None:
                    mark[f"ER {s}"] = BELOW_PIVOT_MARK
                p = record.p_value.get(s)
                paired = (record.p_value_paired or {}).get(s)
                mark[f"ARP {s}"] = ((BETTER if p is not None and p < alpha else "") +
                                    (WORSE if paired is not None and paired < alpha else ""))
            rows.append(row)
            marks.append(mark)
            groups.append(measure if multi else None)
    measures = ", ".join(result.measures)
    qrels = ", ".join(f"{s}: {q}" for s, q in result.qrels.items())
    n = ", ".join(f"{s}: {k}" for s, k in result.topics.n_topics.items())
    legend = (f"{BETTER}: ARP differs significantly from {first} (p < {alpha:g}, "
              f"{SIGNIFICANCE_TESTS['unpaired_t']}, no correction)")
    if any(r.p_value_paired for b in result.measures.values() for r in b.systems):
        legend += (f"; {WORSE}: so does the {SIGNIFICANCE_TESTS['t']} on the core topics "
                   "(no correction)")
    if any(m.get(f"ER {s}") for m in marks for s in later):
        legend += f"; {below_pivot_said(result.pivot, first)}"
    caption = (f"Persistence of {measures} on {result.collection}: ARP per snapshot (best in "
               f"bold), and for each later snapshot against {first} the result delta RΔ, "
               f"Effect Ratio ER and ΔRI against the pivot {result.pivot}; qrels {qrels}; "
               f"topics {result.topics.selection} ({n}). {legend}.")
    summed = [m for m, block in result.measures.items() if block.aggregate == "sum"]
    if summed:
        caption += (f" ARP of {', '.join(summed)}: the sum over topics (a count, as "
                    "trec_eval's all line), not the mean.")
    return PaperTable(columns=columns, rows=rows,
                      figures={f"ARP {s}": True for s in result.snapshots}, marks=marks,
                      groups=groups, caption=caption, label="tab:persistence",
                      lineage=result.lineage, notes=result.warnings)


def reusability_paper(result: ReusabilityResult) -> PaperTable:
    """Runs' scores and ranks under qrels A and B per measure; the caption holds each measure's
    τ (with the bootstrap interval when asked)."""
    a, b = result.qrels, result.vs
    columns = ["run", f"score {a}", f"rank {a}", f"score {b}", f"rank {b}", "rank change",
               f"new relevant top {result.depth}"]
    rows: list[list[Any]] = []
    groups: list[str | None] = []
    taus = []
    for measure, block in result.measures.items():
        for run in block.runs:
            rows.append([run.run, run.score_a, run.rank_a, run.score_b, run.rank_b,
                         run.rank_change, run.new_relevant_top_k])
            groups.append(measure)
        tau = f"{measure}: " + ", ".join(f"{name} {_num(getattr(block, key))}"
                                         for key, name in TAU_FIGURES.items())
        interval = (block.bootstrap or {}).get("kendall_tau")
        if interval is not None:
            tau += (f" ({TAU_FIGURES['kendall_tau']} {100 * (1 - interval.alpha):g} % CI "
                    f"[{_num(interval.low)}, {_num(interval.high)}], {PERCENTILE_BOOTSTRAP}, "
                    f"{bootstrap_said(interval.n_samples, result.seed or 0)})")
        taus.append(tau)
    caption = (f"Reusability of {result.collection} {result.snapshot}: run rankings under "
               f"qrels {a} vs {b}, topics {result.topics} ({result.n_topics} topics); best "
               f"scores in bold. {'; '.join(taus)}. {tau_legend(f'the ranking under {b}')}."
               f"{_counts_note(list(result.measures))}")
    return PaperTable(columns=columns, rows=rows,
                      figures={f"score {a}": True, f"score {b}": True}, groups=groups,
                      caption=caption, label="tab:reusability", lineage=result.lineage)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def means_paper(means: list[Any], caption: str, lineage: Any, label: str) -> PaperTable:
    """Means of runs (rows) × measures (columns), for `scores` and `evaluate`."""
    measures = list(dict.fromkeys(m.measure for m in means))
    runs = list(dict.fromkeys(m.run for m in means))
    value = {(m.run, m.measure): m.value for m in means}
    system = {m.run: m.system for m in means}
    rows = [[run, system[run], *(value.get((run, m)) for m in measures)] for run in runs]
    full = "; ".join(p for p in (caption, lineage_caption(lineage)) if p)
    return PaperTable(columns=["run", "system", *measures], rows=rows,
                      figures=dict.fromkeys(measures, True),
                      caption=f"{full}; best in bold.{_counts_note(measures)}", label=label,
                      lineage=lineage)
