"""`tcdb pool build|list|show|export|import-judgments|expand|simulate|next-round`: assessment
pools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tcdb.cli.output import console, err_console, print_json, print_table
from tcdb.vocabulary import (
    JudgmentFormat,
    PoolExportFormat,
    PoolExportOrder,
    Prefer,
    TieOrder,
)

if TYPE_CHECKING:
    from tcdb.pools.results import SizeStats

app = typer.Typer(help="Build depth-k pools, export them blind for assessors, import judgments.",
                  no_args_is_help=True)

# Pool names are unique per snapshot: a name two snapshots share needs these.
CollectionOption = typer.Option(None, "--collection", help="The pool's collection, when the "
                                "name alone is ambiguous.")
SnapshotOption = typer.Option(None, "--snapshot", help="The pool's snapshot, when the name "
                              "alone is ambiguous.")



def _size(size: SizeStats) -> str:
    return f"{size['min']}–{size['max']} (mean {size['mean']:.1f})"


@app.command("build")
def build(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    name: str = typer.Argument(..., help="Name of the new pool."),
    depth: int | None = typer.Option(
        None, "--depth", "-k", help="Top K documents of each run per topic (with --budget: "
        "read runs only this deep; default whole runs)."),
    run: list[str] | None = typer.Option(None, "--run", help="A run tag to pool (repeatable)."),
    contributed: bool = typer.Option(False, "--contributed",
                                     help="Pool the runs that fed the official pools."),
    not_contributed: bool = typer.Option(False, "--not-contributed",
                                         help="Pool the runs that did not contribute."),
    all_runs: bool = typer.Option(False, "--all-runs", help="Pool every run of the snapshot."),
    exclude_judged: str | None = typer.Option(
        None, "--exclude-judged", help="Leave out what this qrels set judged (remainder pool)."),
    tie_order: TieOrder = typer.Option(
        TieOrder.trec_eval, "--tie-order",
        help="Rank by score then doc id descending (trec_eval), score then doc id ascending "
        "(docid-asc, trectools), or the file's rank column (file-rank)."),
    max_per_topic: int | None = typer.Option(
        None, "--max-per-topic",
        help="Cap each topic at N documents: best rank first, then more runs, then doc id."),
    description: str | None = typer.Option(None, "--description", help="Free text."),
    strategy: str | None = typer.Option(
        None, "--strategy", help="With --budget: the judging order, NAME or NAME:key=value,… "
        "(depth, rrf, rbp, mtf, maxmean; default depth)."),
    budget: int | None = typer.Option(
        None, "--budget", help="At most N documents, the first N of the strategy's order "
        "(kept, so an export can be cut at any smaller budget)."),
    per_topic: bool = typer.Option(False, "--per-topic",
                                   help="The budget is per topic (default: in total)."),
    batch: int | None = typer.Option(
        None, "--batch", help="Pool only the first N now (round 1); `pool next-round` adds "
        "the next rounds, learning from their judgments, up to the budget."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Build a depth-k pool over chosen runs, computed in the database; or, with --budget,
    the first N documents of a pooling strategy's order."""
    from tcdb.pools import build_pool
    from tcdb.pools.strategies import make_strategy

    if strategy and budget and batch is None and make_strategy(strategy).adaptive:
        err_console.print(f"note: {strategy} learns from judgments as it goes; without --batch "
                          "it orders the whole budget knowing none (judge in rounds: --batch B,"
                          " then `tcdb pool next-round`)", highlight=False, markup=False)
    with err_console.status(f"building pool {name} …"):
        report = build_pool(collection, snapshot, name, depth, runs=run or None,
                            contributed=contributed, not_contributed=not_contributed,
                            all_runs=all_runs, exclude_judged=exclude_judged,
                            tie_order=tie_order, max_per_topic=max_per_topic,
                            description=description, strategy=strategy, budget=budget,
                            per_topic=per_topic, batch=batch)
    if json_output:
        print_json(report)
        return
    console.print(
        f"pool {report['name']}: {report['status']} · {report['n_documents']:,} documents over "
        f"{report['n_topics']} topics · per topic {_size(report['size'])} · "
        f"{len(report['runs'])} {report['chosen']} at depth {report['depth']} "
        f"({report['tie_order']})"
        + (f" · {report['strategy']}, budget {report['budget']:,}"
           f"{' per topic' if report['budget_per_topic'] else ''}" if report["budget"] else "")
        + (f" · minus {report['exclude_judged']}" if report["exclude_judged"] else "")
        + f" · {report['seconds']:.2f}s", highlight=False)
    if report["n_unresolved_skipped"]:
        console.print(f"  left out {report['n_unresolved_skipped']:,} top-{report['depth']} "
                      "document(s) the snapshot does not have (unresolved run entries)",
                      highlight=False)


