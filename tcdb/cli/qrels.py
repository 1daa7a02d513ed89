"""`tcdb qrels import|export|list|show`: qrels sets of a snapshot in and out, and what is
stored. Each command is derived from its operation (`tcdb.judging.qrels_operations`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_table
from tcdb.cli.source_bias import qrels_by_source

if TYPE_CHECKING:
    from tcdb.judging.qrels_operations import (
        QrelsExportResult,
        QrelsImportResult,
        QrelsResult,
        QrelsSetsResult,
    )

app = typer.Typer(help=summary("qrels"), no_args_is_help=True)
app.command("by-source")(qrels_by_source)


def _show_import(report: QrelsImportResult) -> None:
    for result in report.sets:
        original = " · the snapshot's original qrels" if result.original else ""
        console.print(f"qrels {result.name} ({result.kind}): {result.status} · "
                      f"{result.n_judgments:,} judgments{original}", highlight=False,
                      markup=False, emoji=False)


def _show_export(report: QrelsExportResult) -> None:
    console.print(f"qrels {report.name}: {report.n_judgments:,} judgments over "
                  f"{report.n_topics} topics → {report.out} ({report.format})",
                  highlight=False, markup=False, emoji=False)


def _show_list(result: QrelsSetsResult) -> None:
    print_table(["collection", "snapshot", "name", "kind", "judgments", "topics", "parent",
                 "method"],
                [(r.collection, r.snapshot, r.name, r.kind, f"{r.n_judgments:,}", r.n_topics,
                  r.parent, r.method) for r in result.sets])


def _show_judgments(result: QrelsResult) -> None:
    print_table(["topic", "doc", "grade"], [(j.topic, j.doc, j.grade) for j in result.judgments],
                title=f"{result.collection} / {result.snapshot} · qrels {result.qrels} · "
                f"{len(result.judgments):,} judgments")


app.command("import")(derive.command("qrels_import", show=_show_import))
app.command("export")(derive.command("qrels_export", show=_show_export))
app.command("list")(derive.command("qrels_sets", show=_show_list))
app.command("show")(derive.command("qrels", show=_show_judgments))
