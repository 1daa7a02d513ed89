"""`tcdb report agreement POOL`: two assessors' agreement on a pool (κ, confusion, τ)."""

from __future__ import annotations

import typer

from tcdb.cli.output import console, err_console, print_json, print_table


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def agreement(
    pool: str = typer.Argument(..., help="Pool name."),
    versus: str = typer.Option(..., "--vs", help="The other assessor's qrels set (e.g. an "
                               "LLM judge's, imported with `tcdb qrels import`)."),
    qrels: str | None = typer.Option(None, "--qrels", help="The first assessor's qrels set "
                                     "(default: the pool's pooled set)."),
    collection: str | None = typer.Option(None, "--collection",
                                          help="The pool's collection, when ambiguous."),
    snapshot: str | None = typer.Option(None, "--snapshot",
                                        help="The pool's snapshot, when ambiguous."),
    measure: str = typer.Option("AP", "--measure", help="Measure the systems are ranked by."),
    run: list[str] | None = typer.Option(None, "--run", help="Only these run tags (repeat; "
                                         "default every run of the snapshot)."),
    relevant: int = typer.Option(1, "--relevant", help="Lowest grade that counts as relevant "
                                 "(binary κ)."),
    weights: str = typer.Option("linear", "--weights", help="Graded κ weights: linear, "
                                "quadratic or none."),
    topics: str | None = typer.Option(None, "--topics", metavar="SET",
                                      help="Only the topics of this topic set (κ and τ)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Assessor agreement on a pool: Cohen's κ (binary, graded weighted), the confusion
    matrix, and τ between the system rankings under each assessor's qrels."""
    from tcdb.reports.assessor_agreement import assessor_agreement_report

    with err_console.status("comparing assessors …"):
        report = assessor_agreement_report(pool, versus, qrels, collection=collection,
                                           snapshot=snapshot, measure=measure, runs=run,
                                           relevant=relevant, weights=weights, topics=topics)
    if json_output:
        print_json(report)
        return
    console.print(
        f"pool {report['pool']} · {report['qrels']} vs {report['versus']}"
        + (f" · topic set {report['topic_set']}" if report["topic_set"] else "") + " · "
        f"{report['n_overlap']:,} document(s) judged by both (of {report['n_documents']:,}; "
        f"{report['n_judged'][0]:,} and {report['n_judged'][1]:,} judged) · κ binary "
        f"(grade ≥ {report['relevant']}) {_f(report['kappa_binary'])} · κ graded "
        f"({report['weights']}) {_f(report['kappa_graded'])} · unweighted "
        f"{_f(report['kappa_graded_unweighted'])}", highlight=False)
    labels = report["labels"]
    print_table([f"{report['qrels']} \\ {report['versus']}", *map(str, labels)],
                [[str(g), *row] for g, row in zip(labels, report["confusion"], strict=True)],
                title="confusion matrix (grades)")
    console.print(f"system rankings by {report['measure']} over {report['n_runs']} runs: "
                  f"τ-b {_f(report['tau_b'])} · τ_AP {_f(report['tau_ap'])}",
                  highlight=False)
