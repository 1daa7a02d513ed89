"""Significance: runs compared within test families, and the leaderboard over time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.api._labels import Labels, _labels_or_none, _speaks_python

if TYPE_CHECKING:
    from tcdb.reports.leaderboard import LeaderboardReport
    from tcdb.reports.results import CompareReport


@_speaks_python(run="runs", RUN="runs")
def compare(
    collection: str,
    snapshot: str,
    measure: str,
    runs: Labels | None = None,
    qrels: str = "original",
    *,
    baseline: str | None = None,
    vs_earlier: bool = False,
    correction: str = "holm",
    topics: str | None = None,
    k: int = 100,
    alpha: float = 0.05,
    permutations: int = 10_000,
    bootstrap: int = 0,
    seed: int = 0,
    compute: bool = True,
) -> CompareReport:
    """`tcdb report compare` as its JSON: every pair of `runs` (default: all runs of the
    snapshot), every run vs `baseline`, or (`vs_earlier`) each run vs every earlier-submitted
    one; p-values of five tests corrected within each family (`correction`: holm, bonferroni,
    bh, none), effect sizes and intervals, and the outcome breakdown for one-relevant qrels."""
    from tcdb.reports.compare import compare_report

    return compare_report(collection, snapshot, qrels, _labels_or_none(runs, "runs"), measure,
                          correction, k, compute=compute, bootstrap=bootstrap, seed=seed,
                          baseline=baseline, vs_earlier=vs_earlier, permutations=permutations,
                          alpha=alpha, topics=topics)


@_speaks_python(run="runs", RUN="runs")
def leaderboard(
    collection: str,
    snapshot: str,
    measure: str,
    qrels: str = "original",
    *,
    test: str = "t",
    alpha: float = 0.05,
    correction: str = "holm",
    topics: str | None = None,
    runs: Labels | None = None,
    permutations: int = 10_000,
    seed: int = 0,
    compute: bool = True,
) -> LeaderboardReport:
    """`tcdb report leaderboard` as its JSON: runs by submission date, the SOTA chain, and each
    new SOTA's test (`test`: t, wilcoxon, permutation, sign, ranksum) against the previous one
    and every earlier one, corrected within that family."""
    from tcdb.reports.leaderboard import leaderboard_report

    return leaderboard_report(collection, snapshot, measure, qrels, test, alpha, correction,
                              topics=topics, runs=_labels_or_none(runs, "runs"),
                              permutations=permutations, seed=seed, compute=compute)
