"""`tcdb scores`: tables of means (trec_eval -c) or per-topic values; `tcdb scores import`.

Each command is derived from its operation (`tcdb.scoring.score_operations`); `--csv` is the
CLI's own output choice, as `--json` is.
"""

from __future__ import annotations

import inspect
import unicodedata
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand, TyperGroup

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, err_console, print_table, terminal_text, topics_said

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.scoring.score_operations import (
        PerTopicScoresResult,
        ScoresImportResult,
        ScoresResult,
    )


class _TableByDefault(TyperGroup):
    """`tcdb scores COLLECTION SNAPSHOT …` means `tcdb scores table COLLECTION SNAPSHOT …`."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["table", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(help=summary("scores"), cls=_TableByDefault, no_args_is_help=True)


def _csv_option() -> list[inspect.Parameter]:
    return [inspect.Parameter("csv_output", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                              default=typer.Option(False, "--csv", help="Print CSV."))]


class _OneOutput(TyperCommand):
    """`--json` and `--csv` are two ways to print one table: refuse both at once (`--json` is
    the derived command's own option, so the check is on the arguments)."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        if "--json" in args and "--csv" in args:
            from tcdb.errors import OptionError

            raise OptionError("--json/--csv", "choose one of --json and --csv")
        return super().parse_args(ctx, args)


def _write_csv(frame: pd.DataFrame) -> None:
    """The table as CSV on stdout; run tags are data, so no cell is a spreadsheet formula."""
    import sys

    from tcdb.collections.files.csv_safe import frame_csv

    frame_csv(frame, sys.stdout)


def _show_scores(result: ScoresResult, csv_output: bool = False) -> None:
    frame = result.to_frame()
    if csv_output:
        _write_csv(frame)
        return
    title = (f"{result.collection} / {result.snapshot} · qrels {result.qrels}"
             f"{subset_title(frame, result.topics)}")
    if result.per_topic:
        wide = frame.pivot_table(index=["run", "topic"], columns="measure", values="value",
                                 sort=False).reset_index()
        _print_frame(wide, f"{title} · per topic")
    else:
        show_means(frame, title + (" · intersection" if result.intersection else ""))


def _show_per_topic(result: PerTopicScoresResult, csv_output: bool = False) -> None:
    frame = result.to_frame()
    if csv_output:
        _write_csv(frame)
        return
    wide = frame.pivot_table(index=["run", "topic_key"], columns="snapshot", values="value",
                             sort=False).reset_index()
    _print_frame(wide, f"{result.collection} · {result.measure} · qrels {result.qrels}"
                 f"{topics_said(result.topics)} · per topic across snapshots")


def subset_title(frame: pd.DataFrame, topics: str | None) -> str:
    """` · topic set S (n topics)` over a topic set, so nobody takes its means for the full
    ones; empty without one."""
    from tcdb.reports.fields import topic_set_name

    topics = topic_set_name(topics)  # all and core: every qrels topic of the one snapshot
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
    from tcdb.analysis.means import sums_over_topics

    heads = [f"{m} (sum)" if sums_over_topics(m) else m for m in measures]  # trec_eval's `all`
    print_table(["run", "system", *heads],
                [[run, system, *(values.get(m) for m in measures)]
                 for (run, system), values in rows.items()], title=title)


def _print_frame(frame: pd.DataFrame, title: str) -> None:
    rows: list[list[Any]] = frame.astype(object).where(frame.notna(), None).values.tolist()
    print_table([str(c) for c in frame.columns], rows, title=title)


def _show_import(report: ScoresImportResult) -> None:
    for run in report.runs:
        console.print(f"run {terminal_text(run.run)}: {run.status} · {run.n_scores:,} per-topic "
                      f"values · measures {', '.join(run.measures)}", highlight=False,
                      markup=False, emoji=False)
    if report.qrels_kind == "published":
        console.print(f"qrels set {terminal_text(report.qrels)}: published (no judgments; the "
                      f"scores' source: {terminal_text(report.source or '')})", highlight=False,
                      markup=False, emoji=False)
    if report.topics_added:
        console.print(f"{len(report.topics_added):,} topics added to "
                      f"{terminal_text(report.snapshot)} from the scores", highlight=False,
                      markup=False, emoji=False)
    if report.skipped:
        console.print(f"not imported (no ir_measures equivalent or counts): "
                      f"{', '.join(sorted(report.skipped))}", highlight=False)
    if report.topics_normalised:
        first = report.topics_normalised[0]
        n = len(report.topics_normalised)
        console.print(f"{n:,} topic id{'' if n == 1 else 's'} put in Unicode normal form "
                      f"C, as names are (e.g. {ascii(first)} → "
                      f"{ascii(unicodedata.normalize('NFC', first))})",
                      highlight=False, markup=False, emoji=False)
    if report.published_means:
        kinds = [p.semantics for p in report.published_means]
        console.print(f"published all lines: {len(kinds):,} checked against the per-topic "
                      f"lines · {kinds.count('mean'):,} their mean · {kinds.count('-c'):,} "
                      f"trec_eval -c means over more judged topics · "
                      f"{kinds.count('contradicts'):,} contradicting them",
                      highlight=False, markup=False, emoji=False)
    for published in report.published_means:
        if published.note:
            console.print(published.note, highlight=False, markup=False, emoji=False)
    for warning in report.warnings:
        err_console.print(f"warning: {terminal_text(warning)}", highlight=False, markup=False,
                          emoji=False)


app.command("table", cls=_OneOutput)(derive.command("scores", show=_show_scores,
                                                   extras=_csv_option()))
app.command("per-topic", cls=_OneOutput)(derive.command("per_topic_scores", show=_show_per_topic,
                                                       extras=_csv_option()))
app.command("import")(derive.command("scores_import", show=_show_import))
