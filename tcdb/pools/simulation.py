"""Simulating pools before anyone judges: what each strategy would find at each budget, and how
well the systems would be ranked on what it found.

Given a complete qrels set, pretend only the documents a strategy pools within a budget had
been judged (their grades read from the complete set), evaluate every run with ir_measures on
those judgments, and compare the system ranking with the ranking under the complete qrels
(τ-b and τ_AP). The leave-one-group-out τ (Zobel 1998) asks the reusability question: each
group's runs are evaluated on a pool built without them, everyone else on the full pool.

Pure over loaded data (rankings, runs as ir_measures dicts, a qrels dict): `tcdb.pools.simulate`
reads them from the database; `tcdb.pools.simulation_layout` divides the work into units and
turns their means into rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tcdb.analysis.means import aggregate, counts_unanswered, unanswered_value
from tcdb.pools.pooled_scores import PooledScores, Subset, relevant_only
from tcdb.pools.simulation_layout import (
    COMPLETE,
    Complete,
    Layout,
    SimulationRow,
    Unit,
    assemble_units,
)
from tcdb.pools.strategies import Judge, Strategy, TopicRanking
from tcdb.pools.strategies.base import cut_lengths, is_relevant
from tcdb.pools.strategies.leave_out import Order, aggregates, orders_without

RunDict = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


def orders_for(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
               limit: int | None) -> dict[str, list[str]]:
    """Each topic's judging order, the judge reading the complete qrels (unjudged: grade 0)."""
    return {topic: strategy.order(ranking, _judge(qrels, topic), limit)
            for topic, ranking in topics.items()}


def _judge(qrels: Qrels, topic: str) -> Judge:
    """The judge of a simulation: the complete qrels' grade (unjudged: None, which every
    strategy takes as not relevant, as it would grade 0)."""
    return qrels.get(topic, {}).get


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


