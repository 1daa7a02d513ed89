"""Simulating pools before anyone judges: what each strategy would find at each budget, and how
well the systems would be ranked on what it found.

Given a complete qrels set, pretend only the documents a strategy pools within a budget had
been judged (their grades read from the complete set), evaluate every run with ir_measures on
those judgments, and compare the system ranking with the ranking under the complete qrels
(τ-b and τ_AP). The leave-one-group-out τ (Zobel 1998) asks the reusability question: each
group's runs are evaluated on a pool built without them, everyone else on the full pool.

Pure over loaded data (rankings, runs as ir_measures dicts, a qrels dict): `tcdb.pools.simulate`
reads them from the database.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import pandas as pd

from tcdb.analysis.means import trec_eval_mean
from tcdb.analysis.reusability import tau_ap, tau_b
from tcdb.pools.strategies import Strategy, TopicRanking, cut, describe
from tcdb.pools.strategies.base import is_relevant

RunDict = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


class SimulationRow(TypedDict):
    """One strategy at one budget."""

    strategy: str
    budget: int
    n_judged: int
    relevant_found: int
    relevant_fraction: float  # of the relevant documents in the complete qrels
    tau_b: float | None
    tau_ap: float | None
    logo_tau_b: float | None
    logo_tau_ap: float | None


def orders_for(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
               limit: int | None) -> dict[str, list[str]]:
    """Each topic's judging order, the judge reading the complete qrels (unjudged: grade 0)."""
    result = {}
    for topic, ranking in topics.items():
        grades = qrels.get(topic, {})

        def judge(doc: str, grades: dict[str, int] = grades) -> int:
            return grades.get(doc, 0)

        result[topic] = strategy.order(ranking, judge, limit)
    return result


def orders_for_budget(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
                      budget: int, per_topic: bool) -> dict[str, list[str]]:
    """Each topic's order, only as long as a cut at `budget` can use.

    Per topic that is `budget`. In total, round robin takes about budget / topics from each;
    start there and double the length while the orders hold fewer than `budget` documents and
    some were cut short. An order cut shorter is a prefix of a longer one, so every smaller
    budget cuts the same documents from it; adaptive strategies judge only what is needed.
    """
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
    """The complete qrels restricted to the chosen documents: what judging them would give."""
    result: Qrels = {}
    for topic, docs in chosen.items():
        grades = qrels.get(topic, {})
        judged = {d: grades[d] for d in docs if d in grades}
        if judged:
            result[topic] = judged
    return result


def mean_scores(runs: Mapping[str, RunDict], qrels: Qrels, measure: str, n_topics: int
                ) -> dict[str, float]:
    """Each run's mean of `measure` over the complete qrels' `n_topics` topics (trec_eval -c:
    a topic without a value counts 0), with ir_measures."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    if not qrels:
        return {tag: 0.0 for tag in runs}
    evaluator = ir_measures.evaluator([parsed], qrels)
    means = {}
    for tag, run in runs.items():
        values = [float(m.value) for m in evaluator.iter_calc(run) if m.query_id in run]
        means[tag] = trec_eval_mean(values, n_topics)
    return means


# Measures whose value depends only on where the relevant documents are and how many there are:
# documents ranked below a run's last relevant one (in the complete qrels) cannot change them.
_RELEVANT_ONLY = ("AP", "nDCG", "RR", "Rprec", "R", "P", "Success")


def cut_after_last_relevant(runs: Mapping[str, RunDict], qrels: Qrels, measure: str
                            ) -> Mapping[str, RunDict]:
    """Each run's topics without the documents scored below all its documents relevant in the
    complete qrels, when `measure` depends only on the relevant documents (AP, nDCG, RR,
    R-prec, P@k, R@k, Success@k): every simulated qrels set is a subset of the complete one,
    and a document scored lower than every relevant one is ranked after them whatever the tie
    order, so the cut changes no value and spares ir_measures the rest of the ranking, 60
    evaluations over. Other measures (Bpref, Judged@k, …) see the runs whole."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    if parsed.NAME not in _RELEVANT_ONLY or (parsed.NAME == "P" and "cutoff" not in
                                              parsed.params):
        return runs
    cut: dict[str, RunDict] = {}
    for tag, run in runs.items():
        cut[tag] = {}
        for topic, docs in run.items():
            grades = qrels.get(topic, {})
            scores = [s for d, s in docs.items() if grades.get(d, 0) > 0]
            if scores:
                lowest = min(scores)
                cut[tag][topic] = {d: s for d, s in docs.items() if s >= lowest}
            elif topic in qrels:  # nothing relevant retrieved: a value of 0 either way
                first = max(docs.items(), key=lambda e: e[1])
                cut[tag][topic] = dict([first])
    return cut


def _taus(truth: Mapping[str, float], estimate: Mapping[str, float]
          ) -> tuple[float | None, float | None]:
    if len(truth) < 2:
        return None, None
    a = pd.Series(truth, dtype="float64")
    b = pd.Series(estimate, dtype="float64").reindex(a.index)

    def finite(x: float) -> float | None:
        return None if x != x else x

    return finite(tau_b(a, b)), finite(tau_ap(a, b))


def simulate_strategies(
    topics: Mapping[str, TopicRanking],
    topic_order: Sequence[str],
    run_tags: Sequence[str],
    groups: Mapping[str, str],
    runs: Mapping[str, RunDict],
    qrels: Qrels,
    strategies: Sequence[Strategy],
    budgets: Sequence[int],
    per_topic: bool,
    measure: str,
    leave_out: bool = True,
) -> tuple[list[SimulationRow], dict[str, Any]]:
    """Rows per (strategy, budget), and the full-qrels figures they are measured against.

    `run_tags` name the runs of the rankings in their order; `groups` maps a tag to its group.
    """
    n_topics = len(qrels)
    full = mean_scores(runs, qrels, measure, n_topics)
    runs = cut_after_last_relevant(runs, qrels, measure)
    seen: dict[bytes, dict[str, float]] = {}

    def memo(chosen: Mapping[str, RunDict], judged: Qrels) -> dict[str, float]:
        """`mean_scores`, once per (runs, qrels): budgets past the point where a pool holds
        every document, and strategies that pool alike, judge the same set. Keyed by a
        digest of both, not the sets themselves, to keep memory small."""
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
    rows: list[SimulationRow] = []
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
            found = sum(is_relevant(g) for docs in pooled[b].values() for g in docs.values())
            t_b, t_ap = _taus(full, means[b])
            l_b, l_ap = _taus(full, logo[b]) if leave_out and len(by_group) > 1 else (None,
                                                                                      None)
            rows.append({
                "strategy": describe(strategy), "budget": b,
                "n_judged": sum(len(d) for d in cuts[b].values()),
                "relevant_found": found,
                "relevant_fraction": found / total_relevant if total_relevant else 0.0,
                "tau_b": t_b, "tau_ap": t_ap, "logo_tau_b": l_b, "logo_tau_ap": l_ap,
            })
    context = {"n_runs": len(run_tags), "n_groups": len(by_group), "n_topics": n_topics,
               "relevant_total": total_relevant, "full_means": full}
    return rows, context
