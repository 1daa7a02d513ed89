"""The tie-omitting τ says that it omits ties, wherever it is printed.

The reports' `kendall_tau` is Goodman–Kruskal γ (Kendall's τ over the pairs of runs ordered in
both rankings); printed as a bare "τ" or "Kendall's τ" beside scipy's τ-b, a reader takes it for
the usual τ-b, and the two differ as soon as runs tie. On the reusability collection of
`test_report_reusability`, P@10 ties runs: the expected γ and τ-b come from ir_measures' scores
of the files, γ counted pair by pair here and τ-b from scipy.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from tests.test_report_reusability import CONTRIBUTORS, DEPTH, MAGIC, TOPICS, C, S, build, per_topic

MEASURE = "P@10"


def _means(qrels: list[tuple[str, str, int]]) -> dict[str, float]:
    """Each run's mean P@10 over the topics, from ir_measures, rounded as trec_eval -c means
    are compared (12 decimals: equal means tie)."""
    frame = per_topic(qrels, MEASURE, TOPICS, [*CONTRIBUTORS, MAGIC])
    sums = frame.groupby("run")["value"].apply(lambda v: math.fsum(v) / len(TOPICS))
    return {run: round(value, 12) for run, value in sums.items()}


def _gamma(a: dict[str, float], b: dict[str, float]) -> float:
    """(concordant − discordant) / (concordant + discordant) over pairs untied in both."""
    concordant = discordant = 0
    for x, y in itertools.combinations(sorted(a), 2):
        sign = (a[x] - a[y]) * (b[x] - b[y])
        concordant += sign > 0
        discordant += sign < 0
    return (concordant - discordant) / (concordant + discordant)


@pytest.fixture
def expected(db: str, tmp_path: Path) -> dict[str, float]:
    from scipy import stats

    data = build(tmp_path)
    a, b = _means(data["qrels_a"]), _means(data["qrels_b"])
    runs = sorted(a)
    tau_b = float(stats.kendalltau([a[r] for r in runs], [b[r] for r in runs]).statistic)
    gamma = _gamma(a, b)
    assert f"{gamma:.4f}" != f"{tau_b:.4f}"  # the case tells the two apart
    return {"gamma": gamma, "tau_b": tau_b}


def test_the_terminal_names_the_tie_omitting_tau(expected: dict[str, float], cli: Any) -> None:
    code, out, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                         "expanded", "--measure", MEASURE, "--all-runs", "--bootstrap", 200)
    assert code == 0, err
    text = " ".join(out.split())  # a terminal may wrap the prose lines
    assert f"τ (ties omitted) {expected['gamma']:.4f} · τ-b {expected['tau_b']:.4f}" in text
    assert "per-topic τ (ties omitted) min" in text
    assert "τ (ties omitted) 95% CI [" in text and "kendall_tau" not in text
    assert ("τ (ties omitted): Kendall's τ over the pairs of runs ordered in both rankings "
            "(Goodman–Kruskal γ) · τ-b: scipy.stats.kendalltau, ties counted · τ_AP: Yilmaz "
            "et al. 2008, truth the ranking under expanded") in text


def test_leave_out_prints_the_same_names(expected: dict[str, float], cli: Any) -> None:
    code, out, err = cli("report", "leave-out", C, S, "--qrels", "original", "--depth", DEPTH,
                         "--by", "group")
    assert code == 0, err
    text = " ".join(out.split())
    assert text.count("τ (ties omitted) ") >= 3  # one per group left out
    assert "Goodman–Kruskal γ" in text and "truth the ranking under original" in text


def test_paper_tables_name_it_and_typeset_gamma(expected: dict[str, float], cli: Any) -> None:
    code, out, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                         "expanded", "--measure", MEASURE, "--all-runs", "--format", "latex")
    assert code == 0, err
    caption = next(line for line in out.splitlines() if line.startswith("\\caption"))
    assert f"$\\tau$ (ties omitted) {expected['gamma']:.4f}" in caption
    assert f"$\\tau$-b {expected['tau_b']:.4f}" in caption
    assert "Goodman--Kruskal $\\gamma$" in caption and "γ" not in out
    code, out, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                         "expanded", "--measure", MEASURE, "--all-runs", "--format", "markdown")
    assert code == 0, err
    assert f"τ (ties omitted) {expected['gamma']:.4f}" in out and "Kendall's τ 0" not in out
