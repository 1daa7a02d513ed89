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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import pandas as pd

from tcdb.analysis.means import aggregate
from tcdb.analysis.rank_correlation import tau_ap, tau_b
from tcdb.pools.pooled_scores import PooledScores, Subset, relevant_only
from tcdb.pools.strategies import Judge, Strategy, TopicRanking, describe
from tcdb.pools.strategies.base import cut_lengths, is_relevant
from tcdb.pools.strategies.leave_out import Order, aggregates, orders_without

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
    a topic without a value counts 0), with ir_measures."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    if not qrels:
        return {tag: 0.0 for tag in runs}
    evaluator = ir_measures.evaluator([parsed], qrels)
    means = {}
    for tag, run in runs.items():
        values = [float(m.value) for m in evaluator.iter_calc(run) if m.query_id in run]
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


def _taus(truth: Mapping[str, float], estimate: Mapping[str, float]
          ) -> tuple[float | None, float | None]:
    if len(truth) < 2:
        return None, None
    a = pd.Series(truth, dtype="float64")
    b = pd.Series(estimate, dtype="float64").reindex(a.index)

    def finite(x: float) -> float | None:
        return None if x != x else x

    return finite(tau_b(a, b)), finite(tau_ap(a, b))


# A unit of a simulation's work: (k, None) the k-th strategy's pooled sets over all runs,
# (k, p) its sets without each left-out group of the p-th part of the groups; `COMPLETE` the
# complete qrels, scored as one more set (the ranking every pooled one is measured against).
Unit = tuple[int, int | None]
COMPLETE: Unit = (-1, None)

class Complete(NamedTuple):
    """The complete qrels' side of a simulation: every run's mean on them, the topics they
    judge and the relevant documents in them."""

    means: dict[str, float]
    n_topics: int
    relevant_total: int


# Per strategy: each budget's cut (topic → documents judged), the means of all runs and the
# relevant documents found at each budget, and per left-out group its runs' means at each.
StrategyMeans = tuple[list[dict[str, int]], list[tuple[dict[str, float], int]],
                      list[list[dict[str, float]]]]


