"""`tcdb run import|update|delete|list|export`: TREC run files into a snapshot, fixed, listed,
and out again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tcdb.cli.output import console, err_console, print_json, print_table
from tcdb.vocabulary import RunCategory, RunType

if TYPE_CHECKING:
    from tcdb.runs import RunChange, RunMetadata

app = typer.Typer(help="Import, fix, delete and list runs (TREC run files) of a snapshot.",
                  no_args_is_help=True)

METADATA_HELP = ("A table of the round's runs (CSV, TSV or JSON): columns tag, system, group, "
                 "runtype, contributed, category, submitted, description, first_stage. A row "
                 "wins over the options.")

# The metadata options `import` and `update` share (None: not given, keeps what is stored).
SystemOption = typer.Option(None, "--system",
                            help="System the runs belong to (default: each run's tag).")
GroupOption = typer.Option(None, "--group", help="Participant group (team).")
RunTypeOption = typer.Option(None, "--run-type", metavar="TYPE",
                              help="automatic, manual or feedback.")
ContributedOption = typer.Option(None, "--contributed/--not-contributed",
                                 help="The runs fed the official pools (judged runs), or not.")
CategoryOption = typer.Option(None, "--category", metavar="KIND",
                              help="Kind of system: lexical, neural, llm or other.")
DateOption = typer.Option(None, "--date", formats=["%Y-%m-%d"], metavar="YYYY-MM-DD",
                          help="Submission date.")
DescriptionOption = typer.Option(None, "--description", metavar="TEXT", help="Free text.")
FirstStageOption = typer.Option(None, "--first-stage", metavar="TAG",
                                help="Tag of the run these runs re-rank.")
MetadataOption = typer.Option(None, "--metadata", metavar="FILE", help=METADATA_HELP)
JsonOption = typer.Option(False, "--json", help="Print JSON.")


def _options(system: str | None, group: str | None, run_type: RunType | None,
             contributed: bool | None, category: RunCategory | None, date: datetime | None,
             description: str | None, first_stage: str | None) -> RunMetadata:
    from tcdb.runs import run_metadata

    return run_metadata(system=system, group=group, run_type=run_type, contributed=contributed,
                        category=category, submitted=date.date() if date else None,
                        description=description, first_stage=first_stage)


@app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    files: list[Path] = typer.Argument(..., help="TREC run files (plain or .gz)."),
    metadata: Path | None = MetadataOption,
    system: str | None = SystemOption,
    group: str | None = GroupOption,
    run_type: RunType | None = RunTypeOption,
    contributed: bool | None = ContributedOption,
    category: RunCategory | None = CategoryOption,
    date: datetime | None = DateOption,
    description: str | None = DescriptionOption,
    first_stage: str | None = FirstStageOption,
    replace: bool = typer.Option(
        False, "--replace", help="Replace a stored run of the same tag from another file "
        "(metadata not given again is kept)."),
    allow_unknown_docs: bool = typer.Option(
        False, "--allow-unknown-docs",
        help="Keep entries for documents the snapshot lacks (as unresolved) instead of failing."),
    json_output: bool = JsonOption,
) -> None:
    """Import run files: one transaction for all of them.

    The same file again is a no-op, or updates the metadata it is given.
    """
    from tcdb.runs import import_runs, read_run_metadata

    table = read_run_metadata(metadata) if metadata is not None else {}
    options = _options(system, group, run_type, contributed, category, date, description,
                       first_stage)
    reports = import_runs(collection, snapshot, files, **options.given(), metadata=table,
                          replace=replace, allow_unknown_docs=allow_unknown_docs,
                          progress=not json_output)
    unmatched = sorted(set(table) - {r.run for r in reports})
    if json_output:
        print_json({"runs": [r.as_dict() for r in reports], "metadata_unmatched": unmatched})
        return
    print_table(["run", "status", "system", "entries", "unresolved", "seconds"],
                [(r.run, r.status, r.system, f"{r.n_entries:,}", f"{r.n_unresolved:,}",
                  f"{r.seconds:.2f}") for r in reports],
                title=f"{collection} / {snapshot}")
    unresolved = sum(r.n_unresolved for r in reports)
    if unresolved:
        console.print(f"{unresolved:,} entries name documents the snapshot does not have; "
                      "kept as unresolved (they still occupy their ranks in evaluation).")
    if unmatched:
        console.print(f"{len(unmatched)} row(s) of {metadata} describe runs not in these files: "
                      f"{_few(unmatched)}", highlight=False, markup=False, emoji=False)


@app.command("update")
def update(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    tags: list[str] | None = typer.Argument(None, help="Run tags (default: the table's runs)."),
    metadata: Path | None = MetadataOption,
    system: str | None = SystemOption,
    group: str | None = GroupOption,
    run_type: RunType | None = RunTypeOption,
    contributed: bool | None = ContributedOption,
    category: RunCategory | None = CategoryOption,
    date: datetime | None = DateOption,
    description: str | None = DescriptionOption,
    first_stage: str | None = FirstStageOption,
    json_output: bool = JsonOption,
) -> None:
    """Fix runs' metadata; entries, scores and pools stay."""
    from tcdb.runs import update_runs

    options = _options(system, group, run_type, contributed, category, date, description,
                       first_stage)
    changes = update_runs(collection, snapshot, tags or [], options, metadata=metadata)
    _print_changes(changes, json_output,
                   lambda c: ", ".join(c.changed) if c.changed else "as stored already")


