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
    source_labels: Path | None = typer.Option(
        None, "--source-labels", metavar="FILE",
        help="Who wrote each document, for corpora of any format: lines "
        "doc_id<TAB>source[<TAB>twin_of] (source: human, llm, …; twin_of: the id of the "
        "original an LLM document rewrites). JSONL/BEIR documents may carry the fields "
        "`source` and `twin_of` themselves."),
    cocktail: Path | None = typer.Option(
        None, "--cocktail", metavar="FOLDER",
        help="A Cocktail dataset folder (corpus/human.jsonl and one corpus per LLM, "
        "queries.jsonl, qrels/test.tsv): documents become ID-SOURCE, labelled human or llm, "
        "each LLM document the twin of ID-human; the qrels judge ID-human."),
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

    if (irds is not None) + (docs is not None) + (cocktail is not None) != 1:
        raise OptionError("--irds/--docs", "give either --irds ID or --docs PATH (or "
                          "--cocktail FOLDER)")
    when = None
    if date:
        try:
            when = dt.date.fromisoformat(date)
        except ValueError:
            raise OptionError("--date", f"not a date: {date!r} (YYYY-MM-DD)") from None
    source = open_source(irds, docs, topics, qrels, labels=source_labels, cocktail=cocktail)
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
    if report.n_by_source:
        console.print("  by source: " + ", ".join(f"{n:,} {label}" for label, n
                                                  in report.n_by_source.items()),
                      highlight=False, markup=False, emoji=False)
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
    from tcdb.catalog.collections import list_snapshots

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
    if report["sources"]:
        print_table(["source", a, b, "added", "removed", "changed", "unchanged", "relabelled"],
                    [(label, f"{c['before']:,}", f"{c['after']:,}", f"{c['added']:,}",
                      f"{c['removed']:,}", f"{c['changed']:,}", f"{c['unchanged']:,}",
                      f"{c['relabelled']:,}") for label, c in report["sources"].items()],
                    title="documents per source")
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


@app.command()
def stats(
    collection: str = typer.Argument(..., help="Collection name."),
    labels: list[str] | None = typer.Argument(None, help="Snapshots (default: every complete "
                                              "one, in time order)."),
    short: int = typer.Option(10, "--short", help="A ranking with fewer documents is short."),
    tokens: bool = typer.Option(True, "--tokens/--no-tokens", help="Token lengths (counted at "
                                "ingest): --no-tokens skips their aggregate over every document."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON (per-topic judgments "
                                     "by grade and every run's empty and short topics)."),
) -> None:
    """Documents, queries and token lengths per snapshot, documents in all of them, churn by
    length direction, judgments by grade, and runs' empty or short rankings."""
    from tcdb.reports.snapshot_stats import snapshot_stats

    report = snapshot_stats(collection, labels or None, short, tokens=tokens)
    if json_output:
        print_json(report)
        return
    snaps = report["per_snapshot"]
    grades = sorted({int(g) for s in snaps for g in s["judgments_by_grade"]})
    print_table(["snapshot", "documents", "queries", "tokens mean", "min", "max", "counted",
                 *[f"grade {g}" for g in grades], "no relevant", "unjudged"],
                [[s["label"], s["documents"], s["queries"], s["tokens"]["mean"],
                  s["tokens"]["min"], s["tokens"]["max"], s["tokens"]["n_with_text"],
                  *[s["judgments_by_grade"].get(g, 0) for g in grades],
                  len(s["topics_without_relevant"]), s["unjudged_topics"]] for s in snaps],
                title=f"{collection} · {report['present_in_all']} documents in all "
                f"{len(snaps)} snapshots")
    if report["churn"]:
        print_table(["from", "to", "added", "removed", "changed", "grew", "shrank",
                     "same length", "unchanged"],
                    [[c["a"], c["b"], c["added"], c["removed"], c["changed"], c["grew"],
                      c["shrank"], c["same_length"], c["unchanged"]] for c in report["churn"]],
                    title="churn (changed documents by the length of their text)")
    rows = [[s["label"], r["run"], len(r["empty"]), len(r["short"])]
            for s in snaps for r in s["runs"] if r["empty"] or r["short"]]
    if rows:
        print_table(["snapshot", "run", "empty topics", f"short (< {report['short']})"], rows,
                    title="runs with empty or short rankings (--json lists the topics)")
