"""Is a collection reusable? Rank correlations between system rankings under two qrels sets.

Follows the TREC-8 re-judging study (Voorhees, Soboroff, Lin): rank the runs by their mean score
under the original qrels (A) and under the expanded qrels (B), and compare the rankings overall
(Kendall's τ, τ-b, τ_AP) and per topic; list how each run moved and how many of its top-K
documents were unjudged in A and turned out relevant in B. `uniques_leave_out` builds the qrels
for Zobel's leave-one-group-out uniques test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import pandas as pd

from tcdb.analysis import json_float, mean_scores, union_topics, wide_scores
from tcdb.analysis.rank_correlation import ScoreVector, goodman_kruskal_gamma, tau_ap, tau_b

__all__ = [
    "per_topic_tau",
    "rank_changes",
    "reusability_report",
    "unjudged_and_new_relevant",
    "uniques_leave_out",
]


def _tau(method: Literal["omit_ties", "b"], a: ScoreVector, b: ScoreVector) -> float:
    """Dispatch to the chosen τ variant."""
    if method == "omit_ties":
        return goodman_kruskal_gamma(a, b)
    if method == "b":
        return tau_b(a, b)
    raise ValueError(f"unknown tau method {method!r}; use 'omit_ties' or 'b'")


def per_topic_tau(
    per_topic_a: pd.DataFrame,
    per_topic_b: pd.DataFrame,
    threshold: float = 0.9,
    topics: Iterable[Any] | None = None,
    method: Literal["omit_ties", "b"] = "omit_ties",
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """τ per topic between the system rankings on that topic under A and under B.

    Returns a frame `[topic, tau, n_runs]` and a summary `{min, median, below_threshold}`
    (topics whose τ is below `threshold`; NaN τ — every pair tied — is left out of all three).
    Why: a collection can look reusable on average while a few topics rank systems very
    differently once more documents are judged.
    """
    topic_list = union_topics(per_topic_a, per_topic_b, topics)
    wa = wide_scores(per_topic_a, topics=topic_list)
    wb = wide_scores(per_topic_b, topics=topic_list)
    if set(wa.columns) != set(wb.columns):
        raise ValueError("per-topic scores under A and B must cover the same runs")
    wb = wb[wa.columns]
    rows = []
    for topic in topic_list:
        tau = _tau(method, wa.loc[topic].to_numpy(), wb.loc[topic].to_numpy())
        rows.append({"topic": topic, "tau": tau, "n_runs": wa.shape[1]})
    table = pd.DataFrame(rows, columns=["topic", "tau", "n_runs"])
    valid = table.dropna(subset=["tau"])
    summary = {
        "min": json_float(valid["tau"].min()) if len(valid) else None,
        "median": json_float(valid["tau"].median()) if len(valid) else None,
        "below_threshold": valid.loc[valid["tau"] < threshold, "topic"].tolist(),
    }
    return table, summary


def rank_changes(mean_a: pd.Series, mean_b: pd.Series) -> pd.DataFrame:
    """Per run: score and rank (1 = best, ties share the best rank) under A and B.

    `rank_change` = rank_a − rank_b, so positive means the run moved up under B. Sorted by
    largest |change| first, then by rank under B. Why: τ says *how much* rankings differ; this
    says *which* runs were under- or over-rated by the original judgments.
    """
    if set(mean_a.index) != set(mean_b.index):
        raise ValueError("mean scores under A and B must cover the same runs")
    frame = pd.DataFrame({"score_a": mean_a, "score_b": mean_b.reindex(mean_a.index)})
    frame["rank_a"] = frame["score_a"].rank(ascending=False, method="min").astype(int)
    frame["rank_b"] = frame["score_b"].rank(ascending=False, method="min").astype(int)
    frame["rank_change"] = frame["rank_a"] - frame["rank_b"]
    frame.index.name = "run"
    frame = frame.reset_index()
    frame["_abs"] = frame["rank_change"].abs()
    frame = frame.sort_values(["_abs", "rank_b", "run"], ascending=[False, True, True])
    columns = ["run", "score_a", "rank_a", "score_b", "rank_b", "rank_change"]
    return frame[columns].reset_index(drop=True)


def _judged(qrels: pd.DataFrame) -> pd.DataFrame:
    """Judged (topic, doc) pairs with grade; negative grades mean unjudged, as in trectools."""
    missing = {"topic", "doc", "grade"} - set(qrels.columns)
    if missing:
        raise ValueError(f"qrels lack column(s) {sorted(missing)}")
    judged = qrels.loc[qrels["grade"] >= 0, ["topic", "doc", "grade"]]
    if judged.duplicated(["topic", "doc"]).any():
        bad = judged[judged.duplicated(["topic", "doc"])].iloc[0]
        raise ValueError(f"qrels judge topic {bad['topic']!r}, doc {bad['doc']!r} twice")
    return judged


def _top_k(run_top_k: pd.DataFrame, k: int | None) -> pd.DataFrame:
    """Rows of the top K per run and topic (by `rank`), or all rows when k is None."""
    missing = {"run", "topic", "doc"} - set(run_top_k.columns)
    if missing:
        raise ValueError(f"run table lacks column(s) {sorted(missing)}")
    if k is None:
        return run_top_k
    if "rank" not in run_top_k.columns:
        raise ValueError("k given but the run table has no 'rank' column")
    ordered = run_top_k.sort_values(["run", "topic", "rank"], kind="stable")
    return ordered.groupby(["run", "topic"], sort=False).head(k)


def unjudged_and_new_relevant(
    run_top_k: pd.DataFrame,
    qrels_a: pd.DataFrame,
    qrels_b: pd.DataFrame,
    relevant_min_grade: int = 1,
    k: int | None = None,
) -> pd.DataFrame:
    """Per run: top-K documents unjudged in A, and those of them relevant in B.

    `run_top_k` has columns `[run, topic, doc]` (already cut to the top K, or pass `k` and a
    `rank` column); qrels have `[topic, doc, grade]`. Counts are summed over the run's topics.
    Why: a run whose top documents were never judged is the run the original pool was unfair
    to — the count of new relevant documents shows how much its score was held down.
    """
    top = _top_k(run_top_k, k)[["run", "topic", "doc"]]
    if top.duplicated().any():
        raise ValueError("a run lists the same document twice for a topic")
    judged_a = _judged(qrels_a)[["topic", "doc"]].assign(_judged_a=True)
    qb = _judged(qrels_b)
    relevant_b = qb.loc[qb["grade"] >= relevant_min_grade, ["topic", "doc"]].assign(_rel_b=True)
    merged = top.merge(judged_a, on=["topic", "doc"], how="left").merge(
        relevant_b, on=["topic", "doc"], how="left"
    )
    merged["unjudged_a"] = merged["_judged_a"].isna()
    merged["new_relevant_b"] = merged["unjudged_a"] & merged["_rel_b"].notna()
    out = merged.groupby("run", sort=True).agg(
        n_retrieved=("doc", "size"),
        unjudged_a=("unjudged_a", "sum"),
        new_relevant_b=("new_relevant_b", "sum"),
    )
    return out.astype(int).reset_index()


def _pairs(frame: pd.DataFrame) -> set[tuple[Any, Any]]:
    """The set of (topic, doc) pairs in a frame."""
    return set(zip(frame["topic"], frame["doc"], strict=True))


def uniques_leave_out(
    run_top_k: pd.DataFrame,
    qrels: pd.DataFrame,
    group: Any,
    relevant_min_grade: int = 1,
    k: int | None = None,
    relevant_only: bool = True,
) -> pd.DataFrame:
    """Qrels minus the relevant documents that only `group`'s runs placed in the top K.

    `run_top_k` has `[run, group, topic, doc]`. Why: Zobel's uniques test scores a group's runs
    as if the group had not contributed to the pool; a big drop means the collection favours
    pool contributors. With `relevant_only=False` every uniquely contributed judged document is
    removed, not only the relevant ones.
    """
    if "group" not in run_top_k.columns:
        raise ValueError("run table lacks column 'group'")
    top = _top_k(run_top_k, k)
    if group not in set(top["group"]):
        raise ValueError(f"no runs of group {group!r} in the run table")
    mine = top["group"] == group
    unique = _pairs(top[mine]) - _pairs(top[~mine])
    drop = pd.Series(
        [pair in unique for pair in zip(qrels["topic"], qrels["doc"], strict=True)],
        index=qrels.index,
        dtype=bool,
    )
    if relevant_only:
        drop &= qrels["grade"] >= relevant_min_grade
    return qrels.loc[~drop].reset_index(drop=True)


def reusability_report(
    per_topic_a: pd.DataFrame,
    per_topic_b: pd.DataFrame,
    topics: Iterable[Any] | None = None,
    threshold: float = 0.9,
    per_topic_method: Literal["omit_ties", "b"] = "omit_ties",
    tau_ap_truth: Literal["a", "b"] = "b",
    run_top_k: pd.DataFrame | None = None,
    qrels_a: pd.DataFrame | None = None,
    qrels_b: pd.DataFrame | None = None,
    relevant_min_grade: int = 1,
    k: int | None = None,
    measure: str | None = None,
) -> dict[str, Any]:
    """The reusability figures as a JSON-able dict (NaN becomes None); the scores of a count
    `measure` (NumRet…) are sums over the topics (the same ranks and τ).

    Keys: `kendall_tau` (tie-omitting), `tau_b`, `tau_ap` (truth = the ranking under B, the
    more completely judged qrels, unless `tau_ap_truth="a"`), `n_runs`, `n_topics`,
    `per_topic_tau.{min, median, below_threshold}`, `tau_per_topic[{topic, tau, n_runs}]`,
    and `runs[]` with `run, score_a, rank_a, score_b, rank_b, rank_change` — plus
    `n_retrieved, unjudged_a, new_relevant_b` when the run table and both qrels are given.
    """
    topic_list = union_topics(per_topic_a, per_topic_b, topics)
    mean_a = mean_scores(per_topic_a, topics=topic_list, aggregate_as=measure)
    mean_b = mean_scores(per_topic_b, topics=topic_list, aggregate_as=measure)
    if set(mean_a.index) != set(mean_b.index):
        raise ValueError("per-topic scores under A and B must cover the same runs")
    mean_b = mean_b.reindex(mean_a.index)
    truth, estimate = (mean_b, mean_a) if tau_ap_truth == "b" else (mean_a, mean_b)
    table, summary = per_topic_tau(
        per_topic_a, per_topic_b, threshold=threshold, topics=topic_list, method=per_topic_method
    )
    tau_per_topic = [{"topic": row.topic, "tau": json_float(row.tau), "n_runs": int(row.n_runs)}
                     for row in table.itertuples(index=False)]
    changes = rank_changes(mean_a, mean_b)
    extra: dict[Any, dict[str, int]] = {}
    if run_top_k is not None:
        if qrels_a is None or qrels_b is None:
            raise ValueError("unjudged counts need both qrels_a and qrels_b")
        counts = unjudged_and_new_relevant(
            run_top_k, qrels_a, qrels_b, relevant_min_grade=relevant_min_grade, k=k
        )
        for row in counts.itertuples(index=False):
            extra[row.run] = {
                "n_retrieved": int(row.n_retrieved),
                "unjudged_a": int(row.unjudged_a),
                "new_relevant_b": int(row.new_relevant_b),
            }
    runs = []
    for row in changes.itertuples(index=False):
        entry: dict[str, Any] = {
            "run": row.run,
            "score_a": json_float(row.score_a),
            "rank_a": int(row.rank_a),
            "score_b": json_float(row.score_b),
            "rank_b": int(row.rank_b),
            "rank_change": int(row.rank_change),
        }
        if run_top_k is not None:
            entry.update(
                extra.get(row.run, {"n_retrieved": 0, "unjudged_a": 0, "new_relevant_b": 0})
            )
        runs.append(entry)
    return {
        "kendall_tau": json_float(goodman_kruskal_gamma(mean_a, mean_b)),
        "tau_b": json_float(tau_b(mean_a, mean_b)),
        "tau_ap": json_float(tau_ap(truth, estimate)),
        "tau_ap_truth": tau_ap_truth,
        "n_runs": int(len(mean_a)),
        "n_topics": len(topic_list),
        "per_topic_tau": summary,
        "tau_per_topic": tau_per_topic,
        "runs": runs,
    }
