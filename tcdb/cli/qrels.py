"""`tcdb qrels import|list`: further qrels sets of a snapshot, and what is stored."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from tcdb.cli.output import console, print_json, print_table

app = typer.Typer(help="Import and list qrels sets (immutable once imported).",
                  no_args_is_help=True)


class Kind(StrEnum):
    original = "original"
    derived = "derived"


@app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    name: str = typer.Argument(..., help="Name of the new qrels set."),
    file: Path = typer.Argument(..., help="TREC or BEIR qrels file (plain or .gz)."),
    kind: Kind = typer.Option(Kind.original, "--kind", help="Where the judgments come from."),
    description: str | None = typer.Option(None, "--description", help="Free text."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import a qrels file as a new named set; the same file again is a no-op."""
    from tcdb.qrels import import_qrels

    result = import_qrels(collection, snapshot, name, file, kind.value, description)
    if json_output:
        print_json(result)
        return
    console.print(f"qrels {result['name']}: {result['status']} · "
                  f"{result['n_judgments']:,} judgments", highlight=False)


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    snapshot: str | None = typer.Argument(None, help="Only this snapshot."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List qrels sets with kind, parents, provenance and size."""
    from tcdb.qrels import list_qrels

    rows = list_qrels(collection, snapshot)
    if json_output:
        print_json(rows)
        return
    print_table(["collection", "snapshot", "name", "kind", "judgments", "topics", "parent",
                 "method"],
                [(r["collection"], r["snapshot"], r["name"], r["kind"], f"{r['n_judgments']:,}",
                  r["n_topics"], r["parent"], r["method"]) for r in rows])
