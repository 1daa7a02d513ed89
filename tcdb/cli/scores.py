"""`tcdb scores`: tables of means (trec_eval -c) or per-topic values; `tcdb scores import`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from tcdb.cli.output import console, print_json, print_table

if TYPE_CHECKING:
    import pandas as pd


class _TableByDefault(TyperGroup):
    """`tcdb scores COLLECTION SNAPSHOT …` means `tcdb scores table COLLECTION SNAPSHOT …`."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["table", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(cls=_TableByDefault, no_args_is_help=True,
                  help="Score tables (`tcdb scores COLLECTION SNAPSHOT --measure M`) and "
                  "importing published per-topic scores (`tcdb scores import`).")


@app.command("table")
def table(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    qrels: str = typer.Option("original", "--qrels", help="Qrels set name."),
    measures: list[str] = typer.Option(..., "--measure", "-m", help="Measure (repeat)."),
    runs: list[str] | None = typer.Option(None, "--run", help="Run tag (repeat; default all)."),
    per_topic: bool = typer.Option(False, "--per-topic", help="One row per topic."),
    intersection: bool = typer.Option(
        False, "--intersection",
        help="Average over the topics each run answered (default: every qrels topic, "
        "unanswered ones count 0, as trec_eval -c)."),
    residual_of: str | None = typer.Option(
        None, "--residual-of", metavar="QRELS",
        help="The residual scores: rankings without what this qrels set judged."),
    topics: str | None = typer.Option(
        None, "--topics", metavar="SET",
        help="Only the qrels topics of this topic set (means over them, unanswered ones 0)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    csv_output: bool = typer.Option(False, "--csv", help="Print CSV."),
) -> None:
    """Scores of a snapshot's runs; missing ones are computed and stored first."""
    from tcdb.errors import OptionError
    from tcdb.scoring.scores import score_table

    if json_output and csv_output:
        raise OptionError("--json/--csv", "choose one of --json and --csv")
    frame = score_table(collection, snapshot, qrels, measures, runs or None, per_topic,
                        intersection, residual_of=residual_of, topics=topics)
    if json_output:
        print_json(frame.to_dict(orient="records"))
    elif csv_output:
        import sys

        frame.to_csv(sys.stdout, index=False)
    elif per_topic:
        wide = frame.pivot_table(index=["run", "topic"], columns="measure", values="value",
                                 sort=False).reset_index()
        _print_frame(wide, f"{collection} / {snapshot} · qrels {qrels}"
                     f"{subset_title(frame, topics)} · per topic")
    else:
        show_means(frame, f"{collection} / {snapshot} · qrels {qrels}"
                   f"{subset_title(frame, topics)}" + (" · intersection" if intersection else ""))


def subset_title(frame: pd.DataFrame, topics: str | None) -> str:
    """` · topic set S (n topics)` over a topic set, so nobody takes its means for the full
    ones; empty without one."""
    if topics is None:
        return ""
    if "n_topics" in frame and not frame.empty:
        return f" · topic set {topics} ({int(frame['n_topics'].max())} topics)"
    if "topic_id" in frame:
        return f" · topic set {topics} ({frame['topic_id'].nunique()} topics)"
    return f" · topic set {topics}"


def show_means(frame: pd.DataFrame, title: str) -> None:
    """Runs × measures, as people read a results table."""
    if frame.empty:
        console.print("no runs")
        return
    # Not pivot_table: with dropna=False it crosses every run with every system.
    measures = list(dict.fromkeys(frame["measure"]))
    rows: dict[tuple[str, str], dict[str, float]] = {}
    for run, system, measure, value in frame[["run", "system", "measure", "value"]].itertuples(
            index=False):
        rows.setdefault((run, system), {})[measure] = value
    print_table(["run", "system", *measures],
                [[run, system, *(values.get(m) for m in measures)]
                 for (run, system), values in rows.items()], title=title)


def _print_frame(frame: pd.DataFrame, title: str) -> None:
    rows: list[list[Any]] = frame.astype(object).where(frame.notna(), None).values.tolist()
    print_table([str(c) for c in frame.columns], rows, title=title)


@app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    file: Path = typer.Argument(..., help="trec_eval -q output or ir_measures TSV."),
    qrels: str = typer.Option(..., "--qrels", help="Qrels set the scores were computed on."),
    run: str = typer.Option(..., "--run", help="Run tag to store them under."),
    system: str | None = typer.Option(None, "--system", help="System (default: the tag)."),
    replace: bool = typer.Option(False, "--replace", help="Overwrite different stored values."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Store published per-topic scores for a run whose file is gone."""
    from tcdb.scoring.scores import import_scores

    report = import_scores(collection, snapshot, qrels, run, file, system, replace=replace)
    if json_output:
        print_json(report.as_dict())
        return
    console.print(f"run {report.run}: {report.status} · {report.n_scores:,} per-topic values · "
                  f"measures {', '.join(report.measures)}", highlight=False)
    if report.skipped:
        console.print(f"not imported (no ir_measures equivalent or counts): "
                      f"{', '.join(sorted(report.skipped))}", highlight=False)
