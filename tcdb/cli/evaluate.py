"""`tcdb evaluate`: per-topic scores with ir_measures, stored; only missing ones are computed."""

from __future__ import annotations

import typer

from tcdb.cli.output import console, print_json


def evaluate(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    qrels: str = typer.Option("original", "--qrels", help="Qrels set name."),
    runs: list[str] | None = typer.Option(None, "--run", help="Run tag (repeat; default all)."),
    measures: list[str] = typer.Option(..., "--measure", "-m",
                                       help="ir_measures name, e.g. nDCG@10, AP (repeat)."),
    residual_of: str | None = typer.Option(
        None, "--residual-of", metavar="QRELS",
        help="Remove from every ranking the documents this qrels set judged (NAME, or "
        "SNAPSHOT/NAME of another snapshot) before scoring, as TREC-COVID's residual "
        "evaluation; the scores are kept apart from the run's own."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Evaluate runs of a snapshot against a qrels set and print the means (trec_eval -c)."""
    from tcdb.cli.scores import show_means
    from tcdb.evaluation import evaluate as run_evaluation
    from tcdb.scores import score_table

    report = run_evaluation(collection, snapshot, qrels, measures, runs or None,
                            residual_of=residual_of, progress=not json_output)
    table = score_table(collection, snapshot, qrels, report.measures, runs or None,
                        residual_of=residual_of, compute=False)
    if json_output:
        print_json({"report": report.as_dict(), "means": table.to_dict(orient="records")})
        return
    residual = f" · residual of {residual_of}" if residual_of else ""
    show_means(table, f"{collection} / {snapshot} · qrels {qrels}{residual}")
    note = f"computed {report.n_computed} (run, measure) pair(s), reused {report.n_cached}"
    if report.skipped:
        note += f"; skipped runs without entries: {', '.join(report.skipped)}"
    console.print(f"{note} · {report.seconds:.2f}s", highlight=False)
