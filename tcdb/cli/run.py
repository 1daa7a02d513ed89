"""`tcdb run import|list`: TREC run files into a snapshot, and what is stored."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from pathlib import Path

import typer

from tcdb.cli.output import console, print_json, print_table

app = typer.Typer(help="Import and list runs (TREC run files) of a snapshot.",
                  no_args_is_help=True)


class Category(StrEnum):
    lexical = "lexical"
    neural = "neural"
    llm = "llm"
    other = "other"


@app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    files: list[Path] = typer.Argument(..., help="TREC run files (plain or .gz)."),
    system: str | None = typer.Option(None, "--system",
                                      help="System the runs belong to (default: each run's tag)."),
    group: str | None = typer.Option(None, "--group", help="Group / participant."),
    manual: bool = typer.Option(False, "--manual", help="Manual runs."),
    contributed: bool = typer.Option(False, "--contributed",
                                     help="The runs fed the official pools (judged runs)."),
    category: Category | None = typer.Option(None, "--category", help="Kind of system."),
    date: datetime | None = typer.Option(None, "--date", formats=["%Y-%m-%d"],
                                         help="Submission date (YYYY-MM-DD)."),
    description: str | None = typer.Option(None, "--description", help="Free text."),
    replace: bool = typer.Option(False, "--replace",
                                 help="Replace a stored run of the same tag from another file."),
    allow_unknown_docs: bool = typer.Option(
        False, "--allow-unknown-docs",
        help="Keep entries for documents the snapshot lacks (as unresolved) instead of failing."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import run files: one transaction for all of them; the same file again is a no-op."""
    from tcdb.runs import import_runs

    reports = import_runs(
        collection, snapshot, files, system=system, group=group, manual=manual,
        contributed=contributed, category=category.value if category else None,
        submitted=date.date() if date else None, description=description, replace=replace,
        allow_unknown_docs=allow_unknown_docs, progress=not json_output)
    if json_output:
        print_json([r.as_dict() for r in reports])
        return
    print_table(["run", "status", "system", "entries", "unresolved", "seconds"],
                [(r.tag, r.status, r.system, f"{r.n_entries:,}", f"{r.n_unresolved:,}",
                  f"{r.seconds:.2f}") for r in reports],
                title=f"{collection} / {snapshot}")
    unresolved = sum(r.n_unresolved for r in reports)
    if unresolved:
        console.print(f"{unresolved:,} entries name documents the snapshot does not have; "
                      "kept as unresolved (they still occupy their ranks in evaluation).")


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    snapshot: str | None = typer.Argument(None, help="Only this snapshot."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List runs with their system, flags and sizes."""
    from tcdb.runs import list_runs

    rows = list_runs(collection, snapshot)
    if json_output:
        print_json(rows)
        return
    print_table(
        ["collection", "snapshot", "run", "system", "group", "category", "contributed",
         "manual", "entries", "unresolved"],
        [(r["collection"], r["snapshot"], r["run"], r["system"], r["group"], r["category"],
          "yes" if r["contributed"] else "", "yes" if r["manual"] else "", f"{r['n_entries']:,}",
          f"{r['n_unresolved']:,}") for r in rows])
