"""`tcdb report`: persistence across snapshots and pairwise significance on one snapshot.

Each command is one call into `tcdb.reports.*`; this module only parses options and prints.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import (
    console,
    err_console,
    format_cell,
    format_p,
    heading,
    print_table,
    say,
    topics_said,
)
from tcdb.cli.source_bias import documents_by_source, source_bias
from tcdb.errors import OptionError
from tcdb.vocabulary import (
    BELOW_PIVOT_MARK,
    PERCENTILE_BOOTSTRAP,
    PERSISTENCE_FIGURES,
    TAU_FIGURES,
    below_pivot_said,
    bootstrap_said,
    format_change,
    tau_legend,
)

if TYPE_CHECKING:
    from tcdb.reports.leave_out import LeaveOutGroup, LeaveOutResult
    from tcdb.reports.persistence import PersistenceResult, SystemPersistence
    from tcdb.reports.reusability import ReusabilityMeasure, ReusabilityResult

app = typer.Typer(help=summary("report"), no_args_is_help=True)
app.command("source-bias")(source_bias)
app.command("documents-by-source")(documents_by_source)


class _ManyValues(TyperCommand):
    """Let `--snapshots S1 S2 S3` take every value up to the next option, as people write it."""

    many = ("--snapshots", "-s")

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]
        out: list[str] = []
        option: str | None = None
        taken = 0  # values the current `--snapshots` took
        for arg in args:
            if arg in self.many:
                option, taken = arg, 0
                continue
            if option is not None and not arg.startswith("-"):
                out += [option, arg]
                taken += 1
                continue
            option = None
            out.append(arg)
        if option is not None and not taken:
            out.append(option)  # a trailing `--snapshots` with no value: click names the error
        return super().parse_args(ctx, out)


def _persistence_extras() -> list[inspect.Parameter]:
    return [inspect.Parameter(
        "per_topic", inspect.Parameter.KEYWORD_ONLY, annotation=Path | None,
        default=typer.Option(None, "--per-topic",
                             help="Also write the per-topic deltas vs the pivot to this CSV."))]


def split_snapshots(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """`--snapshots a b` arrives as one value per option; accept commas and spaces too."""
    if fields.get("snapshots"):
        fields["snapshots"] = _split(fields["snapshots"])
    return fields


def _prepare_persistence(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    if extras["per_topic"] is not None:  # before the report: a directory, no folder, …
        from tcdb.collections.files.opening import check_output

        with derive.fields_as_flags(per_topic="--per-topic"):
            check_output(extras["per_topic"], "per_topic")
    if extras["per_topic"] is not None and fields.get("cross_snapshot"):
        raise OptionError("--per-topic/--cross-snapshot", "the per-topic deltas are of each "
                          "snapshot's own runs: give one of them")
    qrels = fields.get("qrels") or []
    if extras["per_topic"] is not None and (len(qrels) > 1 or "all" in qrels) and not any(
            "=" in q for q in qrels):
        raise OptionError("--per-topic/--qrels", "the per-topic deltas are on one qrels set: "
                          "give one --qrels with --per-topic")
    return split_snapshots(fields, extras)


def _split(values: list[str]) -> list[str]:
    """`--snapshots a b` arrives as one value per option; accept commas and spaces too."""
    return [part for value in values for part in value.replace(",", " ").split() if part]


def _show_persistence(report: PersistenceResult, per_topic: Path | None = None) -> None:
    """One set: its tables; several: one block per set, its name in each table's title."""
    from tcdb.reports.persistence_sets import left_out_said, set_said

    if report.qrels_sets:
        for name, one in report.qrels_sets.items():
            said = set_said(name, report.qrels_judges or {})
            console.print(heading(f"qrels set {said}"), highlight=False)
            _show_one_set(one, per_topic, f" · qrels {said}", warn=False)
        for warning in dict.fromkeys(w for r in report.qrels_sets.values() for w in r.warnings):
            err_console.print(f"warning: {warning}", highlight=False, markup=False)
    else:
        _show_one_set(report, per_topic)
    for line in left_out_said(report.qrels_left_out or {}):
        console.print(line, highlight=False, markup=False)