def mean_scores(runs: Mapping[str, RunDict], qrels: Qrels, measure: str, n_topics: int
                ) -> dict[str, float]:
    """Each run's mean of `measure` over the complete qrels' `n_topics` topics (trec_eval -c:
    a topic without a value counts 0, or for NumRel and NumQ what an empty ranking has), with
    ir_measures."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    if not qrels:
        return {tag: 0.0 for tag in runs}
    evaluator = ir_measures.evaluator([parsed], qrels)
    fills = counts_unanswered(measure)  # NumRel, NumQ: an unanswered topic is not 0
    means = {}
    for tag, run in runs.items():
        values = [float(m.value) for m in evaluator.iter_calc(run) if m.query_id in run]
        if fills:
            values += [unanswered_value(measure, judged) for topic, judged in qrels.items()
                       if topic not in run]
        # a count (NumRet…) is summed, as trec_eval's `all` line: the same ranking for τ
        means[tag] = aggregate(measure, values, n_topics)
    return means


def cut_after_last_relevant(runs: Mapping[str, RunDict], qrels: Qrels, measure: str
                            ) -> Mapping[str, RunDict]:
    """Each run's topics without the documents scored below all its documents relevant in the
    complete qrels, when `measure` depends only on the relevant documents (AP, nDCG, RR,
    R-prec, P@k, R@k, Success@k): every simulated qrels set is a subset of the complete one,
    and a document scored lower than every relevant one is ranked after them whatever the tie
    order, so the cut changes no value and spares ir_measures the rest of the ranking, 60
    evaluations over. Other measures (Bpref, Judged@k, …) see the runs whole."""
    if not relevant_only(measure):
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


@dataclass(frozen=True)
class Pooling:
    """What making the strategies' pooled sets reads (`_pooled_sets`): each topic's rankings
    and the topics' order (a total budget's round robin), the complete qrels the judge reads,
    the strategies, the budgets (per topic or in total) and how the work divides."""

    topics: Mapping[str, TopicRanking]
    topic_order: Sequence[str]
    qrels: Qrels
    strategies: Sequence[Strategy]
    budgets: Sequence[int]
    per_topic: bool
    layout: Layout


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
    workers: int = 1,
) -> tuple[list[SimulationRow], dict[str, Any]]:
    """Rows per (strategy, budget), and the full-qrels figures they are measured against.

    `run_tags` name the runs of the rankings in their order; `groups` maps a tag to its group.
    Each strategy orders each topic once for all runs and once per left-out group (its units,
    made in `workers` processes), and every pooled set is scored by one `PooledScores` (in
    `workers` processes), so equal sets of different strategies and budgets are scored once.
    """
    scores = PooledScores(runs, qrels, measure, len(qrels), workers)
    pooling = Pooling(topics, topic_order, qrels, strategies, budgets, per_topic,
                      Layout.of(run_tags, groups, leave_out, workers))
    units = pooling.layout.units(len(strategies))
    if workers > 1 and len(units) > 1:
        from tcdb.workers import run_in_processes

        made = {units[i]: sets for i, sets in
                run_in_processes(_pooled_sets, units, workers, (scores, pooling))}
    else:
        made = {unit: _pooled_sets((scores, pooling), unit) for unit in units}
    done = _scored(scores, pooling, run_tags, runs, [*units, COMPLETE], made)
    return assemble_units(strategies, budgets, run_tags, pooling.layout, dict(done))


def simulate_units(pooling: Pooling, run_tags: Sequence[str], runs: Mapping[str, RunDict],
                   measure: str, units: Sequence[Unit]) -> list[tuple[Unit, Any]]:
    """Some units of a simulation made and scored together, apart from the others (a Dask
    worker's task), with their results as `_scored` gives them. One `PooledScores` scores the
    units' sets, so a run's topic is prepared once for all of them. A run's value on a pooled
    set is trec_eval's on that set alone, so `assemble_units` on the results gives
    `simulate_strategies`' rows."""
    scores = PooledScores(runs, pooling.qrels, measure, len(pooling.qrels))
    made = {unit: _pooled_sets((scores, pooling), unit) for unit in units if unit != COMPLETE}
    return _scored(scores, pooling, run_tags, runs, units, made)


def _scored(scores: PooledScores, pooling: Pooling, run_tags: Sequence[str],
            runs: Mapping[str, RunDict], units: Sequence[Unit],
            made: Mapping[Unit, list[tuple[list[dict[str, int]], list[Subset]]]]
            ) -> list[tuple[Unit, Any]]:
    """Each unit's result, its pooled sets (`made`) scored by `scores`: the `Complete` qrels'
    side (`COMPLETE`); a strategy's cuts and (means, relevant found) per budget (k, None); or,
    per left-out group of part p, its runs' means per budget (k, p). Every set is added
    first, so that one scoring covers them all."""
    qrels, layout = pooling.qrels, pooling.layout
    added: list[tuple[Unit, Any]] = []
    for unit in units:
        if unit == COMPLETE:
            added.append((unit, scores.add(*_complete(qrels), list(runs))[0][0]))
        elif unit[1] is None:
            ((cuts, subsets),) = made[unit]
            added.append((unit, (cuts, scores.add_subsets(
                subsets, [t for t in run_tags if t in runs]))))
        else:
            added.append((unit, [scores.add_subsets(sets, _tags(run_tags, runs, members))
                                 for members, (_, sets) in zip(layout.part(unit[1]),
                                                               made[unit], strict=True)]))
    done: list[tuple[Unit, Any]] = []
    for unit, handles in added:
        if unit == COMPLETE:
            done.append((unit, Complete(scores.means(handles), len(qrels),
                                        _relevant_total(qrels))))
        elif unit[1] is None:
            cuts, main = handles
            done.append((unit, (cuts, [(scores.means(h), found) for h, found in main])))
        else:
            done.append((unit, [[scores.means(h) for h, _ in per_budget]
                                for per_budget in handles]))
    return done


def _complete(qrels: Qrels) -> tuple[dict[str, list[str]], list[dict[str, int]]]:
    """The complete qrels as one more pooled set: every judged document of every topic."""
    return {t: list(docs) for t, docs in qrels.items()}, [{t: len(docs)
                                                           for t, docs in qrels.items()}]


def _relevant_total(qrels: Qrels) -> int:
    return sum(is_relevant(g) for docs in qrels.values() for g in docs.values())


def _tags(run_tags: Sequence[str], runs: Mapping[str, RunDict], members: list[int]
          ) -> list[str]:
    return [run_tags[i] for i in members if run_tags[i] in runs]


# Below this many run entries a simulation takes seconds: worker processes would not pay.
PARALLEL_MIN_ENTRIES = 1_000_000


def simulate_in_processes(
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
    workers: int | None = None,
) -> tuple[list[SimulationRow], dict[str, Any]]:
    """`simulate_strategies`, its runs scored in worker processes (`tcdb.workers`) when the
    runs are big enough (or `workers` says how many): each scores a share of the topics of
    every pooled set, the orders and means stay here, so the rows are the same."""
    from tcdb.workers import worker_count

    entries = sum(len(docs) for run in runs.values() for docs in run.values())
    n_workers = worker_count(workers, len(qrels), worth_it=entries >= PARALLEL_MIN_ENTRIES)
    return simulate_strategies(topics, topic_order, run_tags, groups, runs, qrels, strategies,
                               budgets, per_topic, measure, leave_out, n_workers)


def _pooled_sets(shared: tuple[PooledScores, Pooling], unit: Unit
                 ) -> list[tuple[list[dict[str, int]], list[Subset]]]:
    """The k-th strategy's cuts at every budget and the pooled subsets they judge: of its
    orders over all runs (`unit` = (k, None)), or of its orders without each group of the
    p-th part of the groups in turn (`unit` = (k, p)). Pure over the loaded data: a worker
    process can make them."""
    scores, pooling = shared
    k, part = unit
    topics, qrels, budgets, per_topic = (pooling.topics, pooling.qrels, pooling.budgets,
                                         pooling.per_topic)
    strategy, limit = pooling.strategies[k], max(budgets)
    order_sets = ([orders_for_budget(strategy, topics, qrels, limit, per_topic)]
                  if part is None else
                  _left_out_orders(strategy, topics, qrels, limit, per_topic,
                                   pooling.layout.part(part)))
    made = []
    for orders in order_sets:
        cuts = [cut_lengths(_lengths(orders), b, per_topic, pooling.topic_order)
                for b in budgets]
        made.append((cuts, scores.subsets(orders, cuts)))
    return made


def _lengths(orders: Mapping[str, Order]) -> dict[str, int]:
    return {t: len(o) for t, o in orders.items()}


def _left_out_orders(strategy: Strategy, topics: Mapping[str, TopicRanking], qrels: Qrels,
                     limit: int, per_topic: bool, left_out: list[list[int]]
                     ) -> list[Mapping[str, Order]]:
    """Per left-out run set, each topic's order without those runs: all sets at once where
    the strategy's order is an aggregate of the runs' entries (`orders_without`), else
    `orders_for_budget` again on the reduced rankings. A longer order only adds documents
    after the ones a cut takes, so whole orders cut alike."""
    n = len(next(iter(topics.values())).runs) if topics else 0
    if aggregates(strategy):
        per_topic_orders = {t: orders_without(strategy, r, left_out, _judge(qrels, t),
                                              limit if per_topic else None)
                            for t, r in topics.items()}
        return [{t: o[j] for t, o in per_topic_orders.items()} for j in range(len(left_out))]
    result: list[Mapping[str, Order]] = []
    for members in left_out:
        gone = set(members)
        keep = [i not in gone for i in range(n)]
        reduced = {t: r.without(keep) for t, r in topics.items()}
        result.append(orders_for_budget(strategy, reduced, qrels, limit, per_topic))
    return result
