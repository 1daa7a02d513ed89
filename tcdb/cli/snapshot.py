"""`tcdb snapshot …`: ingest snapshots, list them, and see what changed between two."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from tcdb.cli import derive
from tcdb.cli.output import console, print_json, print_table

if TYPE_CHECKING:
    from tcdb.catalog.collections import SnapshotsResult
    from tcdb.ingest.report import SnapshotIngestResult

app = typer.Typer(help="Ingest snapshots of a collection and compare them.",
                  no_args_is_help=True)


def _show_ingest(report: SnapshotIngestResult) -> None:
    collection, label = report.collection, report.label
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
        console.print("  by source: " + ", ".join(f"{n:,} {source}" for source, n
                                                  in report.n_by_source.items()),
                      highlight=False, markup=False, emoji=False)
    console.print(f"  {report.n_topics:,} topics, {report.n_judgments:,} judgments",
                  highlight=False)
    if report.n_repeated or report.n_conflicting:
        console.print(f"  {report.n_repeated:,} repeated document id(s) with the same text kept "
                      f"once; {report.n_conflicting:,} with another text resolved",
                      highlight=False)


def _show_list(result: SnapshotsResult) -> None:
    print_table(["collection", "snapshot", "date", "status", "documents", "topics", "judgments"],
                [(r.collection, r.label, r.date, r.status, f"{r.documents or 0:,}",
                  r.topics, f"{r.judgments or 0:,}") for r in result.snapshots])


app.command("ingest")(derive.command("snapshot_ingest", show=_show_ingest))
app.command("list")(derive.command("snapshots", show=_show_list))


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