@app.command("delete")
def delete(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    tags: list[str] = typer.Argument(..., help="Run tags."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    json_output: bool = JsonOption,
) -> None:
    """Delete runs with their entries, scores and pool memberships (one transaction)."""
    from tcdb.runs import delete_runs

    if not yes and not typer.confirm(f"Delete {len(tags)} run(s) of {collection} / {snapshot} "
                                     "with their entries and scores?", err=True):
        err_console.print("nothing deleted")
        raise typer.Exit(1)
    changes = delete_runs(collection, snapshot, tags)
    _print_changes(changes, json_output, lambda c: (
        f"{c.n_entries:,} entries, {c.n_scores:,} scores"
        + (f"; left pool(s) {', '.join(c.pools)} (their documents stay)" if c.pools else "")))


def _print_changes(changes: list[RunChange], json_output: bool,
                   what: Callable[[RunChange], str]) -> None:
    if json_output:
        print_json([c.as_dict() for c in changes])
        return
    print_table(["run", "status", "what"], [(c.run, c.status, what(c)) for c in changes],
                title=f"{changes[0].collection} / {changes[0].snapshot}" if changes else None)


def _few(names: list[str], n: int = 8) -> str:
    return ", ".join(names[:n]) + (f", … ({len(names)} in all)" if len(names) > n else "")


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    snapshot: str | None = typer.Argument(None, help="Only this snapshot."),
    json_output: bool = JsonOption,
) -> None:
    """List runs with their system, metadata and sizes."""
    from tcdb.runs import list_runs

    rows = list_runs(collection, snapshot)
    if json_output:
        print_json(rows)
        return
    print_table(
        ["collection", "snapshot", "run", "system", "group", "type", "category", "contributed",
         "entries", "unresolved"],
        [(r["collection"], r["snapshot"], r["run"], r["system"], r["group"], r["run_type"],
          r["category"], "yes" if r["contributed"] else "", f"{r['n_entries']:,}",
          f"{r['n_unresolved']:,}") for r in rows])


@app.command("export")
def export(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    tag: str = typer.Argument(..., help="The run's tag."),
    out: Path = typer.Option(..., "--out", help="File to write (.gz to compress)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write a run back out as a TREC run file (ranks and scores as submitted), to release
    it beside `tcdb qrels export`."""
    from tcdb.runs.exporting import export_run

    report = export_run(collection, snapshot, tag, out)
    if json_output:
        print_json(report)
        return
    console.print(f"run {tag}: {report['n_entries']:,} entries over {report['n_topics']} "
                  f"topics → {report['out']}", highlight=False, markup=False, emoji=False)
