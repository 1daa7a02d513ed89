"""`tcdb collection …`: declare collections and their identity rules.

Each command is derived from its operation (`tcdb.catalog.collections`, `tcdb.catalog.sync`);
this module only prints results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_table, tick

if TYPE_CHECKING:
    from tcdb.catalog.collections import CollectionAddResult, CollectionsResult
    from tcdb.catalog.sync import CollectionSyncResult

app = typer.Typer(help=summary("collection"), no_args_is_help=True)


def _show_add(result: CollectionAddResult) -> None:
    c = result.collection
    console.print(tick(f"collection {c.name} (documents by {c.doc_identity}, topics by "
                       f"{c.topic_identity})"))


def _show_list(result: CollectionsResult) -> None:
    print_table(["collection", "documents by", "topics by", "grades", "snapshots"],
                [(r.name, r.doc_identity, r.topic_identity,
                  "–" if r.grades[0] is None else f"{r.grades[0]}..{r.grades[1]}",
                  ", ".join(r.snapshots) or "–") for r in result.collections])


def _show_sync(result: CollectionSyncResult) -> None:
    console.print(tick(f"{result.collection}: {len(result.declared)} snapshot(s) "
                       f"declared, {len(result.pending)} pending"))
    for p in result.pending:
        why = p.unavailable or "source available: `tcdb collection sync --ingest`"
        console.print(f"  · {p.label}: {why}", highlight=False)


app.command("add")(derive.command("collection_add", show=_show_add))
app.command("list")(derive.command("collections", show=_show_list))
app.command("sync")(derive.command("collection_sync", show=_show_sync))