@dataclass(frozen=True)
class Layout:
    """How a simulation's work divides: the groups left out in turn (their runs' places in
    `run_tags`), those groups in `parts` parts, one unit of work per strategy and part."""

    left_out: list[list[int]]
    parts: int  # 0 without leave-one-group-out

    @classmethod
    def of(cls, run_tags: Sequence[str], groups: Mapping[str, str], leave_out: bool,
           n_parts: int) -> Layout:
        by_group: dict[str, list[int]] = {}
        for i, tag in enumerate(run_tags):
            by_group.setdefault(groups.get(tag) or tag, []).append(i)
        left_out = list(by_group.values())
        logo = leave_out and len(left_out) > 1
        return cls(left_out, max(1, min(n_parts, len(left_out))) if logo else 0)

    @property
    def logo(self) -> bool:
        return self.parts > 0

    def units(self, n_strategies: int) -> list[Unit]:
        """The strategies' units, the biggest (a part of the left-out groups) first."""
        return ([(k, p) for k in range(n_strategies) for p in range(self.parts)]
                + [(k, None) for k in range(n_strategies)])

    def part(self, p: int) -> list[list[int]]:
        return self.left_out[p::self.parts]

    def in_group_order(self, per_part: Sequence[Sequence[Any]]) -> list[Any]:
        """What each part gave per group, back in the groups' order."""
        result: list[Any] = [None] * len(self.left_out)
        for p in range(self.parts):
            result[p::self.parts] = per_part[p]
        return result if self.logo else []


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
    Each strategy orders each topic once for all runs and once per left-out group, and every
    pooled set is scored by one `PooledScores` (in `workers` processes), so equal sets of
    different strategies and budgets are scored once.
    """
    scores = PooledScores(runs, qrels, measure, len(qrels), workers)
    ((complete, _),) = scores.add(*_complete(qrels), list(runs))
    layout = Layout.of(run_tags, groups, leave_out, workers)
    units = layout.units(len(strategies))
    shared = (scores, topics, topic_order, qrels, strategies, budgets, per_topic, layout)
    if workers > 1 and len(units) > 1:
        from tcdb.workers import run_in_processes

        done = dict(run_in_processes(_pooled_sets, units, workers, shared))
    else:
        done = {i: _pooled_sets(shared, unit) for i, unit in enumerate(units)}
    made = {unit: done[i] for i, unit in enumerate(units)}
    handles = []
    for k in range(len(strategies)):
        ((cuts, subsets),) = made[(k, None)]
        main = scores.add_subsets(subsets, [t for t in run_tags if t in runs])
        left = [[h for h, _ in scores.add_subsets(sets, _tags(run_tags, runs, members))]
                for members, (_, sets) in zip(
                    layout.left_out, layout.in_group_order(
                        [made[(k, p)] for p in range(layout.parts)]), strict=layout.logo)]
        handles.append((cuts, main, left))
    planned: list[StrategyMeans] = [
        (cuts, [(scores.means(h), found) for h, found in main],
         [[scores.means(h) for h in per_budget] for per_budget in left])
        for cuts, main, left in handles]
    return assemble(strategies, budgets, run_tags, layout,
                    Complete(scores.means(complete), len(qrels), _relevant_total(qrels)),
                    planned)


def simulate_units(
    topics: Mapping[str, TopicRanking],
    topic_order: Sequence[str],
    run_tags: Sequence[str],
    runs: Mapping[str, RunDict],
    qrels: Qrels,
    strategies: Sequence[Strategy],
    budgets: Sequence[int],
    per_topic: bool,
    measure: str,
    layout: Layout,
    units: Sequence[Unit],
) -> list[tuple[Unit, Any]]:
    """Some units of a simulation made and scored together, apart from the others (a Dask
    worker's task), each unit's result: the `Complete` qrels' side (`COMPLETE`); a strategy's
    cuts and (means, relevant found) per budget (k, None); or, per left-out group of part p,
    its runs' means per budget (k, p). One `PooledScores` scores the units' sets, so a run's
    topic is prepared once for all of them. A run's value on a pooled set is trec_eval's on
    that set alone, so `assemble_units` on the results gives `simulate_strategies`' rows."""
    scores = PooledScores(runs, qrels, measure, len(qrels))
    shared = (scores, topics, topic_order, qrels, strategies, budgets, per_topic, layout)
    added: list[tuple[Unit, Any]] = []
    for unit in units:  # every set first: then one scoring of them all
        if unit == COMPLETE:
            added.append((unit, scores.add(*_complete(qrels), list(runs))[0][0]))
            continue
        made, part = _pooled_sets(shared, unit), unit[1]
        if part is None:
            ((cuts, subsets),) = made
            added.append((unit, (cuts, scores.add_subsets(
                subsets, [t for t in run_tags if t in runs]))))
        else:
            added.append((unit, [scores.add_subsets(sets, _tags(run_tags, runs, members))
                                 for members, (_, sets) in zip(layout.part(part), made,
                                                               strict=True)]))
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


def assemble_units(strategies: Sequence[Strategy], budgets: Sequence[int],
                   run_tags: Sequence[str], layout: Layout, done: Mapping[Unit, Any]
                   ) -> tuple[list[SimulationRow], dict[str, Any]]:
    """The rows of a simulation from its units' results (`simulate_units`, anywhere)."""
    planned: list[StrategyMeans] = []
    for k in range(len(strategies)):
        cuts, main = done[(k, None)]
        left = layout.in_group_order([done[(k, p)] for p in range(layout.parts)])
        planned.append((cuts, main, left))
    return assemble(strategies, budgets, run_tags, layout, done[COMPLETE], planned)


def assemble(strategies: Sequence[Strategy], budgets: Sequence[int], run_tags: Sequence[str],
             layout: Layout, complete: Complete, planned: Sequence[StrategyMeans]
             ) -> tuple[list[SimulationRow], dict[str, Any]]:
    """Rows per (strategy, budget) from each strategy's means: τ against the complete
    qrels' ranking, and the leave-one-group-out τ of the means mixed from each group's runs
    scored without that group's pool contribution."""
    full, total_relevant = complete.means, complete.relevant_total
    rows: list[SimulationRow] = []
    all_means: dict[tuple[str, int], dict[str, float]] = {}
    all_logo: dict[tuple[str, int], dict[str, float]] = {}
    for strategy, (cuts, main, left) in zip(strategies, planned, strict=True):
        for k, b in enumerate(budgets):
            means, found = main[k]
            t_b, t_ap = _taus(full, means)
            mixed = dict(means)
            for per_budget in left:
                mixed.update(per_budget[k])
            l_b, l_ap = _taus(full, mixed) if layout.logo else (None, None)
            all_means[(describe(strategy), b)], all_logo[(describe(strategy), b)] = means, mixed
            rows.append({
                "strategy": describe(strategy), "budget": b,
                "n_judged": sum(cuts[k].values()),
                "relevant_found": found,
                "relevant_fraction": found / total_relevant if total_relevant else 0.0,
                "tau_b": t_b, "tau_ap": t_ap, "logo_tau_b": l_b, "logo_tau_ap": l_ap,
            })
    context = {"n_runs": len(run_tags), "n_groups": len(layout.left_out),
               "n_topics": complete.n_topics, "relevant_total": total_relevant, "full_means": full,
               "means": all_means, "logo_means": all_logo}
    return rows, context


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


def _pooled_sets(shared: tuple[Any, ...], unit: tuple[int, int | None]
                 ) -> list[tuple[list[dict[str, int]], list[Subset]]]:
    """The k-th strategy's cuts at every budget and the pooled subsets they judge: of its
    orders over all runs (`unit` = (k, None)), or of its orders without each group of the
    p-th part of the groups in turn (`unit` = (k, p)). Pure over the loaded data: a worker
    process can make them."""
    scores, topics, topic_order, qrels, strategies, budgets, per_topic, layout = shared
    k, part = unit
    strategy, limit = strategies[k], max(budgets)
    order_sets = ([orders_for_budget(strategy, topics, qrels, limit, per_topic)]
                  if part is None else
                  _left_out_orders(strategy, topics, qrels, limit, per_topic,
                                   layout.part(part)))
    made = []
    for orders in order_sets:
        cuts = [cut_lengths(_lengths(orders), b, per_topic, topic_order) for b in budgets]
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
