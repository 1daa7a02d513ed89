"""`tcdb qrels import|export|list`: qrels sets of a snapshot in and out, and what is stored."""

from __future__ import annotations

from pathlib import Path

import typer

from tcdb.cli.output import console, print_json, print_table
from tcdb.cli.source_bias import qrels_by_source
from tcdb.vocabulary import QrelsKind

app = typer.Typer(help="Import and list qrels sets (immutable once imported).",
                  no_args_is_help=True)
app.command("by-source")(qrels_by_source)



@app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    name: str = typer.Argument(..., help="Name of the new qrels set."),
    file: Path = typer.Argument(..., help="TREC or BEIR qrels file (plain or .gz)."),
    kind: QrelsKind | None = typer.Option(
        None, "--kind", help="original or derived. Default: original when the snapshot has "
        "no original qrels yet (they become its original), else derived."),
    designate: bool = typer.Option(
        False, "--designate", help="Make this original set the snapshot's original qrels, "
        "the one lists, diffs and drift count."),
    split_by: str | None = typer.Option(
        None, "--split-by", metavar="iteration",
        help="One set per value of the qrels' iteration column, named NAME-itITERATION "
        "(TREC-COVID's judging rounds)."),
    allow_unknown_docs: bool = typer.Option(
        False, "--allow-unknown-docs", help="Keep judgments of documents no snapshot of the "
        "collection holds (they still count in recall and AP)."),
    description: str | None = typer.Option(None, "--description", help="Free text."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import a qrels file as a new named set; the same file again is a no-op.

    Judgments may name any document of the collection, also one this snapshot lacks.
    """
    from tcdb.judging.qrels import import_qrels

    report = import_qrels(collection, snapshot, name, file, kind, description,
                          allow_unknown_docs=allow_unknown_docs, designate=designate,
                          split_by=split_by)
    if json_output:
        print_json(report)
        return
    for result in report["sets"]:
        original = " · the snapshot's original qrels" if result["original"] else ""
        console.print(f"qrels {result['name']} ({result['kind']}): {result['status']} · "
                      f"{result['n_judgments']:,} judgments{original}", highlight=False,
                      markup=False, emoji=False)


@app.command("export")
def export(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    name: str = typer.Argument(..., help="Qrels set name."),
    out: Path = typer.Option(..., "--out", help="File to write (.gz to compress)."),
    fmt: str = typer.Option("trec", "--format", help="trec (iterations as imported) or beir."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write a qrels set back out, e.g. to release an expanded or derived set."""
    from tcdb.judging.qrels import export_qrels

    report = export_qrels(collection, snapshot, name, out, fmt)
    if json_output:
        print_json(report)
        return
    console.print(f"qrels {name}: {report['n_judgments']:,} judgments over "
                  f"{report['n_topics']} topics → {report['out']} ({report['format']})",
                  highlight=False, markup=False, emoji=False)


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    snapshot: str | None = typer.Argument(None, help="Only this snapshot."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List qrels sets with kind, parents, provenance and size."""
    from tcdb.judging.qrels import list_qrels

    rows = list_qrels(collection, snapshot)
    if json_output:
        print_json(rows)
        return
    print_table(["collection", "snapshot", "name", "kind", "judgments", "topics", "parent",
                 "method"],
                [(r["collection"], r["snapshot"], r["name"], r["kind"], f"{r['n_judgments']:,}",
                  r["n_topics"], r["parent"], r["method"]) for r in rows])
