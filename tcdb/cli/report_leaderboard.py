"""`tcdb report leaderboard`: runs by submission date, the SOTA chain, and whether each new state
of the art was significantly better than the one it replaced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, format_p, print_table, topics_said
from tcdb.reports.aggregates import aggregate_note, figure_said

if TYPE_CHECKING:
    from tcdb.reports.leaderboard import LeaderboardResult


def show_leaderboard(report: LeaderboardResult) -> None:
    """The runs by date, then the chain in one line; every line fits 80 columns."""
    where = topics_said(report.topic_set)
    console.print(f"{report.collection} / {report.snapshot} · qrels {report.qrels} · "
                  f"{report.measure} · {report.n_topics} topics{where}", highlight=False,
                  markup=False)
    rows = []
    for r in report.runs:
        step = r.previous_sota is not None
        rows.append([r.submitted, r.run, r.mean, "new" if r.is_sota else "",
                     r.previous_sota or "", format_p(r.p_corrected) if step else "",
                     _yes(r.significant), _yes(r.significant_vs_all)])
    print_table(["submitted", "run", report.aggregate, "SOTA", "vs SOTA", "p", "sig.",
                 "vs all"], rows,
                title=f"{figure_said(report.measure, report.aggregate)}; {report.test} test "
                f"vs every earlier SOTA, {report.correction} within each family, "
                f"α = {report.alpha:g}")
    summed = aggregate_note(report.measure, report.aggregate, report.n_topics)
    if summed:
        console.print(f"{report.aggregate}: {summed}; the tests compare per-topic values",
                      highlight=False, markup=False)
    console.print(f"p: {report.tests['p_corrected']}", highlight=False, markup=False)
    console.print(f"SOTA chain: {' → '.join(report.chain)}; {report.n_significant} of "
                  f"{report.n_steps} steps significant vs the previous SOTA", highlight=False,
                  markup=False)


def _yes(flag: bool | None) -> str:
    return "" if flag is None else ("yes" if flag else "no")


leaderboard = derive.command("leaderboard", show=show_leaderboard)
