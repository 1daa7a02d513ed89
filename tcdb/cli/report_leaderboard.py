"""`tcdb report leaderboard`: runs by submission date, the SOTA chain, and whether each new state
of the art was significantly better than the one it replaced."""

from __future__ import annotations

from typing import Any

import typer

from tcdb.cli.output import console, format_p, print_json, print_table
from tcdb.vocabulary import Correction, PairedTest


def leaderboard(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    measure: str = typer.Option(..., "--measure", "-m", help="Measure."),
    qrels: str = typer.Option("original", "--qrels", help="Qrels set name."),
    test: str = typer.Option(PairedTest.t.value, "--test",
                             help=f"Paired test of each step: {', '.join(PairedTest)}."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    correction: str = typer.Option(
        Correction.holm.value, "--correction",
        help=f"Correction within each new entry's family (it vs every earlier SOTA): "
        f"{', '.join(Correction)}."),
    topics: str | None = typer.Option(None, "--topics", metavar="SET",
                                      help="Only the topics of this topic set."),
    runs: list[str] | None = typer.Option(
        None, "--run", help="Only these runs (repeat; default: every run, each needs a "
        "submitted date)."),
    permutations: int = typer.Option(10_000, "--permutations", metavar="N",
                                     help="Resamples of the randomisation test."),
    seed: int = typer.Option(0, "--seed", help="Seed of the randomisation test."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Leaderboard over time: each run whose mean beats every earlier run's is a new SOTA;
    is it significantly better than the SOTA it replaced (and than every earlier SOTA)?

    Means are compared after rounding (equal means tie; a tie is no new SOTA); runs submitted
    the same day are not earlier than one another. Each new SOTA is tested against every
    earlier SOTA, corrected within that family.
    """
    from tcdb.reports.leaderboard import leaderboard_report

    report = leaderboard_report(collection, snapshot, measure, qrels, test, alpha, correction,
                                topics=topics, runs=runs or None, permutations=permutations,
                                seed=seed)
    if json_output:
        print_json(report)
        return
    show_leaderboard(report)


def show_leaderboard(report: Any) -> None:
    """The runs by date, then the chain in one line; every line fits 80 columns."""
    where = f" · topic set {report['topic_set']}" if report["topic_set"] else ""
    console.print(f"{report['collection']} / {report['snapshot']} · qrels {report['qrels']} · "
                  f"{report['measure']} · {report['n_topics']} topics{where}", highlight=False,
                  markup=False)
    rows = []
    for r in report["runs"]:
        step = r["previous_sota"] is not None
        rows.append([r["submitted"], r["run"], r["mean"], "new" if r["is_sota"] else "",
                     r["previous_sota"] or "", format_p(r["p_corrected"]) if step else "",
                     _yes(r["significant"]), _yes(r["significant_vs_all"])])
    print_table(["submitted", "run", "mean", "SOTA", "vs SOTA", "p", "sig.", "vs all"], rows,
                title=f"{report['test']} test vs every earlier SOTA, {report['correction']} "
                f"within each family, α = {report['alpha']:g}")
    console.print(f"SOTA chain: {' → '.join(report['chain'])}; {report['n_significant']} of "
                  f"{report['n_steps']} steps significant vs the previous SOTA", highlight=False,
                  markup=False)


def _yes(flag: bool | None) -> str:
    return "" if flag is None else ("yes" if flag else "no")
