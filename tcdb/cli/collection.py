"""`tcdb collection …`: declare collections and their identity rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tcdb.cli.output import console, print_json, print_table
from tcdb.vocabulary import DocIdentity, TopicIdentity

app = typer.Typer(help="Declare test collections and how documents and topics keep their "
                  "identity across snapshots.", no_args_is_help=True)



def _grades(value: str | None) -> tuple[int | None, int | None]:
    if not value:
        return None, None
    try:
        low, high = (int(v) for v in value.split(":"))
    except ValueError:
        raise typer.BadParameter("write the scale as LOW:HIGH, e.g. 0:2") from None
    return low, high


@app.command()
def add(
    name: str = typer.Argument(..., help="Collection name, e.g. longeval-web."),
    doc_identity: DocIdentity = typer.Option(
        DocIdentity.doc_id, help="Documents are the same across snapshots by id or URL."),
    topic_identity: TopicIdentity = typer.Option(
        TopicIdentity.query_id,
        help="Topics are the same by id, or by normalised query text (re-numbered queries)."),
    id_fallback: bool = typer.Option(
        False, help="With --doc-identity url: key documents without a URL by their id."),
    grades: str | None = typer.Option(None, help="Relevance scale LOW:HIGH, e.g. 0:2."),
    description: str | None = typer.Option(None, help="What the collection is."),
) -> None:
    """Create a collection (the same call again is a no-op)."""
    from tcdb.catalog.collections import add_collection

    low, high = _grades(grades)
    collection = add_collection(name, doc_identity, topic_identity,
                                id_fallback=id_fallback, grade_min=low, grade_max=high,
                                description=description)
    console.print(f"[green]✓[/] collection {collection.name} (documents by "
                  f"{collection.doc_identity.value}, topics by {collection.topic_identity.value})")


@app.command("list")
def list_(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List collections, their identity rules and complete snapshots."""
    from tcdb.catalog.collections import list_collections

    rows = list_collections()
    if json_output:
        print_json(rows)
        return
    print_table(["collection", "documents by", "topics by", "grades", "snapshots"],
                [(r["name"], r["doc_identity"], r["topic_identity"],
                  "–" if r["grades"][0] is None else f"{r['grades'][0]}..{r['grades'][1]}",
                  ", ".join(r["snapshots"]) or "–") for r in rows])


@app.command()
def sync(
    spec: Path = typer.Argument(..., help="A collection spec (YAML), e.g. "
                                "collections/specs/longeval-web.yaml or just longeval-web.yaml."),
    ingest: bool = typer.Option(False, "--ingest", help="Also ingest every declared snapshot "
                                "that is not complete and whose source is available."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Create or update a collection from its spec and show the state of its snapshots."""
    from tcdb.catalog.collections import sync_spec
    from tcdb.ingest import ingest_snapshot, pending_snapshots

    collection = sync_spec(spec)
    pending = pending_snapshots(collection.path)
    done: list[dict] = []
    if ingest:
        for snap, reason in pending:
            if reason is None:
                report = ingest_snapshot(collection.name, snap.label, snap.open_source(),
                                         date=snap.date, progress=not json_output)
                done.append(report.as_dict())
    state: dict[str, Any] = {
        "collection": collection.name,
        "declared": [s.label for s in collection.snapshots],
        "pending": [{"label": s.label, "source": s.describe(), "unavailable": r}
                    for s, r in pending if not any(d["label"] == s.label for d in done)],
        "ingested": done,
    }
    if json_output:
        print_json(state)
        return
    console.print(f"[green]✓[/] {collection.name}: {len(collection.snapshots)} snapshot(s) "
                  f"declared, {len(state['pending'])} pending")
    for p in state["pending"]:
        why = p["unavailable"] or "source available: `tcdb collection sync --ingest`"
        console.print(f"  · {p['label']}: {why}", highlight=False)
