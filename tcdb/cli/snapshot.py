"""`tcdb snapshot …`: ingest snapshots, list them, and see what changed between two."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import typer
from rich.markup import escape

from tcdb.cli.output import console, print_json, print_table
from tcdb.vocabulary import OnDuplicate

app = typer.Typer(help="Ingest snapshots of a collection and compare them.",
                  no_args_is_help=True)


@app.command()
def ingest(
    collection: str = typer.Argument(..., help="Collection name."),
    label: str = typer.Argument(..., help="Snapshot label, e.g. 2022-06."),
    irds: str | None = typer.Option(None, "--irds", help="An ir_datasets id, e.g. "
                                    "longeval-web/2022-06 or cord19/trec-covid/round1."),
    docs: Path | None = typer.Option(None, "--docs", help="Documents: TREC SGML (file, .gz, "
                                     "or folder) or JSONL / BEIR corpus.jsonl."),
    topics: Path | None = typer.Option(None, "--topics", help="Topics: TREC <top>, TSV or "
                                       "BEIR queries.jsonl."),
    qrels: Path | None = typer.Option(None, "--qrels", help="Qrels: TREC or BEIR TSV."),
    date: str | None = typer.Option(None, "--date", help="Snapshot date, YYYY-MM-DD."),
    qrels_name: str = typer.Option("original", "--qrels-name",
                                   help="Name of the snapshot's qrels set."),
    no_text: bool = typer.Option(False, "--no-text", help="Keep content hashes and lengths only."),
    replace: bool = typer.Option(False, "--replace", help="Re-ingest a label from a different "
                                 "source (its runs and scores are removed)."),
    on_duplicate: OnDuplicate = typer.Option(
        OnDuplicate.error, "--on-duplicate",
        help="A document id given twice with different texts: refuse (error), or keep the "
        "first or the last text. The same id with the same text is always kept once."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Ingest a snapshot: documents (as versions), topics and its qrels, atomically."""
    from tcdb.collections.sources import open_source
    from tcdb.errors import OptionError
    from tcdb.ingest import ingest_snapshot

    if bool(irds) == bool(docs):
        raise OptionError("--irds/--docs", "give either --irds ID or --docs PATH")
    when = None
    if date:
        try:
            when = dt.date.fromisoformat(date)
        except ValueError:
            raise OptionError("--date", f"not a date: {date!r} (YYYY-MM-DD)") from None
    source = open_source(irds, docs, topics, qrels)
    report = ingest_snapshot(collection, label, source, date=when, qrels_name=qrels_name,
                             with_text=not no_text, replace=replace, on_duplicate=on_duplicate,
                             progress=not json_output)
    if json_output:
        print_json(report.as_dict())
        return
    if report.status == "unchanged":
        console.print(f"snapshot {collection}/{label} is already ingested from this source: "
                      "nothing to do", markup=False, emoji=False, highlight=False)
        return
    console.print(f"[green]✓[/] {escape(collection)}/{escape(label)} ingested in "
                  f"{report.seconds:.1f} s "
                  f"({report.docs_per_second:,.0f} docs/s)", highlight=False, emoji=False)
    console.print(f"  {report.documents_summary()}", highlight=False, soft_wrap=True,
                  markup=False, emoji=False)
    console.print(f"  {report.n_topics:,} topics, {report.n_judgments:,} judgments",
                  highlight=False)
    if report.n_repeated or report.n_conflicting:
        console.print(f"  {report.n_repeated:,} repeated document id(s) with the same text kept "
                      f"once; {report.n_conflicting:,} with another text resolved "
                      f"({on_duplicate.value})", highlight=False)


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List snapshots with their status and counts."""
    from tcdb.catalog import list_snapshots

    rows = list_snapshots(collection)
    if json_output:
        print_json(rows)
        return
    print_table(["collection", "snapshot", "date", "status", "documents", "topics", "judgments"],
                [(r["collection"], r["label"], r["date"], r["status"], f"{r['documents']:,}",
                  r["topics"], f"{r['judgments']:,}") for r in rows])


@app.command()
def diff(
    collection: str = typer.Argument(..., help="Collection name."),
    a: str = typer.Argument(..., help="The earlier snapshot."),
    b: str = typer.Argument(..., help="The later snapshot."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Documents added / removed / changed / unchanged, topics added / removed / kept."""
    from tcdb.reports.drift import snapshot_diff

    report = snapshot_diff(collection, a, b)
    if json_output:
        print_json(report)
        return
    d, t = report["documents"], report["topics"]
    print_table(["documents", "count"], [("added", d["added"]), ("removed", d["removed"]),
                                         ("changed", d["changed"]),
                                         ("unchanged", d["unchanged"])],
                title=f"{collection}: {a} → {b}")
    topic_rows = [("added", t["added"]), ("removed", t["removed"]), ("kept (core)", t["kept"]),
                  ("re-numbered", t["renumbered"])]
    ambiguous = t["ambiguous"]
    if ambiguous["before"] or ambiguous["after"]:
        topic_rows += [(f"ambiguous in {a} (left out of the core)", ambiguous["before"]),
                       (f"ambiguous in {b} (left out of the core)", ambiguous["after"])]
    print_table(["topics", "count"], topic_rows)
    print_table(["snapshot", "judged topics", "judgments", "relevant", "per topic"],
                [(s, q["topics"], q["judgments"], q["relevant"],
                  f"{q['judgments_per_topic']:.1f}") for s, q in report["qrels"].items()],
                title="original qrels")
