"""Judging: reusability of qrels, pooling strategies simulated, assessors compared."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tcdb.api._labels import Labels, _as_labels, _labels_or_none, _speaks_python

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.reports.results import ReusabilityReport


@_speaks_python(vs="qrels_b", qrels="qrels_a")
def reusability(
    collection: str,
    snapshot: str,
    qrels_a: str,
    qrels_b: str,
    measures: Labels = ("AP",),
    depth: int = 100,
    topics: str | None = None,
) -> ReusabilityReport:
    """Kendall's τ (tie-omitting, τ-b, τ_AP), per-topic τ and per-run counts, A vs B."""
    from tcdb.reports.reusability import reusability_report

    return reusability_report(collection, snapshot, qrels_a, qrels_b,
                              _as_labels(measures, "measures"), depth=depth, topics=topics)


@_speaks_python()
def pool_simulation(
    collection: str,
    snapshot: str,
    qrels: str,
    budgets: Sequence[int],
    strategies: Labels | None = None,
    per_topic: bool = False,
    runs: Labels | None = None,
    measure: str = "AP",
    leave_out: bool = True,
) -> pd.DataFrame:
    """Pooling strategies simulated on a complete qrels set before anyone judges, one row per
    (strategy, budget): `strategy, budget, n_judged, relevant_found, relevant_fraction, tau_b,
    tau_ap, logo_tau_b, logo_tau_ap` (`tcdb pool simulate`)."""
    import pandas as pd

    from tcdb.pools.simulate import simulate_pool

    report = simulate_pool(
        collection, snapshot, qrels, list(budgets),
        strategies=_as_labels(strategies, "strategies") if strategies is not None else None,
        per_topic=per_topic, runs=_labels_or_none(runs, "runs"), measure=measure,
        leave_out=leave_out)
    return pd.DataFrame(report["rows"], columns=[
        "strategy", "budget", "n_judged", "relevant_found", "relevant_fraction", "tau_b",
        "tau_ap", "logo_tau_b", "logo_tau_ap"])


@_speaks_python(vs="versus")
def assessor_agreement(
    pool: str,
    versus: str,
    qrels: str | None = None,
    measure: str = "AP",
    weights: str = "linear",
    topics: str | None = None,
) -> pd.DataFrame:
    """Two assessors on a pool (`tcdb report agreement`), as the confusion matrix of their
    grades (rows: `qrels`, default the pool's pooled set; columns: `versus`); κ (binary,
    graded weighted and unweighted), τ-b, τ_AP and the counts are in `.attrs`. `topics`: only
    the topics of this topic set."""
    import pandas as pd

    from tcdb.reports.assessor_agreement import assessor_agreement_report

    report = assessor_agreement_report(pool, versus, qrels, measure=measure, weights=weights,
                                       topics=topics)
    frame = pd.DataFrame(report["confusion"], index=report["labels"],
                         columns=report["labels"])
    frame.index.name, frame.columns.name = report["qrels"], report["versus"]
    frame.attrs.update({k: v for k, v in report.items() if k not in ("confusion", "labels")})
    return frame
