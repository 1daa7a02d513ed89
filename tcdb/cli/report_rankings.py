"""`tcdb report rankings`: τ and Pearson's r between the system rankings of every pair of
snapshots (or each against the first). Registered
on `tcdb report` by `tcdb.cli.report`; derived from the operation, this module only prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, format_p, heading, print_table, say
from tcdb.cli.report_over_time import split_snapshots
from tcdb.vocabulary import format_change

if TYPE_CHECKING:
    from tcdb.reports.rankings_across_snapshots import RankingsResult


def _show(result: RankingsResult) -> None:
    """One set: its tables; several: one block per set, its name in each table's title."""
    from tcdb.reports.persistence_sets import left_out_said, set_said

    if result.qrels_sets:
        for name, one in result.qrels_sets.items():
            said = set_said(name, result.qrels_judges or {})
            console.print(heading(f"qrels set {said}"), highlight=False)
            _show_one_set(one, f" · qrels {said}")
    else:
        _show_one_set(result)
    for line in left_out_said(result.qrels_left_out or {}):
        say(line)


def _show_one_set(result: RankingsResult, said: str = "") -> None:
    source = "published results" if result.source == "results" else "per-topic scores"
    which = ("" if result.pairs == "all" else
             f" · each later snapshot against {result.snapshots[0]}")
    for measure, figures in result.measures.items():
        print_table(["earlier", "later", "systems", "topics", "τ-b", "p τ-b", "Pearson r",
                     "p r", "τ-c", "τ_AP", "moved"],
                    [(p.earlier, p.later, p.n_systems,
                      "published" if p.n_topics is None else p.n_topics, p.tau_b,
                      format_p(p.p_tau_b), p.pearson_r, format_p(p.p_pearson_r), p.tau_c,
                      p.tau_ap, p.n_changed)
                     for p in figures.pairs],
                    title=f"{result.collection} · {measure} ({figures.aggregate}){said} · system "
                    f"rankings across snapshots{which}, from {source}")
        rows = [(p.earlier, p.later, c.system, c.rank_earlier, c.rank_later,
                 format_change(c.rank_change)) for p in figures.pairs if p.against_first
                for c in p.largest_changes]
        if rows:
            print_table(["earlier", "later", "system", "rank earlier", "rank later", "change"],
                        rows, title=f"largest rank changes against {result.snapshots[0]}"
                        f"{said} (+: climbed)")
        for s in figures.skipped:
            say(f"skipped {s.system}: {s.reason}")
        for p in figures.pairs:
            if p.reason:
                say(f"{p.earlier} → {p.later}: {p.reason}")
    say(f"means over {result.topics_said}; rounded before ranking (equal means tie); τ-b and "
        "τ-c: scipy.stats.kendalltau, Pearson r: scipy.stats.pearsonr on the rounded means "
        f"(p two-sided); τ_AP: Yilmaz et al. 2008, truth {result.tau_ap_truth}; moved: systems "
        "whose rank changed")


rankings = derive.command("ranking_across_snapshots", show=_show, prepare=split_snapshots)
