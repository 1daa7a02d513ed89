"""`tcdb report diff-runs`: two runs topic by topic, and one topic's rankings side by side.
Registered on `tcdb report` by `tcdb.cli.report`; the command is derived from the operation
(`tcdb.reports.diff_runs`), this module only prints its result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tcdb.cli import derive
from tcdb.cli.output import console, format_cell, print_table, topics_said

if TYPE_CHECKING:
    from tcdb.reports.diff_runs import DiffRunsResult, RankedDocument

UNJUDGED = "unjudged"


def _grade(doc: RankedDocument | None) -> Any:
    if doc is None:
        return ""
    return UNJUDGED if doc.grade is None else doc.grade


def _other(doc: RankedDocument | None) -> Any:
    if doc is None:
        return ""
    return "–" if doc.other_rank is None else doc.other_rank


def _show(report: DiffRunsResult) -> None:
    a, b = report.run_a, report.run_b
    print_table(["topic", a, b, "A − B"],
                [[t.topic, t.score_a, t.score_b, t.difference] for t in report.topics],
                title=f"{report.collection} / {report.snapshot} · {report.measure} · qrels "
                f"{report.qrels}{topics_said(report.topic_set)} · A {a} vs B {b} · "
                f"{report.n_topics} topics, largest |A − B| first")
    console.print(f"mean {report.measure}: A {format_cell(report.mean_a)}, B "
                  f"{format_cell(report.mean_b)}; A better on {report.a_better} topics, B on "
                  f"{report.b_better}, tied on {report.tied}", highlight=False, markup=False,
                  emoji=False)
    ranks = report.rankings
    if ranks is None:
        return
    query = f" “{ranks.query}”" if ranks.query else ""
    print_table(["rank", f"A: {a}", "A grade", "B has it at", f"B: {b}", "B grade",
                 "A has it at"],
                [[p.rank, p.a.document if p.a else "", _grade(p.a), _other(p.a),
                  p.b.document if p.b else "", _grade(p.b), _other(p.b)] for p in ranks.ranks],
                title=f"topic {ranks.topic}{query} · {report.measure} A "
                f"{format_cell(ranks.score_a)}, B {format_cell(ranks.score_b)} · "
                f"{ranks.n_relevant} relevant in qrels {report.qrels} · top {report.depth} in "
                "trec_eval's order (– : the other run does not rank it)")
    seen: dict[str, RankedDocument] = {}
    for pair in ranks.ranks:
        for doc in (pair.a, pair.b):
            if doc is not None and doc.snippet is not None:
                seen.setdefault(doc.document, doc)
    if seen:
        print_table(["document", "grade", "text"],
                    [[d.document, _grade(d), d.snippet] for d in seen.values()],
                    title=f"the {len(seen)} documents above: the start of their text")


diff_runs = derive.command("diff_runs", show=_show)
