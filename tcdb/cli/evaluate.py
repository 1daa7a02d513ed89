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
    run_from: str | None = typer.Option(
        None, "--run-from", metavar="SNAPSHOT_A",
        help="Score runs of this older snapshot on SNAPSHOT's qrels, documents and topics "
        "mapped by identity (what cannot be mapped is reported); stored apart from the "
        "runs' own scores."),
    topics: str | None = typer.Option(
        None, "--topics", metavar="SET",
        help="Show the means over this topic set's judged topics only (every topic is still "
        "scored and stored; unanswered ones count 0)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Evaluate runs of a snapshot against a qrels set and print the means (trec_eval -c)."""
    from tcdb.cli.scores import show_means, subset_title
    from tcdb.scoring.evaluate import evaluate as run_evaluation
    from tcdb.scoring.scores import score_table

    if run_from is not None:
        if topics is not None:
            from tcdb.errors import OptionError

            raise OptionError("--run-from/--topics", "give one of them, not both")
        _evaluate_from(collection, snapshot, qrels, measures, run_from, runs, residual_of,
                       json_output)
        return
    if topics is not None:  # an unknown set fails before anything is computed
        _check_topic_set(collection, topics)
    report = run_evaluation(collection, snapshot, qrels, measures, runs or None,
                            residual_of=residual_of, progress=not json_output)
    table = score_table(collection, snapshot, qrels, report.measures, runs or None,
                        residual_of=residual_of, compute=False, topics=topics)
    if json_output:
        print_json({"report": report.as_dict(), "means": table.to_dict(orient="records")})
        return
    residual = f" · residual of {residual_of}" if residual_of else ""
    show_means(table, f"{collection} / {snapshot} · qrels {qrels}{residual}"
               f"{subset_title(table, topics)}")
    note = f"computed {report.n_computed} (run, measure) pair(s), reused {report.n_cached}"
    if report.skipped:
        note += f"; skipped runs without entries: {', '.join(report.skipped)}"
    console.print(f"{note} · {report.seconds:.2f}s", highlight=False)


def _check_topic_set(collection: str, topics: str) -> None:
    from tcdb.queries import topic_set_topic_ids
    from tcdb.storage.db import session_scope

    with session_scope() as session:
        topic_set_topic_ids(session, collection, topics)


def _evaluate_from(collection: str, snapshot: str, qrels: str, measures: list[str],
                   run_from: str, runs: list[str] | None, residual_of: str | None,
                   json_output: bool) -> None:
    """`--run-from`: runs of an older snapshot on this snapshot's qrels
    (`tcdb.scoring.cross_snapshot`)."""
    from tcdb.cli.output import print_table
    from tcdb.errors import OptionError
    from tcdb.scoring.cross_snapshot import evaluate_from

    if residual_of is not None:
        raise OptionError("--run-from/--residual-of", "give one of them, not both")
    report = evaluate_from(collection, snapshot, qrels, measures, run_from, runs or None)
    if json_output:
        print_json(report.as_dict())
        return
    print_table(["run", "measure", "mean", "topics"],
                [[m["run"], m["measure"], m["mean"], m["n_topics"]] for m in report.means],
                title=f"{collection} · runs of {run_from} on {snapshot}'s qrels {qrels} "
                "(trec_eval -c)")
    print_table(["run", "topics scored", f"topics gone ({run_from} ids)", "entries",
                 "documents gone",
                 "unresolved"],
                [[tag, u["n_topics_scored"], ", ".join(u["topics_gone"]) or "none",
                  u["n_entries"], u["entries_gone"], u["entries_unresolved"]]
                 for tag, u in report.unmapped.items()],
                title=f"what {snapshot} no longer has (documents gone stay in place, unjudged "
                "unless its qrels judge them)")
    console.print(f"computed {report.n_computed} (run, measure) pair(s), reused "
                  f"{report.n_cached} · {report.seconds:.2f}s", highlight=False)
