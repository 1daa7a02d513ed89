"""`tcdb report topic-deltas` and `tcdb report ranking-agreement`: one system between two
snapshots, topic by topic. Registered on `tcdb report` by `tcdb.cli.report`; the commands are
derived from the operations (`tcdb.cli.derive`), this module only prints their results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tcdb.cli import derive
from tcdb.cli.output import console, err_console, format_cell, print_table

if TYPE_CHECKING:
    from tcdb.reports.ranking_agreement import RankingAgreementResult
    from tcdb.reports.topic_deltas import TopicDeltasResult


def split_snapshots(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """`--snapshots a b` arrives as one value per option; accept commas and spaces too."""
    if fields.get("snapshots"):
        fields["snapshots"] = [part for value in fields["snapshots"]
                               for part in value.replace(",", " ").split() if part]
    return fields


def _f(value: float | None) -> Any:
    return "–" if value is None else value


def _n(value: float | None) -> str:
    """A mean in a sentence, as the tables show numbers (`format_cell`: 4 decimals, – for none)."""
    return format_cell(value)


def _in_set(topic_set: str | None) -> str:
    """` in topic set NAME`; nothing for all and core (the report is over core topics)."""
    from tcdb.reports.fields import topic_set_name

    chosen = topic_set_name(topic_set)
    return f" in topic set {chosen}" if chosen else ""


def _show_topic_deltas(report: TopicDeltasResult) -> None:
    a, b = report.snapshots
    columns = [f"topic {a}", f"topic {b}", a, b, "Δ"]
    if report.pivot:
        columns += [f"pivot {a}", f"pivot {b}", "pivot Δ"]
    rows = []
    for row in report.topics:
        cells = [row.topic[a], row.topic[b], row.score_a, row.score_b, row.delta]
        if report.pivot:
            cells += [row.pivot_a, row.pivot_b, row.pivot_delta]
        rows.append(cells)
    pivot = f" · pivot {report.pivot}" if report.pivot else ""
    print_table(columns, rows, title=f"{report.collection} · {report.system} · "
                f"{report.measure} · {b} − {a} · {report.n_topics} core topics"
                f"{_in_set(report.topic_set)}{pivot}")
    console.print(f"mean Δ per topic {_n(report.mean_delta)} ({report.improved} improved, "
                  f"{report.declined} declined, {report.unchanged} unchanged)"
                  + (f"; pivot mean Δ per topic {_n(report.pivot_mean_delta)}" if report.pivot
                     else ""),
                  highlight=False, markup=False)
    if report.sum_delta is not None:  # a count: trec_eval reports its sum over the topics
        console.print(f"Δ of the sum over the {report.n_topics} topics {_n(report.sum_delta)}"
                      + (f"; pivot {_n(report.pivot_sum_delta)}"
                         if report.pivot_sum_delta is not None else "")
                      + f" ({report.measure} is a count, summed as trec_eval's all line sums "
                      "it)", highlight=False, markup=False)
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", highlight=False, markup=False)


def _show_ranking_agreement(report: RankingAgreementResult) -> None:
    a, b = report.snapshots
    print_table([f"topic {a}", f"topic {b}", f"docs {a}", f"docs {b}", "common", "KTU", "RBO",
                 "note"],
                [[r.topic[a], r.topic[b], r.n_first, r.n_later, r.common, _f(r.ktu), _f(r.rbo),
                  r.reason or ""] for r in report.topics],
                title=f"{report.collection} · {report.system} · runs "
                f"{report.runs[a]} ({a}) vs {report.runs[b]} ({b}) · top "
                f"{report.depth} · RBO p {report.rbo_p}")
    console.print(f"mean KTU {_n(report.mean_ktu)} over {report.n_ktu} topics · mean RBO "
                  f"{_n(report.mean_rbo)} over {report.n_rbo} topics "
                  f"({report.n_topics} core topics{_in_set(report.topic_set)})", highlight=False,
                  markup=False)


topic_deltas = derive.command("topic_deltas", show=_show_topic_deltas, prepare=split_snapshots)
ranking_agreement = derive.command("ranking_agreement", show=_show_ranking_agreement,
                                   prepare=split_snapshots)