@app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List pools: size per topic, status and judged fraction."""
    from tcdb.pools import list_pools

    rows = list_pools(collection)
    if json_output:
        print_json(rows)
        return
    print_table(
        ["pool", "snapshot", "depth", "runs", "minus", "documents", "per topic", "status",
         "judged"],
        [(r["name"], f"{r['collection']}/{r['snapshot']}", r["depth"], r["n_runs"],
          r["exclude_judged"], f"{r['n_documents']:,}", _size(r["size"]), r["status"],
          f"{r['judged_fraction']:.0%}") for r in rows])


@app.command("show")
def show(
    name: str = typer.Argument(..., help="Pool name."),
    collection: str | None = CollectionOption,
    snapshot: str | None = SnapshotOption,
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show a pool: sizes per topic, each run's unique documents, judged fraction."""
    from tcdb.pools import show_pool

    info = show_pool(name, collection, snapshot)
    if json_output:
        print_json(info)
        return
    console.print(
        f"pool {info['name']} · {info['collection']} / {info['snapshot']} · depth "
        f"{info['depth']} ({info['tie_order']})"
        + (f" · minus {info['exclude_judged']}" if info["exclude_judged"] else "")
        + (f" · max {info['max_per_topic']} per topic" if info["max_per_topic"] else "")
        + (f" · {info['strategy']}, budget {info['budget']:,}"
           f"{' per topic' if info['budget_per_topic'] else ''}" if info["budget"] else "")
        + f" · status {info['status']} · {info['n_documents']:,} documents, "
        f"{info['n_judged']:,} judged ({info['judged_fraction']:.0%})"
        + (f" in {info['pooled_qrels']}" if info["pooled_qrels"] else ""), highlight=False)
    size = info["size"]
    console.print(f"size per topic: min {size['min']} · max {size['max']} · mean "
                  f"{size['mean']:.1f} · total {size['total']:,}", highlight=False)
    print_table(["run", "pooled documents", "unique"],
                [(r["run"], r["n_pooled"], r["unique"]) for r in info["runs"]],
                title="contribution per run")
    print_table(["topic", "documents", "judged"],
                [(t["topic"], t["n_documents"], t["n_judged"]) for t in info["per_topic"]],
                title="per topic")


