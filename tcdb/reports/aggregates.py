"""How a run's figure over the topics is said: a mean, or — for a count (NumRet, NumRel,
NumRelRet, NumQ…) — a sum, as trec_eval's `all` line and ir_measures' `calc_aggregate` give it.

Why one wording: a reader who sees `NumRet 1500` under a header that says "mean" takes it for a
per-topic figure. Every front end (CLI titles and legends, paper captions, the dashboard's
labels) says it with these words; the JSON carries the result's `aggregate` ("sum" or "mean").
`tcdb.analysis.means.aggregate_word` decides which a measure is.
"""

from __future__ import annotations

SUM = "sum"
SUM_WHY = "a count, summed as trec_eval's all line sums it"


def figure_said(measure: str, aggregate: str) -> str:
    """`mean nDCG@10`, or `NumRet summed over the topics`: a column or axis title."""
    return f"{measure} summed over the topics" if aggregate == SUM else f"mean {measure}"


def aggregate_note(measure: str, aggregate: str, n_topics: int | None = None) -> str | None:
    """For a count, the sentence a legend or caption adds (None for a mean): the figure is the
    sum over the topics, not the mean, and why."""
    if aggregate != SUM:
        return None
    over = f"the {n_topics:,} topics" if n_topics is not None else "the topics"
    return f"{measure} is the sum over {over}, not the mean ({SUM_WHY})"
