"""`tcdb run import|update|delete|list|versions|export`: TREC run files into a snapshot, fixed,
listed (with their versions), and out again.

Each command is derived from its operation (`tcdb.runs.operations`, `tcdb.runs.listing`,
`tcdb.runs.exporting`); this module only prints results and asks before deleting.
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, err_console, print_table, terminal_text
from tcdb.errors import some

if TYPE_CHECKING:
    from tcdb.runs.exporting import RunExportResult
    from tcdb.runs.listing import RunsResult, RunVersionsResult
    from tcdb.runs.requests import RunChangeRow, RunChangesResult, RunImportResult

app = typer.Typer(help=summary("run"), no_args_is_help=True)


def _not_contributed() -> list[inspect.Parameter]:
    """`--not-contributed`: the CLI's way to say `contributed=False` (a field that is None when
    not given has no `--no-…` of its own)."""
    return [inspect.Parameter(
        "not_contributed", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
        default=typer.Option(False, "--not-contributed",
                             help="The runs did not feed the official pools."))]


def _prepare_metadata(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    if extras.get("not_contributed"):
        if fields.get("contributed"):
            from tcdb.errors import OptionError

            raise OptionError("--contributed/--not-contributed", "give one of them")
        fields["contributed"] = False
    return fields


def _show_import(result: RunImportResult, **_: Any) -> None:
    first = result.runs[0] if result.runs else None
    print_table(["run", "status", "version", "system", "entries", "unresolved", "seconds"],
                [(r.run, r.status + (f" (version {r.replaced_version} kept)"
                                     if r.replaced_version else ""), r.version, r.system,
                  f"{r.n_entries:,}", f"{r.n_unresolved:,}", f"{r.seconds:.2f}")
                 for r in result.runs],
                title=f"{first.collection} / {first.snapshot}" if first else None)
    unresolved = sum(r.n_unresolved for r in result.runs)
    if unresolved:
        console.print(f"{unresolved:,} entries name documents the snapshot does not have; "
                      "kept as unresolved (they still occupy their ranks in evaluation).")
    rejected = sum(r.n_rejected for r in result.runs if r.status in ("imported", "replaced"))
    if rejected:
        where = next(r.rejects_file for r in result.runs if r.rejects_file)
        console.print(f"{rejected:,} bad line(s) set aside, each with its reason in "
                      f"{terminal_text(str(where))}: "
                      + ", ".join(f"{terminal_text(r.run)} {r.n_rejected:,}" for r in result.runs
                                  if r.n_rejected), highlight=False, markup=False, emoji=False)
    if result.metadata_unmatched:
        console.print(f"{len(result.metadata_unmatched)} row(s) of the metadata table describe "
                      f"runs not in these files: {some(result.metadata_unmatched)}",
                      highlight=False, markup=False, emoji=False)


def _show_changes(what: Callable[[RunChangeRow], str]) -> Callable[..., None]:
    def show(result: RunChangesResult, **_: Any) -> None:
        changes = result.changes
        print_table(["run", "status", "what"], [(c.run, c.status, what(c)) for c in changes],
                    title=f"{changes[0].collection} / {changes[0].snapshot}" if changes
                    else None)

    return show


def _yes() -> list[inspect.Parameter]:
    return [inspect.Parameter("yes", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                              default=typer.Option(False, "--yes", "-y",
                                                   help="Do not ask for confirmation."))]


def _confirm_delete(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """Ask before deleting, unless `--yes`: a delete takes entries and scores with it."""
    tags = fields.get("tags") or []
    if not extras["yes"] and not typer.confirm(
            f"Delete {len(tags)} run(s) of {fields['collection']} / {fields['snapshot']} "
            "with their entries and scores?", err=True):
        err_console.print("nothing deleted")
        raise typer.Exit(1)
    return fields


def _show_list(result: RunsResult) -> None:
    print_table(
        ["collection", "snapshot", "run", "system", "group", "type", "category", "contributed",
         "entries", "unresolved"],
        [(r.collection, r.snapshot, r.run, r.system, r.group, r.run_type, r.category,
          "yes" if r.contributed else "", f"{r.n_entries:,}", f"{r.n_unresolved:,}")
         for r in result.runs])


def _show_versions(result: RunVersionsResult) -> None:
    print_table(["run", "version", "current", "entries", "sha256", "imported", "superseded"],
                [(v.run, v.version, "yes" if v.current else "", f"{v.n_entries:,}",
                  (v.checksum or "")[:12], _when(v.imported_at), _when(v.superseded_at))
                 for v in result.versions],
                title=f"{result.collection} / {result.snapshot}")


def _when(moment: dt.datetime | None) -> str:
    return "" if moment is None else moment.strftime("%Y-%m-%d %H:%M")


def _show_export(result: RunExportResult) -> None:
    console.print(f"run {result.run}: {result.n_entries:,} entries over {result.n_topics} "
                  f"topics → {result.out}", highlight=False, markup=False, emoji=False)


app.command("import")(derive.command("run_import", show=_show_import, extras=_not_contributed(),
                                     prepare=_prepare_metadata))
app.command("update")(derive.command(
    "run_update", extras=_not_contributed(), prepare=_prepare_metadata,
    show=_show_changes(lambda c: ", ".join(c.changed) if c.changed else "as stored already")))
app.command("delete")(derive.command(
    "run_delete", extras=_yes(), prepare=_confirm_delete, show=_show_changes(lambda c: (
        f"{c.n_entries:,} entries, {c.n_scores:,} scores"
        + (f"; left pool(s) {', '.join(c.pools)} (their documents stay)" if c.pools else "")))))
app.command("list")(derive.command("runs", show=_show_list))
app.command("versions")(derive.command("run_versions", show=_show_versions))
app.command("export")(derive.command("run_export", show=_show_export))