@app.command("export")
def export(
    name: str = typer.Argument(..., help="Pool name."),
    collection: str | None = CollectionOption,
    snapshot: str | None = SnapshotOption,
    fmt: PoolExportFormat = typer.Option(..., "--format", help="trec (ids only), jsonl or csv."),
    out: Path = typer.Option(..., "--out", help="File to write (.gz to compress)."),
    order: PoolExportOrder = typer.Option(PoolExportOrder.docid, "--order",
                                      help="Documents per topic by id, or shuffled."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the shuffle."),
    budget: int | None = typer.Option(
        None, "--budget", help="Only the first N documents of a budgeted pool's order (in "
        "total, or per topic if the pool's budget is)."),
    overlap: int | None = typer.Option(
        None, "--overlap", help="Only N documents per topic, drawn with --seed: the overlap a "
        "second assessor judges too (`tcdb report agreement`)."),
    round_number: int | None = typer.Option(
        None, "--round", help="Only the documents this round added (`pool next-round`)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Export the pool blind for assessors (no run tags, ranks or scores)."""
    from tcdb.pools import export_pool

    report = export_pool(name, fmt, out, order=order, seed=seed, collection=collection,
                         snapshot=snapshot, budget=budget, overlap=overlap,
                         round_number=round_number)
    if json_output:
        print_json(report)
        return
    seed_note = f" (seed {report['seed']})" if report["seed"] is not None else ""
    console.print(f"pool {name}: {report['n_documents']:,} documents over {report['n_topics']} "
                  f"topics → {report['out']} ({report['format']}, {report['order']} order"
                  f"{seed_note}) · status {report['status']}", highlight=False)


def _print_expanded(expanded: dict[str, Any]) -> None:
    console.print(
        f"expanded qrels {expanded['name']} = {expanded['base']} ∪ {expanded['pooled']}"
        + (" (already stored: unchanged)" if expanded.get("status") == "unchanged" else "")
        + ": "
        f"{expanded['n_judgments']:,} judgments ({expanded['n_added']:,} added) · "
        f"{expanded['n_conflicts']} conflicting grade(s), kept {expanded['prefer']}",
        highlight=False)
    if expanded["conflicts"]:
        print_table(["topic", "document", "base", "new"],
                    [(c["topic"], c["doc"], c["base"], c["new"])
                     for c in expanded["conflicts"]], title="conflicts")


@app.command("import-judgments")
def import_judgments(
    name: str = typer.Argument(..., help="Pool name."),
    collection: str | None = CollectionOption,
    snapshot: str | None = SnapshotOption,
    file: Path = typer.Argument(..., help="Judgments: TREC qrels or CSV topic_id,doc_id,grade."),
    fmt: JudgmentFormat = typer.Option(JudgmentFormat.trec, "--format", help="trec or csv."),
    assessor: str | None = typer.Option(None, "--assessor", help="Who judged."),
    expand: str | None = typer.Option(None, "--expand",
                                      help="Also write BASE_QRELS ∪ pooled as a new set."),
    expanded_name: str | None = typer.Option(None, "--expanded-name",
                                             help="Name of the expanded qrels set."),
    prefer: Prefer = typer.Option(Prefer.base, "--prefer",
                                  help="Which grade wins when base and pooled disagree."),
    pooled_name: str | None = typer.Option(
        None, "--pooled-name", help="Name of the pooled qrels set (first batch; default: the "
        "pool's name)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Add a batch of judgments to the pool's pooled qrels set (all or nothing)."""
    from tcdb.judging.pooled import import_judgments as run_import

    report = run_import(name, file, fmt=fmt, assessor=assessor, expand=expand,
                        expanded_name=expanded_name, prefer=prefer,
                        pooled_name=pooled_name, collection=collection, snapshot=snapshot)
    if json_output:
        print_json(report)
        return
    console.print(
        f"pool {name}: {report['n_new']:,} new judgment(s) in {report['pooled_qrels']}"
        + (f" ({report['n_repeated']:,} already there)" if report["n_repeated"] else "")
        + f" · {report['n_judged']:,}/{report['n_documents']:,} judged "
        f"({report['judged_fraction']:.0%}) · status {report['status']}", highlight=False)
    if report["expanded"]:
        _print_expanded(report["expanded"])


@app.command("expand")
def expand(
    name: str = typer.Argument(..., help="Pool name."),
    collection: str | None = CollectionOption,
    snapshot: str | None = SnapshotOption,
    base: str = typer.Option(..., "--base", help="The qrels set to expand."),
    expanded_name: str = typer.Option(..., "--name", help="Name of the expanded qrels set."),
    prefer: Prefer = typer.Option(Prefer.base, "--prefer",
                                  help="Which grade wins when base and pooled disagree."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Write base ∪ the pool's judgments (all batches so far) as an expanded qrels set."""
    from tcdb.judging.pooled import expand_pool

    report = expand_pool(name, base, expanded_name, prefer, collection=collection,
                         snapshot=snapshot)
    if json_output:
        print_json(report)
        return
    _print_expanded(report)


def _tau(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


@app.command("simulate")
def simulate(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    qrels: str = typer.Option(..., "--qrels", help="The complete qrels set the simulation "
                              "reads grades from."),
    strategy: list[str] | None = typer.Option(
        None, "--strategy", help="A strategy, NAME or NAME:key=value,… (repeatable; default "
        "all: depth, rrf, rbp, mtf, maxmean)."),
    budgets: list[str] = typer.Option(..., "--budgets", help="Budgets to simulate, e.g. "
                                      "500,1000,2000 (repeatable)."),
    per_topic: bool = typer.Option(False, "--per-topic",
                                   help="Budgets per topic (default: in total)."),
    run: list[str] | None = typer.Option(None, "--run", help="A run tag to pool and rank "
                                         "(repeatable; default every run)."),
    measure: str = typer.Option("AP", "--measure", help="The measure systems are ranked by."),
    tie_order: TieOrder = typer.Option(TieOrder.trec_eval, "--tie-order",
                                       help="How runs are ranked (as in `pool build`)."),
    depth: int | None = typer.Option(None, "--depth", help="Read each run to this depth "
                                     "only (default: whole runs)."),
    no_leave_out: bool = typer.Option(False, "--no-leave-out",
                                      help="Skip the leave-one-group-out τ (faster)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Simulate pooling strategies on a complete qrels set before anyone judges: relevant
    found, τ-b and τ_AP against the complete ranking, leave-one-group-out τ."""
    from tcdb.pools.simulate import simulate_pool

    with err_console.status("simulating pools …"):
        report = simulate_pool(collection, snapshot, qrels, budgets, strategies=strategy,
                               per_topic=per_topic, runs=run, measure=measure,
                               tie_order=tie_order, depth=depth, leave_out=not no_leave_out)
    if json_output:
        print_json(report)
        return
    scope = "per topic" if report["per_topic"] else "in total"
    console.print(
        f"simulation on {report['qrels']} · {report['collection']} / {report['snapshot']} · "
        f"{report['n_runs']} runs in {report['n_groups']} groups · {report['n_topics']} topics"
        f" · {report['relevant_total']:,} relevant · {report['measure']} · budgets {scope} · "
        f"{report['seconds']:.1f}s", highlight=False)
    print_table(
        ["strategy", "budget", "judged", "relevant found", "τ-b", "τ_AP", "LOGO τ-b",
         "LOGO τ_AP"],
        [(r["strategy"], f"{r['budget']:,}", f"{r['n_judged']:,}",
          f"{r['relevant_found']:,} ({r['relevant_fraction']:.0%})", _tau(r["tau_b"]),
          _tau(r["tau_ap"]), _tau(r["logo_tau_b"]), _tau(r["logo_tau_ap"]))
         for r in report["rows"]])


@app.command("next-round")
def next_round(
    name: str = typer.Argument(..., help="Pool name."),
    collection: str | None = CollectionOption,
    snapshot: str | None = SnapshotOption,
    batch: int = typer.Option(..., "--batch", help="Documents to add (per topic if the "
                              "pool's budget is)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Add a budgeted pool's next round: the strategy replayed on every judgment so far."""
    from tcdb.pools.rounds import next_round as add_round

    report = add_round(name, batch, collection=collection, snapshot=snapshot)
    if json_output:
        print_json(report)
        return
    console.print(f"pool {name}: round {report['round']} added {report['n_added']:,} "
                  f"document(s) · {report['n_documents']:,} of a budget of "
                  f"{report['budget']:,}{' per topic' if report['budget_per_topic'] else ''}"
                  f" · status {report['status']} (export it with --round {report['round']})",
                  highlight=False)
