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

from tcdb.errors import OptionError
from tcdb.storage.db import session_scope

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
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries.topics import get_topic_set, topic_set_topic_ids
    from tcdb.reports.run_scores import load_run_scores
    from tcdb.runs import get_runs
    from tcdb.scoring.measures import parse_measures

    if not 1 <= n_samples <= MAX_SAMPLES:
        raise OptionError("--samples", f"bootstrap samples must be 1…{MAX_SAMPLES:,}, got "
                          f"{n_samples}")
    if not 0 < alpha < 1:
        raise OptionError("--alpha", f"alpha must lie strictly between 0 and 1, not {alpha}")
    (name,) = parse_measures([measure])
    with session_scope() as session:  # an unknown set or run fails before anything is computed
        topic_set = get_topic_set(session, collection, topics)
        get_runs(session, get_snapshot(session, collection, snapshot), runs)
        members = topic_set_topic_ids(session, collection, topics)
    data = load_run_scores(collection, snapshot, qrels, runs, name, compute=compute,
                           skip_unscored=True)
    subset = [i for i, t in enumerate(data.topic_ids) if t in members]
    if not subset:
        raise OptionError("--topics", f"topic set {topics!r} has no topic judged in qrels set "
                          f"{qrels!r} of {snapshot!r}")
    scored = list(data.wide.columns)
    matrix = data.wide.to_numpy(dtype=float).T.reshape(len(scored), len(data.topic_ids))
    rows = subset_intervals(matrix, np.array(subset), n_samples, seed, alpha) if scored else []
    records = [{"run": tag, "system": data.systems.get(tag) or "", **row}
               for tag, row in zip(scored, rows, strict=True)]
    counts = {p: sum(1 for r in records if r["position"] == p)
              for p in ("below", "inside", "above")}
    return {
        "collection": collection, "snapshot": snapshot, "qrels": qrels, "measure": name,
        "topic_set": topic_set.name, "for_model": topic_set.for_model,
        "method": topic_set.method, "n_topics": len(data.topic_ids), "n_subset": len(subset),
        "n_samples": n_samples, "seed": seed, "alpha": alpha, "counts": counts,
        "runs": records, "skipped": data.skipped,
    }
