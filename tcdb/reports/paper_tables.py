"""What the reports' tables for papers share (each result builds its own `paper_table`).

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
from tcdb.reports.aggregates import SUM_WHY, aggregate_note
from tcdb.vocabulary import (
    CORRECTIONS,
    SIGNIFICANCE_TESTS,
)

if TYPE_CHECKING:
    pass

BETTER, WORSE = "†", "‡"


def letter(i: int) -> str:
    """a, b, …, z, aa, ab, …: a run's letter."""
    return ascii_lowercase[i] if i < 26 else letter(i // 26 - 1) + ascii_lowercase[i % 26]


def test_said(test: str, correction: str | None) -> str:
    words = SIGNIFICANCE_TESTS.get(test, test)
    if correction is None:
        return words
    return f"{words}, {CORRECTIONS.get(correction, correction)} correction"


def topics_said(selection: str | None) -> str:
    """A caption's topics: a named set, else every judged topic (all and core alike on one
    snapshot)."""
    from tcdb.reports.fields import topic_set_name

    name = topic_set_name(selection)
    return "every judged topic" if name is None else f"topic set {name}"


def summed_note(measure: str, aggregate: str, n_topics: int | None = None) -> str:
    """` NumRet is the sum over the n topics, not the mean (…); significance is tested on
    per-topic values.` for a count; nothing for a mean."""
    note = aggregate_note(measure, aggregate, n_topics)
    return f" {note[0].upper()}{note[1:]}; significance is tested on per-topic values." \
        if note else ""


def counts_note(measures: list[str]) -> str:
    """` NumRet, NumRel: sums over the topics, not means (…).` for the counts among `measures`
    (a table of several measures); nothing when none is a count."""
    from tcdb.analysis.means import sums_over_topics

    counts = [m for m in measures if sums_over_topics(m)]
    return (f" {', '.join(counts)}: sums over the topics, not means ({SUM_WHY})."
            if counts else "")


def bootstrap_note(samples: int, seed: int) -> list[str]:
    return ([f"95 % CI: percentile bootstrap over topics, {samples} samples, seed {seed}."]
            if samples else [])


def number(value: float | None) -> str:
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
                      caption=f"{full}; best in bold.{counts_note(measures)}", label=label,
                      lineage=lineage)
