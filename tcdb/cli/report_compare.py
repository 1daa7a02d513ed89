"""`tcdb report compare`: significance tests between runs within test families, and the outcome
breakdown for one-relevant qrels. Each table fits 80 columns for run tags of up to ~10
characters (longer ones wrap, never cut); `--json` has every figure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, format_p, print_table, topics_said
from tcdb.reports.aggregates import aggregate_note, figure_said
from tcdb.vocabulary import bootstrap_said

if TYPE_CHECKING:
    from tcdb.reports.compare_result import CompareResult, Outcomes

_DESIGN = {"all-pairs": "all pairs, one family", "baseline": "every run vs {baseline}",
           "vs-earlier": "each run vs the earlier-submitted ones"}


def show_compare(report: CompareResult) -> None:
    """The compare report as tables of at most eight columns."""
    family = report.family
    where = topics_said(report.topic_set)
    console.print(f"{report.collection} / {report.snapshot} · qrels {report.qrels} · "
                  f"{report.measure} · {report.n_topics} topics{where}", highlight=False,
                  markup=False)
    summed = aggregate_note(report.measure, report.aggregate, report.n_topics)
    if summed:
        console.print(f"{summed}; differences and tests are of per-topic values",
                      highlight=False, markup=False)
    boot = report.bootstrap
    print_table(["run", "system", "submitted", report.aggregate,
                 *(["95 % low", "95 % high"] if boot else [])],
                [[r.run, r.system, r.submitted, r.mean, *([r.ci_low, r.ci_high] if boot else [])]
                 for r in report.runs],
                title=figure_said(report.measure, report.aggregate) + (
                    f" with 95 % bootstrap intervals ({boot} samples of the topics, seed "
                    f"{report.seed})" if boot else ""))
    pairs = report.pairs
    print_table(["run A", "run B", "A − B", "t CI low", "t CI high", "d", "wins–losses"],
                [[p.run_a, p.run_b, p.mean_diff, p.diff_t_low, p.diff_t_high, p.effect_size,
                  f"{p.wins}–{p.losses}"] for p in pairs],
                title="differences (" + ("A − B: the mean per-topic difference; " if summed
                                         else "") +
                "t CI: paired t-test's 95 % interval of A − B; d: Cohen's d_z)")
    if boot:
        print_table(["run A", "run B", "A − B", "A − B 95 % low", "A − B 95 % high"],
                    [[p.run_a, p.run_b, p.mean_diff, p.diff_ci_low, p.diff_ci_high]
                     for p in pairs],
                    title="bootstrap intervals of the differences "
                    f"({bootstrap_said(boot, report.seed)})")
    design = _DESIGN[family.design].format(baseline=family.baseline)
    perm = f"perm. ({report.permutations})" if report.permutations else "perm."
    print_table(["run A", "run B", "t", "Wilcoxon", "rank-sum", "sign", perm],
                [[p.run_a, p.run_b, *(format_p(getattr(p, f"p_{test}_corrected")) for test in (
                    "t", "wilcoxon", "ranksum", "sign", "permutation"))] for p in pairs],
                title=f"p-values, {report.correction} within each family: {design}")
    tests = report.tests
    for column, test in (("t", "t"), ("Wilcoxon", "wilcoxon"), ("rank-sum", "ranksum"),
                         ("sign", "sign"), ("perm.", "permutation")):
        console.print(f"{column}: {tests[f'p_{test}']}", highlight=False, markup=False)
    console.print(f"corrected: {report.correction_description}", highlight=False,
                  markup=False)
    show_outcomes(report.outcomes)


def show_outcomes(outcomes: Outcomes) -> None:
    """Lin et al.'s breakdown in four small tables: counts, ESL, RR, the decision rules."""
    if not outcomes.applicable:
        console.print(f"no outcome breakdown: {outcomes.reason}", highlight=False,
                      markup=False)
        return
    pairs = outcomes.pairs
    k = outcomes.k
    print_table(["run A", "run B", "neither", "only A", "only B", "both", "p binomial"],
                [[p.run_a, p.run_b, *(p.counts[o] for o in
                                      ("neither", "only_a", "only_b", "both")),
                  format_p(p.only_one.p_value)] for p in pairs],
                title=f"outcome breakdown: relevant document in the top {k} of … "
                "(p binomial: two-sided binomial test of only A vs only B, uncorrected)")
    print_table(["run A", "run B", "ESL A", "ESL B", "p t", "p Wilcoxon"],
                [[p.run_a, p.run_b, p.both.mean_esl_a, p.both.mean_esl_b,
                  format_p(p.both.p_esl), format_p(p.both.p_esl_wilcoxon)] for p in pairs],
                title="on \"both\" topics: mean ESL (the relevant document's rank; lower is "
                "better; p t: paired t-test, p Wilcoxon: signed-rank test, uncorrected)")
    print_table(["run A", "run B", "MRR A", "MRR B", "p t", "p Wilcoxon"],
                [[p.run_a, p.run_b, p.both.mrr_a, p.both.mrr_b, format_p(p.both.p_rr),
                  format_p(p.both.p_rr_wilcoxon)] for p in pairs],
                title="on \"both\" topics: mean reciprocal rank")
    print_table(["run A", "run B", "A better", "A no harm"],
                [[p.run_a, p.run_b, _yes(p.decision.significantly_better),
                  _yes(p.decision.does_no_harm)] for p in pairs],
                title=f"decisions at α = {outcomes.alpha:g} (better: wins a family, loses "
                "none; no harm: loses none)")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


compare = derive.command("compare", show=show_compare)
