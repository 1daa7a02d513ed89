"""Runs scored on many pooled qrels sets at once: every (strategy, budget, left-out group) of a
simulation, with one ir_measures call per few million run entries instead of one per set.

Every pooled set is a subset of one complete qrels set, and trec_eval scores each query on its
own. So each distinct subset of a topic is scored as a query of its own: each (run, subset)
gets a synthetic query id ("subset:run") whose judgments are the subset's and whose ranking is
the run's for the topic, all in one evaluator, and the value is the one ir_measures gives that
run on that subset alone. Equal subsets of a topic (budgets past saturation, the complete
qrels, strategies and left-out groups that pool alike) are scored once per run.

For measures that depend only on the relevant documents (AP, nDCG, RR, R-prec, P@k, R@k,
Success@k) a run is cut after its lowest-scored document relevant in the subset (the argument
of `cut_after_last_relevant`, per subset) and given to trec_eval in score order, its documents
renamed by rank in a way that keeps every value (`PooledScores._run`); and,
unless the measure skips unjudged documents (judged_only), two subsets with the same documents
of non-zero grade score alike, so they are one query, without the judged grade-0 documents —
a subset without such documents is no query: a topic without a value counts 0 in the mean, as
its value 0 would. Other measures see every judged document and the runs whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from tcdb.analysis.means import trec_eval_mean

RunDict = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]
# A pooled subset: per topic its judged documents that count (codes), and the relevant found.
Subset = tuple[list[tuple[str, np.ndarray]], int]

# Measures whose value depends only on where the relevant documents are and how many there are:
# documents ranked below a run's last relevant one cannot change them.
RELEVANT_ONLY = ("AP", "nDCG", "RR", "Rprec", "R", "P", "Success")
ENTRIES_PER_CALL = 3_000_000  # run entries scored by one evaluator call (memory, not speed)


def relevant_only(measure: str) -> bool:
    """Whether `measure` is one of `RELEVANT_ONLY` (P only with a cutoff; not with gains of
    its own, which may count a grade 0) and computed by pytrec_eval, whose tie order (score,
    then document id descending) the renaming by rank keeps; another provider (RR@k's msmarco)
    may break ties otherwise, so its runs stay whole and keep their names."""
    import ir_measures

    from tcdb.scoring.measures import provider_of

    parsed = ir_measures.parse_measure(measure)
    return (parsed.NAME in RELEVANT_ONLY and (parsed.NAME != "P" or "cutoff" in parsed.params)
            and parsed.params.get("gains") is None and provider_of(parsed) == "pytrec_eval")


def judged_only(measure: str) -> bool:
    """Whether `measure` skips unjudged documents: then a judged grade 0 counts."""
    import ir_measures

    return bool(ir_measures.parse_measure(measure).params.get("judged_only"))


class PooledScores:
    """Collects pooled subsets (`add`), scores them all on first use, gives means (`means`)."""

    def __init__(self, runs: Mapping[str, RunDict], qrels: Qrels, measure: str, n_topics: int,
                 workers: int = 1) -> None:
        self.runs, self.qrels, self.measure, self.n_topics = runs, qrels, measure, n_topics
        self.workers = workers  # processes scoring shares of the topics (1: this one)
        self.relevant_only = relevant_only(measure)
        self.drop_zero = self.relevant_only and not judged_only(measure)
        self.names = {t: list(g) for t, g in qrels.items()}
        # the judged documents as named where a run lacks them (`_run`): "~" and the id
        self.absent = {t: ["~" + d for d in g] for t, g in qrels.items()}
        self.code_of = {t: {d: i for i, d in enumerate(g)} for t, g in qrels.items()}
        self.grades = {t: np.fromiter(g.values(), dtype=np.int64, count=len(g))
                       for t, g in qrels.items()}
        self.keys: dict[str, dict[bytes, int]] = {}  # per topic: subset → query
        # query → (topic, its documents, those of them with a grade above 0), as codes
        self.queries: list[tuple[str, np.ndarray, np.ndarray]] = []
        self.wanted: dict[str, dict[int, None]] = {}  # per run: its queries not scored yet
        self.values: dict[tuple[str, int], float] = {}
        self.sets: list[tuple[tuple[str, ...], list[int]]] = []  # handle → (runs, queries)
        self.labels: list[str] = []

    def add(self, orders: Mapping[str, Sequence[str] | np.ndarray],
            cuts: Sequence[Mapping[str, int]], tags: Sequence[str]) -> list[tuple[int, int]]:
        """For each cut (per topic, how many of its order are judged): a handle to the means of
        the runs `tags` on that pooled subset, and how many relevant documents it holds."""
        return self.add_subsets(self.subsets(orders, cuts), tags)

    def subsets(self, orders: Mapping[str, Sequence[str] | np.ndarray],
                cuts: Sequence[Mapping[str, int]]) -> list[Subset]:
        """For each cut, the pooled subset it judges — per topic the judged documents that
        count (as sorted codes into the complete qrels) — and the relevant documents in it.
        Reads only the complete qrels: a worker process can do it (`add_subsets` then keeps
        it here)."""
        longest = {t: max((c.get(t, 0) for c in cuts), default=0) for t in orders}
        codes = {t: self._codes(t, orders[t][:n]) for t, n in longest.items()
                 if n and t in self.code_of}
        result = []
        for lengths in cuts:
            judged_sets, found = [], 0
            for topic, n in lengths.items():
                if not n or topic not in codes:
                    continue
                judged = codes[topic][:n]
                judged = _sorted_set(judged[judged >= 0])  # the subset's key
                grades = self.grades[topic][judged]
                found += int(np.count_nonzero(grades >= 1))
                if self.drop_zero:
                    judged = judged[grades != 0]
                if len(judged):
                    judged_sets.append((topic, judged))
            result.append((judged_sets, found))
        return result

    def add_subsets(self, subsets: Sequence[Subset], tags: Sequence[str]
                    ) -> list[tuple[int, int]]:
        """`add` for subsets made by `subsets`."""
        result = []
        for judged_sets, found in subsets:
            queries = [self._query(topic, judged) for topic, judged in judged_sets]
            for tag in tags:
                wanted = self.wanted.setdefault(tag, {})
                for q in queries:
                    if (tag, q) not in self.values:
                        wanted[q] = None
            self.sets.append((tuple(tags), queries))
            result.append((len(self.sets) - 1, found))
        return result

    def _codes(self, topic: str, docs: Sequence[str] | np.ndarray) -> np.ndarray:
        """The documents' places in the topic's complete qrels (-1: not judged)."""
        return np.fromiter(map(self.code_of[topic].get, docs, itertools.repeat(-1)),
                           dtype=np.int64, count=len(docs))

    def _query(self, topic: str, judged: np.ndarray) -> int:
        key = judged.tobytes()
        known = self.keys.setdefault(topic, {})
        if key not in known:
            known[key] = len(self.queries)
            self.queries.append((topic, judged, judged[self.grades[topic][judged] > 0]))
        return known[key]

    def means(self, handle: int) -> dict[str, float]:
        """The runs' means (trec_eval -c over the complete qrels' topics) on a pooled subset."""
        if any(self.wanted.values()):
            self._score()
        tags, queries = self.sets[handle]
        return {tag: trec_eval_mean([self.values[(tag, q)] for q in queries
                                     if (tag, q) in self.values], self.n_topics)
                for tag in tags}

    def _score(self) -> None:
        """Every wanted (run, query): topic by topic here, or, with `workers` above 1, shares
        of the topics in worker processes (`tcdb.workers`) — trec_eval scores each query on its
        own, so a topic's values need nothing from another topic's."""
        from tcdb.workers import run_in_processes

        tags = list(self.wanted)
        by_topic: dict[str, dict[int, list[int]]] = {}
        for i, tag in enumerate(tags):
            for q in self.wanted[tag]:
                by_topic.setdefault(self.queries[q][0], {}).setdefault(i, []).append(q)
        self.wanted = {}
        shares = self._shares(tags, by_topic)
        if len(shares) < 2:
            found = self._score_topics(tags, by_topic, sorted(by_topic))
        else:
            found = {}
            for _, values in run_in_processes(_score_share, shares, self.workers,
                                              shared=(self, tags, by_topic)):
                found.update(values)
        self.values.update(found)

    def _shares(self, tags: list[str], by_topic: dict[str, dict[int, list[int]]]
                ) -> list[list[str]]:
        """The topics in up to 4 shares per worker of about equal work (a topic's run entries
        times its queries per run), the largest topics first to the lightest share."""
        from tcdb.workers import share_out

        if self.workers < 2 or len(by_topic) < 2:
            return [sorted(by_topic)]
        work = {topic: sum(len(queries) * len(self.runs.get(tags[i], {}).get(topic, ()))
                           for i, queries in per_run.items())
                for topic, per_run in by_topic.items()}
        return share_out(work, 4 * self.workers)

    def _score_topics(self, tags: list[str], by_topic: dict[str, dict[int, list[int]]],
                      topics: list[str]) -> dict[tuple[str, int], float]:
        """The wanted (run, query) values of `topics`, each (run, query) a query of its own
        ("query:run"); one evaluator and one call per `ENTRIES_PER_CALL` run entries or so
        (they are all in memory at once)."""
        import ir_measures

        parsed = ir_measures.parse_measure(self.measure)
        found: dict[tuple[str, int], float] = {}
        qrels: Qrels = {}
        run: RunDict = {}
        size = 0
        for topic in topics:
            judgments: dict[int, dict[str, int]] = {}
            for i, queries in by_topic[topic].items():
                for q, (docs, judged) in self._run(tags[i], topic, queries).items():
                    if judged is None:  # the subset's own judgments, shared by every run
                        if q not in judgments:
                            judgments[q] = self._judgments(topic, self.queries[q][1])
                        judged = judgments[q]
                    qrels[f"{q}:{i}"] = judged
                    run[f"{q}:{i}"] = docs
                    size += len(docs)
            if size >= ENTRIES_PER_CALL:
                _evaluate(ir_measures.evaluator([parsed], qrels), run, tags, found)
                qrels, run, size = {}, {}, 0
        if run:
            _evaluate(ir_measures.evaluator([parsed], qrels), run, tags, found)
        return found

    def _judgments(self, topic: str, judged: np.ndarray) -> dict[str, int]:
        names, grades = self.names[topic], self.grades[topic]
        return {names[c]: int(grades[c]) for c in judged.tolist()}

    def _run(self, tag: str, topic: str, queries: list[int]
             ) -> dict[int, tuple[dict[str, float], dict[str, int] | None]]:
        """The run's topic for each query, and the query's judgments when they are the run's
        own (None: the subset's, shared).

        Whole, for most measures. For relevant-only ones, cut after its lowest-scored document
        relevant in the query's subset and renamed: each document by its place in score order
        (ties by id, as bytes compare), the subset's documents alike (those the run lacks keep
        their id, behind a "~"). trec_eval reads a document id only to match it with the
        judgments and to order tied scores, and the renaming keeps both; its sorts then find
        the run already in order, which saves a third of its time.
        """
        docs = self.runs.get(tag, {}).get(topic)
        if not docs:
            return {}
        if not self.relevant_only:
            return {q: (docs, None) for q in queries}
        names, falling = _score_order(docs)
        codes = self._codes(topic, names)
        position = np.full(len(self.names[topic]), -1, dtype=np.int64)
        position[codes[codes >= 0]] = np.flatnonzero(codes >= 0)
        # every document scored at least as high as the last relevant one; none relevant:
        # the top one (a value of 0 either way)
        relevant = [self.queries[q][2] for q in queries]
        sizes = np.fromiter(map(len, relevant), dtype=np.int64, count=len(relevant))
        last = np.full(len(queries), -1, dtype=np.int64)  # each query's last relevant place
        some = sizes > 0
        if some.any():
            starts = np.concatenate(([0], np.cumsum(sizes[some])[:-1]))
            last[some] = np.maximum.reduceat(position[np.concatenate(relevant)], starts)
        ends = np.searchsorted(falling, falling[last], side="right")
        length = dict(zip(queries, np.where(last >= 0, ends, 1).tolist(), strict=True))
        # each prefix once, the longer ones a copy of the shorter one and the documents after
        labels, values = self._labels(len(names)), (-falling).tolist()
        prefixes: dict[int, dict[str, float]] = {}
        current: dict[str, float] = {}
        for n in sorted(set(length.values())):
            current = current.copy()
            current.update(zip(labels[len(current):n], values[len(current):n], strict=True))
            prefixes[n] = current
        absent, grades = self.absent[topic], self.grades[topic]
        run: dict[int, tuple[dict[str, float], dict[str, int] | None]] = {}
        for q, n in length.items():
            judged = self.queries[q][1]
            run[q] = (prefixes[n], {labels[p] if p >= 0 else absent[c]: g for p, c, g in zip(
                position[judged].tolist(), judged.tolist(), grades[judged].tolist(),
                strict=True)})
        return run

    def _labels(self, n: int) -> list[str]:
        """"0000000", "0000001", …: at least `n` of them, one string each, shared by all."""
        if len(self.labels) < n:
            self.labels += [f"{i:07d}" for i in range(len(self.labels), max(n, 1024))]
        return self.labels


def _sorted_set(codes: np.ndarray) -> np.ndarray:
    """`np.unique(codes)` — sorted, each once — for a judging order, whose documents are
    distinct: one sort, and `np.unique` only if some code repeats."""
    codes = np.sort(codes)
    return np.unique(codes) if np.any(codes[1:] == codes[:-1]) else codes


def _score_order(docs: dict[str, float]) -> tuple[list[str], np.ndarray]:
    """The run's documents by score descending, then id ascending (as bytes compare: code
    points, as Python compares), and their scores negated (rising). Scores rarely tie, so one
    numeric sort does; with ties, one sort by (score, id) of the Python values."""
    ids, values = list(docs), list(docs.values())
    negated = -np.array(values, dtype=float)
    order = np.argsort(negated, kind="stable")
    falling = negated[order]
    if np.any(falling[1:] == falling[:-1]):
        order = np.array(sorted(range(len(ids)), key=lambda i: (-values[i], ids[i])))
        falling = negated[order]
    return [ids[i] for i in order.tolist()], falling


def _evaluate(evaluator: Any, run: RunDict, tags: list[str],
              found: dict[tuple[str, int], float]) -> None:
    """One ir_measures call; each value under its (run tag, query)."""
    for metric in evaluator.iter_calc(run):
        if metric.query_id in run:
            q, i = map(int, metric.query_id.split(":"))
            found[(tags[i], q)] = float(metric.value)


def _score_share(shared: tuple[PooledScores, list[str], dict[str, dict[int, list[int]]]],
                 topics: list[str]) -> dict[tuple[str, int], float]:
    """In a worker: the values of one share of the topics."""
    scores, tags, by_topic = shared
    return scores._score_topics(tags, by_topic, topics)
