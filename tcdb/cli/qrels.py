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
    unparsed = (f" · {report.n_unparsed:,} pairs unparsed (kept as answers, not judged)"
                if report.n_unparsed else "")
    for result in report.sets:
        original = " · the snapshot's original qrels" if result.original else ""
        console.print(f"qrels {result.name} ({result.kind}): {result.status} · "
                      f"{result.n_judgments:,} judgments{original} · judged by "
                      f"{report.judge_kind}{unparsed}", highlight=False,
                      markup=False, emoji=False)


def _show_export(report: QrelsExportResult) -> None:
    console.print(f"qrels {report.name}: {report.n_judgments:,} judgments over "
                  f"{report.n_topics} topics → {report.out} ({report.format})",
                  highlight=False, markup=False, emoji=False)


def _show_list(result: QrelsSetsResult) -> None:
    print_table(["collection", "snapshot", "name", "kind", "judgments", "topics", "parent",
                 "method", "judge", "model", "prompt sha256", "unparsed"],
                [(r.collection, r.snapshot, r.name, r.kind, f"{r.n_judgments:,}", r.n_topics,
                  r.parent, r.method, r.judge_kind, r.model, r.prompt_sha256,
                  f"{r.n_unparsed:,}") for r in result.sets])


def _show_judgments(result: QrelsResult) -> None:
    judge = f"judged by {result.judge_kind}"
    p = result.provenance
    if p is not None:
        model = f"{p.model}@{p.model_revision}" if p.model and p.model_revision else p.model
        parts = [f"model {model}" if model else "",
                 f"prompt sha256 {p.prompt_sha256}" if p.prompt_sha256 else "",
                 f"{p.n_unparsed:,} pairs unparsed (not judgments)" if p.n_unparsed else ""]
        judge = " · ".join([judge, *(part for part in parts if part)])
    print_table(["topic", "doc", "grade"], [(j.topic, j.doc, j.grade) for j in result.judgments],
                title=f"{result.collection} / {result.snapshot} · qrels {result.qrels} · "
                f"{len(result.judgments):,} judgments · {judge}")


app.command("import")(derive.command("qrels_import", show=_show_import))
app.command("export")(derive.command("qrels_export", show=_show_export))
app.command("list")(derive.command("qrels_sets", show=_show_list))
app.command("show")(derive.command("qrels", show=_show_judgments))
