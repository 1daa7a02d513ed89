"""`tcdb report subset`: is a run's mean over a topic subset what chance would give?

For every run of a snapshot (or those named), its full-topic mean (`trec_eval -c` over every
topic the qrels set judges, unanswered ones 0), the percentile bootstrap interval of that mean
when each resample draws as many topics as the subset has (with replacement, seeded), its mean
over the subset (the judged topics of a topic set — e.g. the topics an LLM has likely not seen,
`tcdb topics set import`), and whether the subset mean falls below, inside or above the
interval (`tcdb.analysis.subset`). Reads only; missing scores are computed first.

The report is a dict::

    {collection, snapshot, qrels, measure, topic_set, for_model, method, n_topics, n_subset,
     n_samples, seed, alpha, counts: {below, inside, above},
     runs: [{run, system, mean, ci_low, ci_high, subset_mean, delta, position}…],
     skipped: [tag…]}   # runs without scores of the measure (imported runs lacking it)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcdb.db import session_scope
from tcdb.errors import OptionError

MAX_SAMPLES = 1_000_000


def subset_report(
    collection: str,
    snapshot: str,
    topics: str,
    runs: Sequence[str] | None = None,
    measure: str = "nDCG@10",
    qrels: str = "original",
    n_samples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    *,
    compute: bool = True,
) -> dict[str, Any]:
    """Full mean, its bootstrap interval at the subset's size, and the subset mean, per run."""
    import numpy as np

    from tcdb.analysis.subset import subset_intervals
    from tcdb.catalog import get_snapshot
    from tcdb.evaluation import evaluate
    from tcdb.measures import parse_measures
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids, qrels_topics, run_rows, stored_scores
    from tcdb.queries.topics import get_topic_set, topic_set_topic_ids
    from tcdb.runs import get_runs
    from tcdb.sorting import natural_key

    if not 1 <= n_samples <= MAX_SAMPLES:
        raise OptionError("--samples", f"bootstrap samples must be 1…{MAX_SAMPLES:,}, got "
                          f"{n_samples}")
    if not 0 < alpha < 1:
        raise OptionError("--alpha", f"alpha must lie strictly between 0 and 1, not {alpha}")
    (name,) = parse_measures([measure])
    with session_scope() as session:  # an unknown set or run fails before anything is computed
        topic_set = get_topic_set(session, collection, topics)
        get_runs(session, get_snapshot(session, collection, snapshot), runs)
    if compute:
        evaluate(collection, snapshot, qrels, [name], runs)
    with session_scope() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap, runs)
        members = topic_set_topic_ids(session, collection, topics)
        judged = qrels_topics(conn, qset.pk, snap.pk)
        mid = measure_ids(conn, [name]).get(name, -1)
        run_ids = [r.pk for r in run_list]
        done = evaluations(conn, qset.pk, run_ids, [mid])
        stored = stored_scores(conn, qset.pk, run_ids, [mid])
        systems = {r["run_id"]: r["system"] for r in run_rows(conn, snapshot_ids=[snap.pk])}
    order = sorted(judged, key=lambda t: natural_key(judged[t]))
    if not order:
        raise OptionError("--qrels", f"qrels set {qrels!r} judges no topic of {snapshot!r}")
    subset = [i for i, t in enumerate(order) if t in members]
    if not subset:
        raise OptionError("--topics", f"topic set {topics!r} has no topic judged in qrels set "
                          f"{qrels!r} of {snapshot!r}")
    scored = [r for r in run_list if (r.pk, mid) in done]
    matrix = np.array([[stored.get((r.pk, mid), {}).get(t, 0.0) for t in order]
                       for r in scored], dtype=float).reshape(len(scored), len(order))
    rows = subset_intervals(matrix, np.array(subset), n_samples, seed, alpha) if scored else []
    records = [{"run": r.tag, "system": systems.get(r.pk, ""), **row}
               for r, row in zip(scored, rows, strict=True)]
    counts = {p: sum(1 for r in records if r["position"] == p)
              for p in ("below", "inside", "above")}
    return {
        "collection": collection, "snapshot": snapshot, "qrels": qset.name, "measure": name,
        "topic_set": topic_set.name, "for_model": topic_set.for_model,
        "method": topic_set.method, "n_topics": len(order), "n_subset": len(subset),
        "n_samples": n_samples, "seed": seed, "alpha": alpha, "counts": counts,
        "runs": records, "skipped": [r.tag for r in run_list if (r.pk, mid) not in done],
    }
