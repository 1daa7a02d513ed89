"""Are these runs' differences on one snapshot significant? Pairwise tests and outcome breakdown.

The per-topic scores of the chosen runs (one measure, one qrels set; every topic the qrels set
judges, unanswered ones 0 as `trec_eval -c`) go to `tcdb.analysis.significance.compare_runs`:
paired t-test, Wilcoxon signed-rank, Wilcoxon rank-sum and sign test per pair, corrected across
the pairs. When the qrels set has exactly one relevant document (grade > 0) per topic — MS MARCO
style — the rank of that document in each run, in trec_eval's order (score descending, then
document id descending, unresolved entries included), feeds
`tcdb.analysis.outcomes.outcome_breakdown` for every pair, cut at the top k.

Each pair also carries its effect size: Cohen's d for paired samples (d_z, the mean of the
per-topic differences over their standard deviation). With `bootstrap=S` samples, each run's
mean and each pair's mean difference get a percentile bootstrap interval over topics
(`tcdb.analysis.bootstrap.bootstrap_ci`; every run with the same seed, so the same resampled
topic sets).

The report (`compare_report`) is a dict::

    {collection, snapshot, qrels, measure, correction, n_topics, bootstrap,
     runs: [{run, system, mean[, ci_low, ci_high]}],
     pairs: [compare_runs row… + effect_size[, diff_ci_low, diff_ci_high]],
     outcomes: {applicable, reason, k, pairs: [{run_a, run_b, **outcome_breakdown}]}}
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlmodel import col

from tcdb.analysis.means import trec_eval_mean
from tcdb.db import session_scope
from tcdb.errors import InputError, NotFoundError, OptionError
from tcdb.queries import relevant_documents, relevant_ranks
from tcdb.reports.results import CompareReport
from tcdb.sorting import natural_key
from tcdb.vocabulary import Correction, one_of


def compare_report(
    collection: str,
    snapshot: str,
    qrels: str,
    runs: Sequence[str],
    measure: str,
    correction: Correction | str = Correction.holm,
    k: int = 10,
    *,
    compute: bool = True,
    bootstrap: int = 0,
    seed: int = 0,
) -> CompareReport:
    """Pairwise significance tests between runs on one snapshot, and the outcome breakdown.

    Why: a difference in means is only worth reporting with its p-values, corrected for the
    number of pairs; with one relevant document per topic, where each run finds it says more.
    """
    import pandas as pd

    from tcdb.analysis.outcomes import outcome_breakdown
    from tcdb.analysis.significance import compare_runs, paired_effect_size
    from tcdb.catalog import get_snapshot
    from tcdb.evaluation import evaluate
    from tcdb.measures import parse_measures
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids, qrels_topics, score_rows
    from tcdb.runs import get_runs
    from tcdb.schema import System

    tags = list(dict.fromkeys(runs))
    if len(tags) < 2:
        raise OptionError("--run", "compare needs at least two different runs")
    correction = one_of(Correction, correction, "--correction",
                        "unknown correction {value!r}; use {choices}")
    if k < 1:
        raise OptionError("--k", "k must be at least 1")
    name = parse_measures([measure])[0]
    if compute:
        evaluate(collection, snapshot, qrels, [name], tags)
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap, tags)
        conn = session.connection()
        snap_id, qset_id = snap.pk, qset.pk
        mid = measure_ids(conn, [name]).get(name, -1)
        run_ids = [r.pk for r in run_list]
        done = evaluations(conn, qset_id, run_ids, [mid])
        for run in run_list:
            if (run.id, mid) not in done:
                raise NotFoundError(f"run {run.tag!r} of {snapshot!r} has no {name} scores on "
                                    f"qrels {qrels!r} (no stored entries to compute them from; "
                                    "import them with `tcdb scores import`)")
        systems = dict(conn.execute(select(col(System.id), col(System.name)).where(
            col(System.id).in_([r.system_id for r in run_list]))).tuples().all())
        judged = qrels_topics(conn, qset_id, snap_id)
        if not judged:
            raise InputError(qrels, None, f"qrels set {qrels!r} judges no topics")
        got: dict[int, dict[int, float]] = {}
        for run_id, _, topic_id, value in score_rows(conn, qset_id, run_ids, [mid]):
            got.setdefault(run_id, {})[topic_id] = value
        topic_order = sorted(judged, key=lambda t: natural_key(judged[t]))
        wide = pd.DataFrame(
            {run.tag: [got.get(run.pk, {}).get(t, 0.0) for t in topic_order]
             for run in run_list},
            index=pd.Index([judged[t] for t in topic_order], name="topic"))
        relevant = relevant_documents(conn, qset_id, snap_id)
        reason = _outcome_reason(judged, relevant, run_list)
        ranks: dict[str, dict[str, int | None]] = {}
        if reason is None:
            for run in run_list:
                found = relevant_ranks(conn, run.pk, qset_id)
                ranks[run.tag] = {judged[t]: found.get(t) for t in topic_order}
    if bootstrap < 0:
        raise OptionError("--bootstrap", "the number of bootstrap samples cannot be negative")
    table = compare_runs(wide, list(combinations(tags, 2)), correction=correction)
    pairs = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    for pair in pairs:
        difference = (wide[pair["run_a"]] - wide[pair["run_b"]]).to_numpy(dtype=float)
        pair["effect_size"] = paired_effect_size(difference)
        if bootstrap:
            ci = mean_ci(difference, bootstrap, seed)
            pair["diff_ci_low"], pair["diff_ci_high"] = ci["low"], ci["high"]
    outcomes: dict[str, Any] = {"applicable": reason is None, "reason": reason, "k": k,
                                "pairs": []}
    if reason is None:
        for a, b in combinations(tags, 2):
            outcomes["pairs"].append({"run_a": a, "run_b": b,
                                      **outcome_breakdown(ranks[a], ranks[b], k)})
    return {
        "collection": collection,
        "snapshot": snapshot,
        "qrels": qrels,
        "measure": name,
        "correction": correction,
        "n_topics": len(topic_order),
        "bootstrap": bootstrap,
        "runs": [{"run": run.tag, "system": systems.get(run.system_id),
                  "mean": trec_eval_mean(wide[run.tag].tolist()),
                  **_interval(wide[run.tag].to_numpy(dtype=float), bootstrap, seed)}
                 for run in run_list],
        "pairs": pairs,
        "outcomes": outcomes,
    }


def mean_ci(values: np.ndarray, n_samples: int, seed: int) -> dict[str, Any]:
    """Percentile bootstrap interval (95 %) of the mean of per-topic values over topics."""
    from tcdb.analysis.bootstrap import bootstrap_ci

    return bootstrap_ci(lambda weights: weights[0] @ values, [len(values)], n_samples,
                        seed=seed)


def _interval(values: np.ndarray, n_samples: int, seed: int) -> dict[str, Any]:
    if not n_samples:
        return {}
    ci = mean_ci(values, n_samples, seed)
    return {"ci_low": ci["low"], "ci_high": ci["high"]}


def _outcome_reason(judged: dict[int, str], relevant: dict[int, list[tuple[int, str]]],
                    run_list: Sequence[Any]) -> str | None:
    """Why the outcome breakdown does not apply (None when it does)."""
    several = sum(1 for t in judged if len(relevant.get(t, [])) > 1)
    none = sum(1 for t in judged if not relevant.get(t))
    if several or none:
        parts = []
        if several:
            parts.append(f"{several} topic(s) have more than one relevant document")
        if none:
            parts.append(f"{none} topic(s) have none")
        return "the qrels set is not one-relevant-per-topic: " + ", ".join(parts)
    without = [r.tag for r in run_list if r.n_entries + r.n_unresolved == 0]
    if without:
        return f"run(s) {', '.join(without)} have no stored entries to rank the relevant document"
    return None
