"""The straightforward pool simulation, kept to check the fast one against (tests) and to time it
(`bench/pool_simulation.py --compare`): every left-out group's orders computed again from the
reduced rankings, every pooled qrels set a dict of its own, every (runs, pooled set) one
ir_measures evaluation; move-to-front and MaxMean with numpy over all runs at each step; the
round robin of a total budget taken document by document. This is what
`tcdb.pools.simulation.simulate_strategies` computed before it was made fast.

Its means and correlations share no code with `tcdb`: each run's per-topic values come from
ir_measures on the runs as they are (no cut after the last relevant document), averaged here
with trec_eval -c semantics; τ-b is `scipy.stats.kendalltau`; τ_AP is counted here by its
definition over trectools' ranking order and checked against trectools' `get_correlation`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

import ir_measures
import numpy as np
from scipy import stats
from trectools.misc import get_correlation, sort_systems_by

from tcdb.pools.strategies import Strategy, TopicRanking, describe
from tcdb.pools.strategies.adaptive import MaxMean, MoveToFront
from tcdb.pools.strategies.base import Judge

Qrels = dict[str, dict[str, int]]

# The rounding `tcdb.analysis.means` documents for every mean it shows, compares or ranks:
# the exact sum (math.fsum) over the topics divided by their number, rounded to 12 decimals.
DECIMALS = 12


def mean_scores(runs: Mapping[str, Any], qrels: Qrels, measure: str, n_topics: int
                ) -> dict[str, float]:
    """Each run's mean of `measure` over the `n_topics` topics of the complete qrels, as
    `trec_eval -c` takes it: ir_measures' value for each topic the run answered and `qrels`
    judges, 0 for every other topic (unanswered, or judged only in the complete qrels)."""
    if not qrels:  # nothing judged: every topic counts 0
        return {tag: 0.0 for tag in runs}
    evaluator = ir_measures.evaluator([ir_measures.parse_measure(measure)], qrels)
    means = {}
    for tag, run in runs.items():
        values = {m.query_id: float(m.value) for m in evaluator.iter_calc(run)
                  if m.query_id in run}
        assert len(values) <= n_topics
        padded = [*values.values(), *[0.0] * (n_topics - len(values))]
        means[tag] = round(math.fsum(padded) / n_topics, DECIMALS)
    return means


def is_relevant(grade: int | None, threshold: int = 1) -> bool:
    """Relevant at `threshold`: judged, and graded at least that (unjudged is not relevant)."""
    return grade is not None and grade >= threshold


class _System:
    """What `trectools.misc.sort_systems_by` reads of a run: its result and its name."""

    def __init__(self, name: str, value: float) -> None:
        self.name, self.value = name, value

    def get_result(self, metric: str) -> float:
        return self.value

    def get_runid(self) -> str:
        return self.name


def _tau_ap(ranked_truth: list[tuple[float, str]], ranked_estimate: list[tuple[float, str]]
            ) -> float:
    """τ_AP (Yilmaz, Aslam, Robertson 2008) of the estimated ranking against the true one, by
    its definition: with the estimate's ranking e_1..e_N, C(i) counts the runs above e_i in the
    estimate that are above it in the truth too; p = Σ_{i=2..N} C(i)/(i−1) / (N−1); τ_AP = 2p − 1.
    The terms are added with `np.sum`, as `tcdb.analysis.rank_correlation.tau_ap` adds them, so the
    rows compare equal to the last bit; trectools' loop, which adds them one by one, agrees to
    1e-12 (asserted in `_taus`)."""
    place = {name: i for i, (_, name) in enumerate(ranked_truth)}
    order = [name for _, name in ranked_estimate]
    n = len(order)
    c = np.array([sum(place[above] < place[order[i]] for above in order[:i])
                  for i in range(1, n)], dtype=float)
    p = float(np.sum(c / np.arange(1, n))) / (n - 1)
    return 2.0 * p - 1.0


def _taus(truth: Mapping[str, float], estimate: Mapping[str, float]
          ) -> tuple[float | None, float | None]:
    """(τ-b, τ_AP) of the estimated means against the complete ones; None for fewer than two
    runs or an undefined τ (all means tied). τ-b: scipy's `kendalltau`, variant "b". τ_AP: both
    rankings by score descending then name ascending (trectools' `sort_systems_by`), the
    complete ranking the ground truth (`get_correlation`'s first argument)."""
    if len(truth) < 2:
        return None, None
    assert set(estimate) == set(truth)
    names = sorted(truth)
    t_b = float(stats.kendalltau([truth[n] for n in names], [estimate[n] for n in names],
                                 variant="b").statistic)
    ranked_truth = sort_systems_by([_System(n, truth[n]) for n in names])
    ranked_estimate = sort_systems_by([_System(n, estimate[n]) for n in names])
    t_ap = _tau_ap(ranked_truth, ranked_estimate)
    trectools_ap = float(get_correlation(ranked_truth, ranked_estimate, "tauap")[0])
    assert abs(t_ap - trectools_ap) <= 1e-12, (t_ap, trectools_ap)
    return (None if math.isnan(t_b) else t_b), t_ap


class _Sources:
    def __init__(self, topic: TopicRanking) -> None:
        self.topic = topic
        self.docs = [r.docs.tolist() for r in topic.runs]
        self.at = [0] * len(self.docs)
        self.chosen: set[str] = set()
        self.order: list[str] = []

    def next_of(self, run: int) -> str | None:
        docs, i = self.docs[run], self.at[run]
        while i < len(docs) and docs[i] in self.chosen:
            i += 1
        self.at[run] = i + 1
        if i >= len(docs):
            return None
        self.chosen.add(docs[i])
        self.order.append(docs[i])
        return str(docs[i])

    def total(self) -> int:
        codes = self.topic.flat[0]
        return int(np.count_nonzero(np.bincount(codes))) if len(codes) else 0


def mtf_order(topic: TopicRanking, judge: Judge, limit: int | None, grade: int = 1) -> list[str]:
    sources = _Sources(topic)
    n = len(sources.docs)
    limit = sources.total() if limit is None else min(limit, sources.total())
    priority = np.zeros(n)
    live = np.ones(n, dtype=bool)
    current = 0
    while len(sources.order) < limit and live.any():
        doc = sources.next_of(current)
        if doc is None:
            live[current] = False
        elif is_relevant(judge(doc), grade):
            continue
        else:
            priority[current] -= 1
        if not live.any():
            break
        best = priority[live].max()
        candidates = np.flatnonzero(live & (priority == best))
        after = candidates[candidates > current]
        current = int(after[0] if len(after) else candidates[0])
    return sources.order


def maxmean_order(topic: TopicRanking, judge: Judge, limit: int | None, grade: int = 1
                  ) -> list[str]:
    sources = _Sources(topic)
    n = len(sources.docs)
    limit = sources.total() if limit is None else min(limit, sources.total())
    relevant = np.zeros(n)
    pulled = np.zeros(n)
    mean = np.full(n, 0.5)
    while len(sources.order) < limit:
        arm = int(np.argmax(mean))
        if mean[arm] < 0:
            break
        doc = sources.next_of(arm)
        if doc is None:
            mean[arm] = -1.0
            continue
        pulled[arm] += 1
        relevant[arm] += is_relevant(judge(doc), grade)
        mean[arm] = (relevant[arm] + 1) / (pulled[arm] + 2)
    return sources.order


def order(strategy: Strategy, topic: TopicRanking, judge: Judge, limit: int | None
          ) -> list[str]:
    """The strategy's order, the adaptive ones by the loops above."""
    if isinstance(strategy, MoveToFront):
        return mtf_order(topic, judge, limit, strategy.relevant_grade)
    if isinstance(strategy, MaxMean):
        return maxmean_order(topic, judge, limit, strategy.relevant_grade)
    return list(strategy.order(topic, judge, limit))


def cut(orders: Mapping[str, Sequence[str]], budget: int, per_topic: bool,
        topic_order: Sequence[str]) -> dict[str, list[str]]:
    """The round robin, one document at a time."""
    if per_topic:
        return {t: list(orders.get(t, []))[:budget] for t in topic_order}
    taken = {t: 0 for t in topic_order}
    left = budget
    level = 0
    live = [t for t in topic_order if len(orders.get(t, []))]
    while left > 0 and live:
        still = []
        for t in live:
            if left == 0:
                break
            if level < len(orders[t]):
                taken[t] += 1
                left -= 1
                if level + 1 < len(orders[t]):
                    still.append(t)
        live = still
        level += 1
    return {t: list(orders.get(t, []))[:n] for t, n in taken.items()}


def orders_for(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
               limit: int | None) -> dict[str, list[str]]:
    result = {}
    for topic, ranking in topics.items():
        grades = qrels.get(topic, {})

        def judge(doc: str, grades: dict[str, int] = grades) -> int:
            return grades.get(doc, 0)

        result[topic] = order(strategy, ranking, judge, limit)
    return result


def orders_for_budget(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
                      budget: int, per_topic: bool) -> dict[str, list[str]]:
    if per_topic or not topics:
        return orders_for(strategy, topics, qrels, budget)
    limit = -(-budget // len(topics))
    while True:
        orders = orders_for(strategy, topics, qrels, limit)
        short = [t for t, o in orders.items() if len(o) >= limit]
        if sum(map(len, orders.values())) >= budget or not short or limit >= budget:
            return orders
        limit = min(budget, limit * 2)


def pooled_qrels(chosen: Mapping[str, list[str]], qrels: Qrels) -> Qrels:
    result: Qrels = {}
    for topic, docs in chosen.items():
        grades = qrels.get(topic, {})
        judged = {d: grades[d] for d in docs if d in grades}
        if judged:
            result[topic] = judged
    return result


def simulate_strategies(topics: Mapping[str, TopicRanking], topic_order: Sequence[str],
                        run_tags: Sequence[str], groups: Mapping[str, str],
                        runs: Mapping[str, Any], qrels: Qrels, strategies: Sequence[Strategy],
                        budgets: Sequence[int], per_topic: bool, measure: str,
                        leave_out: bool = True) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows as `tcdb.pools.simulation.simulate_strategies` gives them; the context holds the
    means per (strategy, budget) too ("means", "logo_means")."""
    n_topics = len(qrels)
    full = mean_scores(runs, qrels, measure, n_topics)
    seen: dict[bytes, dict[str, float]] = {}

    def memo(chosen: Mapping[str, Any], judged: Qrels) -> dict[str, float]:
        digest = hashlib.blake2b(digest_size=32)
        for part in (sorted(chosen), sorted((t, d, g) for t, docs in judged.items()
                                            for d, g in docs.items())):
            digest.update(repr(part).encode())
        key = digest.digest()
        if key not in seen:
            seen[key] = mean_scores(chosen, judged, measure, n_topics)
        return seen[key]

    total_relevant = sum(is_relevant(g) for docs in qrels.values() for g in docs.values())
    limit = max(budgets)
    by_group: dict[str, list[int]] = {}
    for i, tag in enumerate(run_tags):
        by_group.setdefault(groups.get(tag) or tag, []).append(i)
    rows: list[dict[str, Any]] = []
    all_means: dict[tuple[str, int], dict[str, float]] = {}
    all_logo: dict[tuple[str, int], dict[str, float]] = {}
    for strategy in strategies:
        orders = orders_for_budget(strategy, topics, qrels, limit, per_topic)
        cuts = {b: cut(orders, b, per_topic, topic_order) for b in budgets}
        pooled = {b: pooled_qrels(cuts[b], qrels) for b in budgets}
        means = {b: memo(runs, pooled[b]) for b in budgets}
        logo = {b: dict(means[b]) for b in budgets}
        if leave_out and len(by_group) > 1:
            for members in by_group.values():
                keep = [i not in members for i in range(len(run_tags))]
                reduced = {t: r.without(keep) for t, r in topics.items()}
                left_orders = orders_for_budget(strategy, reduced, qrels, limit, per_topic)
                tags = {run_tags[i]: runs[run_tags[i]] for i in members if run_tags[i] in runs}
                for b in budgets:
                    reduced_qrels = pooled_qrels(cut(left_orders, b, per_topic, topic_order),
                                                 qrels)
                    logo[b].update(memo(tags, reduced_qrels))
        for b in budgets:
            all_means[(describe(strategy), b)] = means[b]
            all_logo[(describe(strategy), b)] = logo[b]
            found = sum(is_relevant(g) for docs in pooled[b].values() for g in docs.values())
            t_b, t_ap = _taus(full, means[b])
            l_b, l_ap = (_taus(full, logo[b]) if leave_out and len(by_group) > 1
                         else (None, None))
            rows.append({
                "strategy": describe(strategy), "budget": b,
                "n_judged": sum(len(d) for d in cuts[b].values()),
                "relevant_found": found,
                "relevant_fraction": found / total_relevant if total_relevant else 0.0,
                "tau_b": t_b, "tau_ap": t_ap, "logo_tau_b": l_b, "logo_tau_ap": l_ap,
            })
    context = {"n_runs": len(run_tags), "n_groups": len(by_group), "n_topics": n_topics,
               "relevant_total": total_relevant, "full_means": full, "means": all_means,
               "logo_means": all_logo}
    return rows, context
