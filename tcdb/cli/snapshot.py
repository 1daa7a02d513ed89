"""`tcdb snapshot …`: ingest snapshots, list them, and see what changed between two."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_table, terminal_text, tick

if TYPE_CHECKING:
    from tcdb.catalog.collections import SnapshotsResult
    from tcdb.ingest.register import SnapshotRegisterResult
    from tcdb.ingest.report import SnapshotIngestResult
    from tcdb.reports.drift import DriftResult, SnapshotDiffResult
    from tcdb.reports.snapshot_stats import SnapshotStatsResult

app = typer.Typer(help=summary("snapshot"), no_args_is_help=True)


def _show_ingest(report: SnapshotIngestResult) -> None:
    collection, label = report.collection, report.label
    if report.status == "unchanged":
        console.print(f"snapshot {collection}/{label} is already ingested from this source: "
                      "nothing to do", markup=False, emoji=False, highlight=False)
        return
    console.print(tick(f"{collection}/{label} ingested in {report.seconds:.1f} s "
                       f"({report.docs_per_second:,.0f} docs/s)"), highlight=False)
    console.print(f"  {report.documents_summary()}", highlight=False,
                  markup=False, emoji=False)
    if report.n_by_source:
        console.print("  by source: " + ", ".join(f"{n:,} {source}" for source, n
                                                  in report.n_by_source.items()),
                      highlight=False, markup=False, emoji=False)
    console.print(f"  {report.n_topics:,} topics, {report.n_judgments:,} judgments",
                  highlight=False)
    for warning in report.warnings:
        console.print(f"  warning: {terminal_text(warning)}", highlight=False, markup=False,
                      emoji=False)
    if report.n_repeated or report.n_conflicting:
        console.print(f"  {report.n_repeated:,} repeated document id(s) with the same text kept "
                      f"once; {report.n_conflicting:,} with another text resolved",
                      highlight=False)


def _show_list(result: SnapshotsResult) -> None:
    print_table(["collection", "snapshot", "date", "status", "documents", "topics", "judgments"],
                [(r.collection, r.label, r.date, r.status,
                  f"{r.documents or 0:,}" if r.with_documents is not False else "none (scores)",
                  "from scores" if r.topics_from_scores and not r.topics else r.topics,
                  f"{r.judgments or 0:,}") for r in result.snapshots])
    for r in result.snapshots:  # what the readers changed stays said after the ingest
        if r.documents_edited or r.topics_edited:
            console.print(f"note: {terminal_text(r.collection)}/{terminal_text(r.label)}: "
                          f"{r.documents_edited or 0:,} document text(s) and "
                          f"{r.topics_edited or 0:,} topic(s) changed by their reader at "
                          f"ingest ({r.characters_removed or 0:,} character(s) removed or "
                          "replaced)", highlight=False, markup=False, emoji=False)
        if r.rejected:
            console.print(f"note: {terminal_text(r.collection)}/{terminal_text(r.label)}: "
                          f"{r.rejected:,} bad line(s) set aside at ingest", highlight=False,
                          markup=False, emoji=False)


app.command("ingest")(derive.command("snapshot_ingest", show=_show_ingest))
app.command("list")(derive.command("snapshots", show=_show_list))


def _show_register(result: SnapshotRegisterResult) -> None:
    where = "its topics come from the scores imported into it" if result.topics_from_scores \
        else f"{result.n_topics:,} topics"
    console.print(f"snapshot {terminal_text(result.collection)}/{terminal_text(result.label)}: "
                  f"{result.status} without documents; {where}", highlight=False,
                  markup=False, emoji=False)
    for warning in result.warnings:
        console.print(f"  warning: {terminal_text(warning)}", highlight=False, markup=False,
                      emoji=False)


app.command("register")(derive.command("snapshot_register", show=_show_register))


def _show_diff(report: SnapshotDiffResult) -> None:
    a, b, d, t = report.a, report.b, report.documents, report.topics
    print_table(["documents", "count"], [("added", d.added), ("removed", d.removed),
                                         ("changed", d.changed), ("unchanged", d.unchanged)],
                title=f"{report.collection}: {a} → {b}")
    if report.sources:
        print_table(["source", a, b, "added", "removed", "changed", "unchanged", "relabelled"],
                    [(label, f"{c.before:,}", f"{c.after:,}", f"{c.added:,}",
                      f"{c.removed:,}", f"{c.changed:,}", f"{c.unchanged:,}",
                      f"{c.relabelled:,}") for label, c in report.sources.items()],
                    title="documents per source")
    topic_rows = [("added", t.added), ("removed", t.removed), ("kept (core)", t.kept),
                  ("re-numbered", t.renumbered)]
    if t.ambiguous.before or t.ambiguous.after:
        topic_rows += [(f"ambiguous in {a} (left out of the core)", t.ambiguous.before),
                       (f"ambiguous in {b} (left out of the core)", t.ambiguous.after)]
    print_table(["topics", "count"], topic_rows)
    print_table(["snapshot", "judged topics", "judgments", "relevant", "per topic"],
                [(s, q.topics, q.judgments, q.relevant, f"{q.judgments_per_topic:.1f}")
                 for s, q in report.qrels.items()],
                title="original qrels")


def _show_drift(report: DriftResult) -> None:
    print_table(["from", "to", "added", "removed", "changed", "unchanged", "topics added",
                 "topics removed", "topics kept", "re-numbered"],
                [(t.a, t.b, t.documents.added, t.documents.removed, t.documents.changed,
                  t.documents.unchanged, t.topics.added, t.topics.removed, t.topics.kept,
                  t.topics.renumbered) for t in report.transitions],
                title=f"{report.collection} · {len(report.snapshots)} snapshots · "
                f"{report.core_topics} topics in all")
    print_table(["snapshot", "judged topics", "judgments", "relevant", "per topic"],
                [(s, q.topics, q.judgments, q.relevant, f"{q.judgments_per_topic:.1f}")
                 for s, q in report.qrels.items()],
                title="original qrels")


def _show_stats(report: SnapshotStatsResult) -> None:
    snaps = report.per_snapshot
    grades = sorted({g for s in snaps for g in s.judgments_by_grade})
    print_table(["snapshot", "documents", "queries", "tokens mean", "min", "max", "counted",
                 *[f"grade {g}" for g in grades], "no relevant", "unjudged"],
                [[s.label, s.documents if s.with_documents else "none (scores)", s.queries,
                  s.tokens.mean, s.tokens.min, s.tokens.max,
                  s.tokens.n_with_text, *[s.judgments_by_grade.get(g, 0) for g in grades],
                  len(s.topics_without_relevant), s.unjudged_topics] for s in snaps],
                title=f"{report.collection} · {report.present_in_all} documents in all "
                f"{len(snaps)} snapshots")
    if report.churn:
        print_table(["from", "to", "added", "removed", "changed", "grew", "shrank",
                     "same length", "unchanged"],
                    [[c.a, c.b, c.added, c.removed, c.changed, c.grew, c.shrank,
                      c.same_length, c.unchanged] for c in report.churn],
                    title="churn (changed documents by the length of their text)")
    rows = [[s.label, r.run, len(r.empty), len(r.short)]
            for s in snaps for r in s.runs if r.empty or r.short]
    if rows:
        print_table(["snapshot", "run", "empty topics", f"short (< {report.short})"], rows,
                    title="runs with empty or short rankings (--json lists the topics)")


app.command("diff")(derive.command("snapshot_diff", show=_show_diff))
app.command("drift")(derive.command("drift", show=_show_drift))
app.command("stats")(derive.command("snapshot_stats", show=_show_stats))
