"""The hidden truth: which document version is how relevant to which topic, and what the
simulated assessor says about it (the truth with a little seeded disagreement).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcdb.collections.sources.records import QrelRecord

HIDDEN_SHARE = 0.35  # share of relevant documents a lexical ranker cannot see


@dataclass
class Truth:
    """The hidden state: who is where, which version, and how relevant, per snapshot."""

    seed: int
    disagreement: float
    labels: list[str]
    present: np.ndarray  # (J, U) bool: document in snapshot
    version: np.ndarray  # (J, U) int8: how often the document was rewritten by then
    doc_ids: np.ndarray  # (J, U) int64: external id, -1 when absent
    urls: list[str]  # (U,)
    topic_present: np.ndarray  # (J, T) bool
    topic_ids: list[list[str | None]]  # [J][T]
    queries: list[str]  # (T,)
    candidates: np.ndarray  # (T, K) document indices
    grades: np.ndarray  # (J, T, K) int8: the truth
    hidden: np.ndarray  # (T, K) bool: relevance a lexical ranker cannot see
    sorted_candidates: np.ndarray = field(init=False)
    candidate_order: np.ndarray = field(init=False)
    by_query: dict[str, int] = field(init=False)
    by_topic_id: dict[str, tuple[int, int]] = field(init=False)
    by_url: dict[str, int] = field(init=False)
    by_doc_id: dict[str, tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        from tcdb.collections.topics.formats import normalise_query

        self.candidate_order = np.argsort(self.candidates, axis=1, kind="stable")
        self.sorted_candidates = np.take_along_axis(self.candidates, self.candidate_order, 1)
        self.by_query = {normalise_query(q): t for t, q in enumerate(self.queries)}
        self.by_topic_id = {
            tid: (t, j)
            for j, ids in enumerate(self.topic_ids)
            for t, tid in enumerate(ids)
            if tid is not None
        }
        self.by_url = {url: d for d, url in enumerate(self.urls)}
        self.by_doc_id = {}
        for j in range(len(self.labels)):
            docs = np.flatnonzero(self.present[j])
            for d, doc_id in zip(docs.tolist(), self.doc_ids[j, docs].tolist(), strict=True):
                self.by_doc_id[str(doc_id)] = (d, j)  # the latest snapshot holding the id wins

    def resolve(self, topic: str, doc: str, snapshot: str | None) -> tuple[int, int, int]:
        """(snapshot index, topic index, document index) for external names."""
        from tcdb.collections.topics.formats import normalise_query

        j_hint: int | None = None
        if topic in self.by_topic_id:
            t, j_hint = self.by_topic_id[topic]
        elif normalise_query(topic) in self.by_query:
            t = self.by_query[normalise_query(topic)]
        else:
            raise KeyError(f"unknown topic {topic!r} (neither a topic id nor a query text)")
        if doc in self.by_doc_id:
            d, j_doc = self.by_doc_id[doc]
            j_hint = j_doc if j_hint is None else j_hint
        elif doc in self.by_url:
            d = self.by_url[doc]
        else:
            raise KeyError(f"unknown document {doc!r} (neither a document id nor a URL)")
        if snapshot is not None:
            if snapshot not in self.labels:
                raise KeyError(f"unknown snapshot {snapshot!r} (known: {', '.join(self.labels)})")
            j = self.labels.index(snapshot)
        elif j_hint is not None:
            j = j_hint
        else:
            held = np.flatnonzero(self.present[:, d])
            j = int(held[-1]) if len(held) else len(self.labels) - 1
        return j, t, d

    def grade(self, j: int, t: int, d: int) -> int:
        """The true grade of document d (as it is in snapshot j) for topic t."""
        row = self.sorted_candidates[t]
        pos = int(np.searchsorted(row, d))
        if pos >= len(row) or row[pos] != d:
            return 0
        return int(self.grades[j, t, self.candidate_order[t, pos]])

    def assess(self, grades: np.ndarray, t: np.ndarray, d: np.ndarray,
               version: np.ndarray) -> np.ndarray:
        """What the simulated assessor says: the truth, off by one grade now and then.

        The disagreement is a hash of (seed, topic, document, version), so the same assessor
        asked twice about the same document version answers the same.
        """
        h = mix(np.uint64(self.seed), t, d, version)
        flip = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53 < self.disagreement
        up = (h & np.uint64(1)).astype(bool)
        grades = np.asarray(grades, dtype=np.int8)
        changed = np.where(grades == 0, 1, np.where(grades == 2, 1, np.where(up, 2, 0)))
        return np.where(flip, changed, grades).astype(np.int8)

    def assess_one(self, grade: int, t: int, d: int, version: int) -> int:
        """`assess` for one judgment, in plain Python (same hash, same answer)."""
        h = mix_one(self.seed, t, d, version)
        if (h >> 11) * 2.0**-53 >= self.disagreement:
            return grade
        if grade != 1:
            return 1
        return 2 if h & 1 else 0


MASK = (1 << 64) - 1


def mix_one(seed: int, *keys: int) -> int:
    """`mix` for one tuple of Python ints (the assessor answers one question at a time)."""
    h = seed
    for key in keys:
        h = (h + 0x9E3779B97F4A7C15 + key) & MASK
        h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & MASK
        h ^= h >> 31
    return h


def mix(seed: np.uint64, *keys: np.ndarray) -> np.ndarray:
    """splitmix64 over a tuple of non-negative integer arrays: a seeded, vectorised hash."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    h = np.full(np.broadcast(*keys).shape, seed, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for key in keys:
            h = h + golden + np.asarray(key).astype(np.uint64)
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return h