def _show_one_set(report: PersistenceResult, per_topic: Path | None = None, said: str = "",
                  warn: bool = True) -> None:
    first, *later = report.snapshots
    topics = report.topics
    for measure, result in report.measures.items():
        named = PERSISTENCE_FIGURES
        columns = ["system", named["snapshot"], f"{named['arp']} {first}",
                   *(named[k] for k in ("arp", "result_delta", "relative_drop", "er",
                                        "delta_ri", "p_value"))]
        paired = any(r.p_value_paired is not None for r in result.systems)
        columns += [named["p_value_paired"], named["n_paired"]] if paired else []
        rows = []
        for record in result.systems:
            name = record.system + (" (pivot)" if record.is_pivot else "")
            for label in later:
                rows.append([name, label, record.arp[first], record.arp[label],
                             record.result_delta[label], record.relative_drop[label],
                             _er_cell(record, label), record.delta_ri[label],
                             format_p(record.p_value[label])]
                            + ([format_p((record.p_value_paired or {}).get(label)),
                                (record.n_paired or {}).get(label)] if paired else []))
        print_table(columns, rows, title=f"{report.collection} · {measure}{said} · pivot "
                    f"{report.pivot} · each later snapshot against {first} · topics "
                    f"{topics.said()}")
        for key, test in report.tests.items():
            console.print(f"{PERSISTENCE_FIGURES[key]}: {test}", highlight=False, markup=False)
        if any(r.er_backwards for r in result.systems):
            console.print(below_pivot_said(report.pivot, first), highlight=False, markup=False)
        for line in skipped_lines([s.model_dump() for s in result.skipped], measure):
            console.print(line, highlight=False, markup=False)
        if report.bootstrap:
            _show_intervals([r.model_dump() for r in result.systems], later,
                            report.bootstrap.model_dump())
    for warning in report.warnings if warn else []:
        err_console.print(f"warning: {warning}", highlight=False, markup=False)
    if per_topic is not None:
        console.print(f"per-topic deltas written to {per_topic}", highlight=False)


def _er_cell(record: SystemPersistence, label: str) -> Any:
    """ER as the table shows it, marked where it reads backwards (below the pivot)."""
    er = record.er[label]
    return er if er is None or not record.er_backwards else f"{format_cell(er)}{BELOW_PIVOT_MARK}"


def _write_per_topic(report: PersistenceResult, per_topic: Path | None = None) -> None:
    """`--per-topic FILE`: the per-topic deltas of the same systems, snapshots and measures."""
    from tcdb.cli.database import cli_database
    from tcdb.operations import get_operation

    if per_topic is None:
        return
    systems = sorted({r.system for m in report.measures.values() for r in m.systems})
    deltas = get_operation("per_topic_deltas").run(cli_database(),
        collection=report.collection, snapshots=report.snapshots, pivot=report.pivot,
        measures=list(report.measures), qrels=report.qrels, topics=report.topics.selection,
        systems=systems, compute=False)
    from tcdb.collections.files.csv_safe import frame_csv
    from tcdb.collections.files.opening import write_output

    text = frame_csv(deltas.to_frame())  # system names are data: no formula cells
    with derive.fields_as_flags(per_topic="--per-topic"):
        write_output(per_topic, str(text).encode("utf-8"), "per_topic")


app.command("persistence", cls=_ManyValues)(derive.command(
    "persistence", show=_show_persistence, extras=_persistence_extras(),
    prepare=_prepare_persistence, after=_write_per_topic))
app.command("per-topic-deltas", cls=_ManyValues)(derive.command(
    "per_topic_deltas", prepare=split_snapshots))


# What a kind of skipped system lacks, for the one line that sums them up.
_SKIPPED_WHY = {"no_run": "without a run in every snapshot",
                "several_runs": "with several runs in one snapshot",
                "no_scores": "without {measure} scores in every snapshot"}
_NAMED = 3  # systems a summary line names before "--json lists them all"


def skipped_lines(skipped: list[dict[str, str]], measure: str) -> list[str]:
    """One line per kind of skipped system, whatever their number (a campaign skips hundreds).

    A few are shown each with its reason; more are counted, with a few names as examples.
    """
    by_kind: dict[str, list[dict[str, str]]] = {}
    for entry in skipped:
        by_kind.setdefault(entry.get("kind", ""), []).append(entry)
    lines = []
    for kind, entries in by_kind.items():
        if len(entries) <= _NAMED or kind not in _SKIPPED_WHY:
            lines += [f"skipped {e['system']}: {e['reason']}" for e in entries]
            continue
        why = _SKIPPED_WHY[kind].format(measure=measure)
        names = ", ".join(e["system"] for e in entries[:_NAMED])
        lines.append(f"skipped {len(entries)} systems {why} (e.g. {names}; --json lists them "
                     "all)")
    return lines


def _show_intervals(records: list[dict[str, Any]], later: list[str], boot: dict[str, Any]
                    ) -> None:
    level = f"{100 * (1 - boot['alpha']):g}%"
    rows = []
    for record in records:
        for what in ("arp", "result_delta", "er", "delta_ri"):
            for label, ci in record["ci"][what].items():
                if what != "arp" and label not in later:
                    continue
                rows.append([record["system"], PERSISTENCE_FIGURES[what], label, ci["estimate"],
                             ci["low"], ci["high"]])
    print_table(["system", "figure", "snapshot", "estimate", "low", "high"], rows,
                title=f"{level} bootstrap intervals ({PERCENTILE_BOOTSTRAP}; "
                f"{bootstrap_said(boot['n_samples'], boot['seed'])})")


