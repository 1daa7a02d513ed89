"""`tcdb results import|list|over-time`: an organiser's results tables (one row per team × run ×
snapshot, one column per measure) and what their means alone answer. The commands are derived
from the operations (`tcdb.published`); this module only prints their results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import print_table, say
from tcdb.cli.report_over_time import split_snapshots

if TYPE_CHECKING:
    from tcdb.published.importing import ResultsImportResult
    from tcdb.published.listing import ResultsResult
    from tcdb.published.over_time import ResultsOverTimeResult

app = typer.Typer(help=summary("results"), no_args_is_help=True)


def _show_import(result: ResultsImportResult) -> None:
    say(f"{result.file} → {result.collection}: {result.status} · {result.n_added} added, "
         f"{result.n_replaced} replaced, {result.n_unchanged} unchanged · {result.n_rows} rows, "
         f"{len(result.measures)} measures, {len(result.snapshots)} snapshots "
         f"({', '.join(result.snapshots)}), {result.n_new_systems} new systems")
    if result.registered_snapshots:
        say(f"registered without documents: {', '.join(result.registered_snapshots)}")
    if result.n_resubmitted:
        say(f"{result.n_resubmitted} run(s) resubmitted: every version kept, reports take the "
            "latest")
    if result.n_missing:
        say(f"{result.n_missing} empty cells: figures the table does not give (not stored)")
    if result.ignored_columns:
        say(f"left out: {', '.join(result.ignored_columns)}")
    if result.n_rejected:
        say(f"{result.n_rejected:,} bad row(s) set aside, each with its reason in "
            f"{result.rejects_file}")


def _show_list(result: ResultsResult) -> None:
    versioned = any(f.version for f in result.figures)
    print_table(["snapshot", "system", "team", "run", *(["version"] if versioned else []),
                 "measure", "value"],
                [(f.snapshot, f.system, f.team, f.run, *([f.version] if versioned else []),
                  f.measure, f.value) for f in result.figures],
                title=f"{result.collection} · published results"
                + (" (each run's latest version)" if versioned else ""))
    for table in result.tables:
        say(f"from {table.source} (sha256 {table.checksum}): {table.n_values} figures")


def _show_over_time(result: ResultsOverTimeResult) -> None:
    first = result.snapshots[0]
    for measure, figures in result.measures.items():
        rows: list[list[Any]] = []
        for r in figures.systems:
            for later in result.snapshots[1:]:
                rows.append([r.system, later, r.arp[first], r.arp[later],
                             r.result_delta[later], r.relative_drop[later],
                             r.longeval_change[later]])
        print_table(["system", "snapshot", f"ARP {first}", "ARP", "RΔ", "relative drop",
                     "LongEval change"], rows,
                    title=f"{result.collection} · {measure} (published) · each later snapshot "
                    f"against {first}")
        for s in figures.skipped:
            say(f"skipped {s.system}: {s.reason}")
    say(f"RΔ = ARP {first} − ARP later; relative drop = RΔ / ARP {first}; LongEval change "
         f"= {result.longeval_change}")


app.command("import")(derive.command("results_import", show=_show_import))
# `--snapshots A B C` takes every value up to the next option, as in `tcdb report`.
from tcdb.cli.report import _ManyValues  # noqa: E402

app.command("list", cls=_ManyValues)(derive.command("results", show=_show_list,
                                                    prepare=split_snapshots))
app.command("over-time", cls=_ManyValues)(derive.command(
    "results_over_time", show=_show_over_time, prepare=split_snapshots))