def draw_relevance(rng: np.random.Generator, candidates: np.ndarray,
                   sets: list[dict[str, np.ndarray]], n_snap: int) -> tuple[np.ndarray, np.ndarray]:
    """Graded truth per (snapshot, topic, candidate): rewrites may change a document's grade."""
    n_topics, n_cand = candidates.shape
    n_rel = rng.integers(8, 41, n_topics)
    n_rel = np.minimum(n_rel, n_cand // 4)
    first = np.zeros((n_topics, n_cand), dtype=np.int8)
    is_rel = np.arange(n_cand)[None, :] < n_rel[:, None]
    two = rng.random((n_topics, n_cand)) < 0.3
    first[is_rel] = np.where(two[is_rel], 2, 1)
    hidden = rng.random((n_topics, n_cand)) < HIDDEN_SHARE
    grades = np.zeros((n_snap, n_topics, n_cand), dtype=np.int8)
    grades[0] = first
    universe = int(candidates.max()) + 1
    for j in range(1, n_snap):
        rewritten = np.zeros(max(universe, 1), dtype=bool)
        rewritten[sets[j - 1]["rewritten"]] = True
        hit = rewritten[candidates]
        current = grades[j - 1].copy()
        draw = rng.random((n_topics, n_cand))
        regrade = hit & (current > 0) & (draw < 0.4)
        becomes = hit & (current == 0) & (draw < 0.015)
        new_grade = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=(n_topics, n_cand),
                               p=[0.5, 0.35, 0.15])
        current[regrade] = new_grade[regrade]
        current[becomes] = np.where(new_grade[becomes] == 2, 2, 1)
        grades[j] = current
    return grades, hidden


def original_qrels(truth: Truth, j: int,
                   rankings: list[list[tuple[int, np.ndarray, np.ndarray]]],
                   contributing: list[int], pool_depth: int) -> list[QrelRecord]:
    """Judge the depth-k pool of the contributing runs, per topic, with the simulated assessor."""
    records: list[QrelRecord] = []
    ids = truth.doc_ids[j]
    for i, (t, _docs, _score) in enumerate(rankings[contributing[0]]):
        pooled = np.unique(np.concatenate([rankings[s][i][1][:pool_depth] for s in contributing]))
        pos = np.searchsorted(truth.sorted_candidates[t], pooled)
        grade = truth.grades[j, t, truth.candidate_order[t, pos]]
        judged = truth.assess(grade, np.full(len(pooled), t), pooled, truth.version[j, pooled])
        topic_id = truth.topic_ids[j][t]
        assert topic_id is not None
        records.extend(
            QrelRecord(topic_id, str(doc), int(g))
            for doc, g in zip(ids[pooled].tolist(), judged.tolist(), strict=True)
        )
    return records
