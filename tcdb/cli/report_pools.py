"""`tcdb report agreement POOL`: two assessors' agreement on a pool (κ, confusion, τ)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, print_table, topics_said

if TYPE_CHECKING:
    from tcdb.reports.assessor_agreement import AgreementResult


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _show_agreement(report: AgreementResult) -> None:
    console.print(
        f"pool {report.pool} · {report.qrels} vs {report.vs}"
        + topics_said(report.topics) + " · "
        f"{report.n_overlap:,} document(s) judged by both (of {report.n_documents:,}; "
        f"{report.n_judged[0]:,} and {report.n_judged[1]:,} judged) · κ binary "
        f"(grade ≥ {report.relevant}) {_f(report.kappa_binary)} · κ graded "
        f"({report.weights}) {_f(report.kappa_graded)} · unweighted "
        f"{_f(report.kappa_graded_unweighted)}", highlight=False)
    labels = report.labels
    print_table([f"{report.qrels} \\ {report.vs}", *map(str, labels)],
                [[str(g), *row] for g, row in zip(labels, report.confusion, strict=True)],
                title="confusion matrix (grades)")
    console.print(f"system rankings by {report.measure} over {report.n_runs} runs: "
                  f"τ-b {_f(report.tau_b)} · τ_AP {_f(report.tau_ap)}", highlight=False)


agreement = derive.command("assessor_agreement", show=_show_agreement)
