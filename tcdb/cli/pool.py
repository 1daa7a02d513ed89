"""`tcdb pool build|list|show|export|import-judgments|expand|simulate|next-round`: assessment
pools.

Each command is derived from its operation (`tcdb.pools`, `tcdb.judging.pooled`); this module
only prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, err_console, print_table, say

if TYPE_CHECKING:
    from tcdb.pools.results import (
        ExpandResult,
        ImportJudgmentsResult,
        PoolBuildResult,
        PoolExportResult,
        PoolRoundResult,
        PoolShowResult,
        PoolsResult,
        SizeStats,
    )
    from tcdb.pools.simulate import SimulationResult

app = typer.Typer(help=summary("pool"), no_args_is_help=True)


def _size(size: SizeStats) -> str:
    return f"{size.min}–{size.max} (mean {size.mean:.1f})"


def _show_build(report: PoolBuildResult) -> None:
    if report.adaptive_without_rounds:
        name = report.strategy.partition(":")[0]
        err_console.print(f"note: {name} learns from judgments as it goes; without "
                          "--batch it orders the whole budget knowing none (judge in rounds: "
                          "--batch B, then `tcdb pool next-round`)", highlight=False,
                          markup=False)
    console.print(
        f"pool {report.name}: {report.status} · {report.n_documents:,} documents over "
        f"{report.n_topics} topics · per topic {_size(report.size)} · "
        f"{len(report.runs)} {report.chosen} at depth {report.depth} ({report.tie_order})"
        + (f" · {report.strategy}, budget {report.budget:,}"
           f"{' per topic' if report.budget_per_topic else ''}" if report.budget else "")
        + (f" · minus {report.exclude_judged}" if report.exclude_judged else "")
        + f" · {report.seconds:.2f}s", highlight=False)
    if report.n_unresolved_skipped:
        console.print(f"  left out {report.n_unresolved_skipped:,} top-{report.depth} "
                      "document(s) the snapshot does not have (unresolved run entries)",
                      highlight=False)


app.command("build")(derive.command("pool_build", show=_show_build))


def _show_pools(result: PoolsResult) -> None:
    print_table(
        ["pool", "snapshot", "depth", "runs", "minus", "documents", "per topic", "status",
         "judged"],
        [(r.name, f"{r.collection}/{r.snapshot}", r.depth, r.n_runs, r.exclude_judged,
          f"{r.n_documents:,}", _size(r.size), r.status, f"{r.judged_fraction:.0%}")
         for r in result.pools])


app.command("list")(derive.command("pools", show=_show_pools))


def _show_pool(info: PoolShowResult) -> None:
    console.print(
        f"pool {info.name} · {info.collection} / {info.snapshot} · depth "
        f"{info.depth} ({info.tie_order})"
        + (f" · minus {info.exclude_judged}" if info.exclude_judged else "")
        + (f" · max {info.max_per_topic} per topic" if info.max_per_topic else "")
        + (f" · {info.strategy}, budget {info.budget:,}"
           f"{' per topic' if info.budget_per_topic else ''}" if info.budget else "")
        + f" · status {info.status} · {info.n_documents:,} documents, "
        f"{info.n_judged:,} judged ({info.judged_fraction:.0%})"
        + (f" in {info.pooled_qrels}" if info.pooled_qrels else ""), highlight=False)
    size = info.size
    console.print(f"size per topic: min {size.min} · max {size.max} · mean "
                  f"{size.mean:.1f} · total {size.total:,}", highlight=False)
    print_table(["run", "pooled documents", "unique"],
                [(r.run, r.n_pooled, r.unique) for r in info.runs],
                title="contribution per run")
    print_table(["topic", "documents", "judged"],
                [(t.topic, t.n_documents, t.n_judged) for t in info.per_topic],
                title="per topic")


app.command("show")(derive.command("pool_show", show=_show_pool))


def _show_export(report: PoolExportResult) -> None:
    seed_note = f" (seed {report.seed})" if report.seed is not None else ""
    where = report.out if report.out is not None else "nowhere (no --out)"
    trimmed = (f" · {report.n_texts_trimmed:,} texts trimmed of the blank lines "
               "around them" if report.n_texts_trimmed else "")
    say(f"pool {report.name}: {report.n_documents:,} documents over {report.n_topics} topics "
        f"→ {where} ({report.format}, {report.order} order{seed_note}) · status "
        f"{report.status} · grade: {report.grade_scale}{trimmed}")


def _prepare_export(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """On the command line an export is for assessors: it writes a file."""
    if fields.get("out") is None:
        from tcdb.errors import OptionError

        raise OptionError("--out", "give the file to write")
    return fields


app.command("export")(derive.command("pool_export", show=_show_export,
                                     prepare=_prepare_export))


def _print_expanded(expanded: ExpandResult) -> None:
    console.print(
        f"expanded qrels {expanded.name} = {expanded.base} ∪ {expanded.pooled}"
        + (" (already stored: unchanged)" if expanded.status == "unchanged" else "")
        + ": "
        f"{expanded.n_judgments:,} judgments ({expanded.n_added:,} added) · "
        f"{expanded.n_conflicts} conflicting grade(s), kept {expanded.prefer}",
        highlight=False)
    if expanded.conflicts:
        print_table(["topic", "document", "base", "new"],
                    [(c.topic, c.doc, c.base, c.new) for c in expanded.conflicts],
                    title="conflicts")


def _show_import(report: ImportJudgmentsResult) -> None:
    console.print(
        f"pool {report.name}: {report.n_new:,} new judgment(s) in {report.pooled_qrels}"
        + (f" ({report.n_repeated:,} already there)" if report.n_repeated else "")
        + f" · {report.n_judged:,}/{report.n_documents:,} judged "
        f"({report.judged_fraction:.0%}) · status {report.status}", highlight=False)
    if report.expanded is not None:
        _print_expanded(report.expanded)


app.command("import-judgments")(derive.command("pool_import_judgments", show=_show_import))
app.command("expand")(derive.command("pool_expand", show=_print_expanded))


def _tau(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _show_simulation(report: SimulationResult) -> None:
    scope = "per topic" if report.per_topic else "in total"
    console.print(
        f"simulation on {report.qrels} · {report.collection} / {report.snapshot} · "
        f"{report.n_runs} runs in {report.n_groups} groups · {report.n_topics} topics"
        f" · {report.relevant_total:,} relevant · {report.measure} · budgets {scope} · "
        f"{report.seconds:.1f}s", highlight=False)
    print_table(
        ["strategy", "budget", "judged", "relevant found", "τ-b", "τ_AP", "LOGO τ-b",
         "LOGO τ_AP"],
        [(r.strategy, f"{r.budget:,}", f"{r.n_judged:,}",
          f"{r.relevant_found:,} ({r.relevant_fraction:.0%})", _tau(r.tau_b), _tau(r.tau_ap),
          _tau(r.logo_tau_b), _tau(r.logo_tau_ap))
         for r in report.rows])


def _simulate_command() -> Any:
    from tcdb.cli import derive

    return derive.command("pool_simulation", show=_show_simulation)


app.command("simulate")(_simulate_command())


def _show_round(report: PoolRoundResult) -> None:
    console.print(f"pool {report.name}: round {report.round} added {report.n_added:,} "
                  f"document(s) · {report.n_documents:,} of a budget of "
                  f"{report.budget:,}{' per topic' if report.budget_per_topic else ''}"
                  f" · status {report.status} (export it with --round {report.round})",
                  highlight=False)


app.command("next-round")(derive.command("pool_next_round", show=_show_round))