def _show_reusability(report: ReusabilityResult) -> None:
    where = topics_said(report.topics)
    shown = False
    for measure, result in report.measures.items():
        head = (f"{report.collection} / {report.snapshot} · {measure} · "
                f"{report.qrels} vs {report.vs} · {report.n_topics} topics{where}")
        if result.error is not None or result.per_topic_tau is None:
            console.print(f"{head}: {result.error}", highlight=False)
            continue
        summary, shown = result.per_topic_tau, True
        console.print(heading(head))
        console.print(
            f"  {_taus(result)} · {result.n_runs} runs · per-topic {TAU_FIGURES['kendall_tau']} "
            f"min {_f(summary.min)}, median {_f(summary.median)}, "
            f"{len(summary.below_threshold)} below {report.threshold}", highlight=False)
        below = [str(t) for t in summary.below_threshold]
        if below:
            more = f" … and {len(below) - 12} more (--json lists all)" if len(below) > 12 else ""
            console.print("  below: " + ", ".join(below[:12]) + more, highlight=False)
        for key, ci in (result.bootstrap or {}).items():
            console.print(f"  {TAU_FIGURES[key]} {100 * (1 - ci.alpha):g}% CI [{_f(ci.low)}, "
                          f"{_f(ci.high)}] ({PERCENTILE_BOOTSTRAP}, "
                          f"{bootstrap_said(ci.n_samples, report.seed or 0)})",
                          highlight=False, markup=False)
        print_table(["run", f"{measure} A", "rank A", f"{measure} B", "rank B", "change",
                     f"unjudged@{report.depth}", f"new rel@{report.depth}"],
                    [[r.run, r.score_a, r.rank_a, r.score_b, r.rank_b,
                      format_change(r.rank_change),
                      r.unjudged_top_k, r.new_relevant_top_k] for r in result.runs])
        moved = ", ".join(f"{c.run} ({c.rank_a}→{c.rank_b})"
                          for c in result.largest_rank_changes)
        console.print(f"  largest rank changes: {moved or 'none'}", highlight=False)
        if result.skipped:
            console.print("  skipped (no scores under both): " + ", ".join(result.skipped),
                          highlight=False)
    if shown:
        say(tau_legend(f"the ranking under {report.vs}"))


app.command("reusability")(derive.command("reusability", show=_show_reusability))


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _taus(figures: ReusabilityMeasure | LeaveOutGroup) -> str:
    """`τ (ties omitted) 0.5111 · τ-b 0.5111 · τ_AP 0.6790` of a measure's or group's figures."""
    return " · ".join(f"{name} {_f(getattr(figures, key))}" for key, name in TAU_FIGURES.items())


def _show_leave_out(report: LeaveOutResult) -> None:
    for measure, result in report.measures.items():
        console.print(heading(f"{report.collection} / {report.snapshot} · {measure} · "
                              f"{report.qrels} minus each {report.by} (top {report.depth}) · "
                              f"{report.n_topics} topics"), highlight=False)
        for group in result.groups:
            print_table(["run", f"{measure} full", f"{measure} reduced", "rank full",
                         "rank reduced", "change"],
                        [[r.run, r.score_full, r.score_reduced, r.rank_full, r.rank_reduced,
                          format_change(r.rank_change)] for r in group.runs],
                        title=f"without {group.group}: {group.n_removed} relevant removed"
                        + (f" (stored as {group.qrels})" if group.qrels else "")
                        + f" · {_taus(group)}")
    if any(result.groups for result in report.measures.values()):
        say(tau_legend(f"the ranking under {report.qrels}"))


app.command("leave-out")(derive.command("leave_out", show=_show_leave_out))


# One system between two snapshots, topic by topic (their own module: this one is long enough).
from tcdb.cli.report_over_time import ranking_agreement, topic_deltas  # noqa: E402

app.command("topic-deltas", cls=_ManyValues)(topic_deltas)
app.command("ranking-agreement", cls=_ManyValues)(ranking_agreement)

# Significance within test families, and the leaderboard over time (their own modules).
from tcdb.cli.report_compare import compare  # noqa: E402
from tcdb.cli.report_leaderboard import leaderboard  # noqa: E402

app.command("compare")(compare)

# Two runs topic by topic, one topic's rankings side by side (its own module).
from tcdb.cli.report_diff_runs import diff_runs  # noqa: E402

app.command("diff-runs")(diff_runs)
app.command("leaderboard")(leaderboard)

# Assessor agreement on a pool (its own module, beside the pool commands' reports).
from tcdb.cli.report_pools import agreement  # noqa: E402

app.command("agreement")(agreement)

# Two judges' qrels sets of a snapshot (an LLM beside NIST): κ, α, confusion, τ, RBO.
from tcdb.cli.report_judges import judge_agreement  # noqa: E402

app.command("judge-agreement")(judge_agreement)

# A run's mean over a topic subset against its full mean's bootstrap interval.
from tcdb.cli.report_subset import subset  # noqa: E402

app.command("subset")(subset)

# Every pair of snapshots' system rankings compared (τ-b, τ-c, τ_AP; LongEval's question).
from tcdb.cli.report_rankings import rankings  # noqa: E402

app.command("rankings", cls=_ManyValues)(rankings)
