"""Is a collection reusable? The TREC-8 re-judging comparison, fed from the database.

Rank every run by its mean score under qrels A (the original judgments) and under qrels B (e.g.
the expanded set after a new pool), compare the rankings (τ, τ-b, τ_AP, per-topic τ), and count
per run how many of its top-K documents A never judged and B found relevant. The figures come
from `tcdb.analysis.reusability`; this module only loads what it needs with Core SQL:

* per-topic scores stored by `tcdb.scoring.evaluate` (missing ones are computed first);
* the top-K entries of every run in one query, in trec_eval's order (the stored `eval_rank`:
  an index range scan per run and topic);
* both qrels sets' judgments.

Means follow `trec_eval -c` over the topics judged in both A and B (optionally restricted to a
topic set): a topic a run did not answer counts 0. A run without stored scores for a measure
under A or B (an imported run lacking it) is left out of that measure and named in `skipped`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from tcdb.errors import InputError, OptionError
from tcdb.queries import load_judgments, load_top_k, stored_scores
from tcdb.reports.common import per_topic_frame, select_topics
from tcdb.reports.results import ReusabilityReport
from tcdb.schema import Run
from tcdb.storage.db import session_scope

if TYPE_CHECKING:
    pass

LARGEST_CHANGES = 5
# the τ variants the bootstrap gives intervals for: report key → tcdb.analysis method
TAU_METHODS: tuple[tuple[str, Literal["omit_ties", "b"]], ...] = (
    ("kendall_tau", "omit_ties"), ("tau_b", "b"))


def reusability_report(
    collection: str,
    snapshot: str,
    qrels_a: str,
    qrels_b: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    depth: int = 100,
    topics: str | None = None,
    threshold: float = 0.9,
    bootstrap: int = 0,
    seed: int = 0,
    *,
    compute: bool = True,
) -> ReusabilityReport:
    """Compare the run rankings under qrels A and B, per measure (see the module docstring).

    Returns `{collection, snapshot, qrels_a, qrels_b, depth, topic_set, n_topics, threshold,
    measures: {name: {kendall_tau, tau_b, tau_ap, n_runs, n_topics, per_topic_tau{min, median,
    below_threshold}, tau_per_topic[{topic, tau, n_runs}], runs[{tag, score_a, rank_a, score_b,
    rank_b, rank_change, n_retrieved, unjudged_top_k, new_relevant_top_k}],
    largest_rank_changes[], skipped[], bootstrap?}}, seconds}`.
    """
    from tcdb.analysis.reusability import reusability_report as analyse
    from tcdb.analysis.reusability import unjudged_and_new_relevant
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.measures import parse_measures

    started = time.perf_counter()
    if depth < 1:
        raise OptionError("--depth", f"depth must be at least 1, got {depth}")
    if not 0 <= bootstrap <= 1_000_000:
        raise OptionError("--bootstrap", f"bootstrap samples must be 0…1,000,000, got "
                          f"{bootstrap}")
    if qrels_a == qrels_b:
        raise OptionError("--vs", f"compare two different qrels sets, not {qrels_a!r} "
                          "with itself")
    names = parse_measures(measures)
    if compute:
        evaluate(collection, snapshot, qrels_a, names, runs)
        evaluate(collection, snapshot, qrels_b, names, runs)
    with session_scope() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        set_a = get_qrels_set(session, snap, qrels_a)
        set_b = get_qrels_set(session, snap, qrels_b)
        run_list: list[Run] = get_runs(session, snap, runs)
        if not run_list:
            raise InputError(f"snapshot {snapshot}", None, "no runs to compare")
        run_ids = [r.pk for r in run_list]
        tags = {r.pk: r.tag for r in run_list}
        ids = measure_ids(conn, names)
        done_a = evaluations(conn, set_a.pk, run_ids, list(ids.values()))
        done_b = evaluations(conn, set_b.pk, run_ids, list(ids.values()))
        scores_a = stored_scores(conn, set_a.pk, run_ids, list(ids.values()))
        scores_b = stored_scores(conn, set_b.pk, run_ids, list(ids.values()))
        with_entries = [r.pk for r in run_list if r.n_entries > 0]
        top = load_top_k(conn, snap.pk, with_entries, depth)
        judgments_a = load_judgments(conn, set_a.pk)
        judgments_b = load_judgments(conn, set_b.pk)
        judged = set(judgments_a["topic"].unique().tolist()) & set(
            judgments_b["topic"].unique().tolist())
        topic_names = select_topics(session, collection, snap.pk, sorted(judged), topics)
    loaded = time.perf_counter()

    wanted = list(topic_names)
    top = top[top["topic"].isin(wanted)]
    judgments_a = judgments_a[judgments_a["topic"].isin(wanted)]
    judgments_b = judgments_b[judgments_b["topic"].isin(wanted)]
    counts = unjudged_and_new_relevant(top, judgments_a, judgments_b)
    by_run = {tags[int(row.run)]: (int(row.n_retrieved), int(row.unjudged_a),
                                   int(row.new_relevant_b))
              for row in counts.itertuples(index=False)}
    has_entries = {tags[r] for r in with_entries}

    result: ReusabilityReport = {
        "collection": collection, "snapshot": snapshot, "qrels_a": qrels_a, "qrels_b": qrels_b,
        "depth": depth, "order": "trec_eval",
        "topic_set": topics, "n_topics": len(topic_names), "threshold": threshold,
        "measures": {}, "seconds": {},
    }
    for name in names:
        mid = ids.get(name)
        usable = [r for r in run_ids
                  if mid is not None and (r, mid) in done_a and (r, mid) in done_b]
        skipped = [tags[r] for r in run_ids if r not in set(usable)]
        if len(usable) < 2:
            result["measures"][name] = {"n_runs": len(usable), "skipped": skipped,
                                        "error": "fewer than two runs have scores under both "
                                        "qrels sets"}
            continue
        per_a = per_topic_frame(scores_a, usable, tags, mid or 0, topic_names)
        per_b = per_topic_frame(scores_b, usable, tags, mid or 0, topic_names)
        figures = analyse(per_a, per_b, topics=list(topic_names.values()), threshold=threshold)
        for entry in figures["runs"]:
            tag = entry["run"]
            n, unjudged, new = by_run.get(tag, (0, 0, 0))
            present = tag in has_entries
            entry["n_retrieved"] = n if present else None
            entry["unjudged_top_k"] = unjudged if present else None
            entry["new_relevant_top_k"] = new if present else None
        figures["largest_rank_changes"] = [
            {"run": e["run"], "rank_a": e["rank_a"], "rank_b": e["rank_b"],
             "rank_change": e["rank_change"], "new_relevant_top_k": e["new_relevant_top_k"]}
            for e in figures["runs"][:LARGEST_CHANGES] if e["rank_change"] != 0
        ]
        figures["skipped"] = skipped
        if bootstrap:
            from tcdb.analysis.bootstrap import tau_ci

            figures["bootstrap"] = {
                method_key: tau_ci(per_a, per_b, topics=list(topic_names.values()),
                                   method=method, n_samples=bootstrap, seed=seed)
                for method_key, method in TAU_METHODS
            }
        result["measures"][name] = figures
    result["seconds"] = {"load": loaded - started, "total": time.perf_counter() - started}
    return result
