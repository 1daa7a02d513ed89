"""A deterministic LongEval-shaped demo collection whose right answers are known in advance.

Why: `tcdb demo` must teach what tcdb does on data where the truth is known, and the tests need
the same data small. `generate_demo` builds, from one seed (a numpy Generator, so the same seed
writes the same bytes):

* three monthly ``longeval-web`` snapshots (2022-06, 2022-07, 2022-09) with churn between
  consecutive ones — documents removed, added and rewritten (rewritten ones get a new numeric id,
  a few unchanged ones are re-numbered, URLs always stay: the collection's doc identity is
  ``url``) — written in the on-disk layout ir-datasets-longeval reads (`write_longeval_web`)
  under ``out_dir/ir_datasets``, so they are ingested through ``--irds longeval-web/<label>``;
* topics that drift: kept ones re-numbered with the same text (topic identity ``text``), a few
  dropped, a few new;
* a hidden relevance truth per (topic, document version), and "original" graded qrels built as a
  campaign would: a depth-`pool_depth` pool over the *contributing* runs, judged by a simulated
  assessor (the truth with a little seeded disagreement). Relevant documents that only
  non-contributing runs rank high stay unjudged;
* ten systems with planted behaviour (`SYSTEMS`): a BM25-like pivot, one whose advantage over it
  persists (ER ≈ 1), one that decays (ER < 0.8), one that improves (ER > 1.2), noisy ones, and a
  "magical" non-contributing manual run that finds relevant documents sharing no words with the
  query (vocabulary mismatch), which the lexical runs never rank high, so the pools never saw
  them. Depth-`depth` TREC runs go to ``out_dir/runs/<label>/<tag>.run``; tags are stable across
  snapshots (system = tag).

How a run is made: per topic, each system scores a fixed candidate set (the topic's relevant
documents plus lexical look-alikes) as ``strength × grade + shared noise + own noise`` and keeps
the top `depth` documents present in the snapshot. The noise of a (system, topic, document) is
drawn once and reused in every snapshot, so per-topic differences between systems persist unless
the planted strength changes — which is what makes the planted effect ratios come out clean.

Everything is vectorised; the default size (20,000 documents, 100 topics, 10 runs of depth 1,000
in three snapshots) takes a few seconds, most of it writing three million run lines.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from .records import DocumentRecord, QrelRecord, TopicRecord

__all__ = [
    "DEMO_COLLECTION",
    "DEMO_SNAPSHOTS",
    "PIVOT",
    "SYSTEMS",
    "ChurnCounts",
    "DemoCollection",
    "DemoSnapshot",
    "DemoSystem",
    "TopicDrift",
    "generate_demo",
]

DEMO_COLLECTION = "longeval-web"
DEMO_SNAPSHOTS: tuple[tuple[str, date], ...] = (
    ("2022-06", date(2022, 6, 1)),
    ("2022-07", date(2022, 7, 1)),
    ("2022-09", date(2022, 9, 1)),
)
PIVOT = "bm25"
MANIFEST = "demo.json"


@dataclass(frozen=True)
class DemoSystem:
    """One planted system: what it is meant to show and how its runs are drawn."""

    tag: str
    planted: str  # pivot | baseline | persistent | decaying | improving | noisy | magical
    contributing: bool  # its runs fed the pools of the original qrels
    group: str
    category: str  # lexical | neural | llm
    manual: bool
    strength: tuple[float, float, float]  # weight of the relevance it sees, per snapshot
    noise: float  # scale of its own noise (the shared noise has scale 1)
    hidden: float = 0.0  # weight of relevance hidden from lexical matching (only the magical run)
    like_pivot: float = 0.0  # share of its noise taken from the pivot's (a variant of the pivot)
    description: str = ""


SYSTEMS: tuple[DemoSystem, ...] = (
    DemoSystem("bm25", "pivot", True, "lexical-lab", "lexical", False, (1.0, 1.0, 1.0), 0.8,
               description="BM25-like pivot every other system is compared with"),
    DemoSystem("qlm", "baseline", True, "lexical-lab", "lexical", False, (0.85, 0.85, 0.85), 0.8,
               like_pivot=0.6, description="query likelihood: a slightly weaker lexical baseline"),
    DemoSystem("rm3-steady", "persistent", True, "lexical-lab", "lexical", False,
               (1.35, 1.35, 1.35), 0.8, like_pivot=0.95,
               description="query expansion whose advantage over the pivot persists (ER ≈ 1)"),
    DemoSystem("dense-decay", "decaying", True, "dense-lab", "neural", False,
               (1.5, 1.25, 1.22), 0.8, like_pivot=0.5,
               description="dense retriever trained on 2022-06 data: its advantage halves"),
    DemoSystem("rerank-rise", "improving", True, "llm-lab", "llm", False, (1.2, 1.42, 1.6),
               0.8, like_pivot=0.5, description="LLM re-ranker whose advantage keeps growing"),
    DemoSystem("noisy-a", "noisy", True, "noisy-lab", "lexical", False, (1.1, 0.95, 1.2), 1.2,
               description="noisy lexical variant"),
    DemoSystem("noisy-b", "noisy", True, "noisy-lab", "neural", False, (0.95, 1.2, 1.05), 1.2,
               description="noisy neural variant"),
    DemoSystem("noisy-c", "noisy", False, "noisy-lab", "lexical", False, (1.2, 1.0, 0.95), 1.2,
               description="noisy run that did not contribute to the pools"),
    DemoSystem("noisy-d", "noisy", False, "noisy-lab", "neural", False, (0.9, 1.1, 1.15), 1.2,
               description="noisy run that did not contribute to the pools"),
    DemoSystem("magic", "magical", False, "magic-lab", "llm", True, (0.9, 0.9, 0.9), 0.8,
               hidden=3.0,
               description="manual run that finds relevant documents the pools never saw"),
)

_SIGNAL = 1.1  # grade → score units; with noise of scale ~1 the pivot's nDCG@10 is ≈ 0.35
_SHARED = 0.6  # weight of the noise every system shares (lexical look-alikes fool them all)
_HIDDEN_SHARE = 0.35  # share of relevant documents a lexical ranker cannot see
_CANDIDATES = 1.45  # candidates per topic, as a multiple of the run depth

# A small French web vocabulary for queries and the readable part of documents.
_VOCABULARY = """
assurance auto voiture prix location vacances hotel plage montagne ski train billet avion
vol horaire meteo recette cuisine gateau chocolat pain fromage vin restaurant menu livraison
pizza banque credit pret immobilier maison appartement loyer achat vente travaux jardin
piscine meuble cuisine salle bain chauffage energie electricite gaz facture impots retraite
emploi salaire formation ecole universite concours permis conduire sante medecin pharmacie
hopital vaccin dentiste lunettes sport football tennis velo course marathon musique concert
festival cinema film serie livre bibliotheque musee exposition mariage naissance anniversaire
cadeau jouet enfant bebe chien chat veterinaire animal telephone mobile forfait internet
ordinateur logiciel jeu console photo camera mode robe chaussures sac bijoux parfum beaute
coiffure mairie prefecture passeport carte identite justice avocat divorce heritage notaire
paris lyon marseille bordeaux lille nantes toulouse bretagne normandie alsace provence corse
"""
_WORDS = list(dict.fromkeys(_VOCABULARY.split()))
_ONSETS = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "ch", "tr", "pl"]
_NUCLEI = ["a", "e", "i", "o", "u", "ou", "ai", "eu"]


@dataclass(frozen=True)
class ChurnCounts:
    """Document churn from the previous snapshot to this one, by URL (the document's identity)."""

    removed: int  # URLs gone
    added: int  # new URLs
    rewritten: int  # same URL, new text (and a new id)
    renumbered: int  # same URL and text, new id
    unchanged: int  # same URL, text and id


@dataclass(frozen=True)
class TopicDrift:
    """Topic drift from the previous snapshot: kept topics keep their text but get a new id."""

    kept: int
    dropped: int
    added: int


@dataclass(frozen=True)
class DemoSnapshot:
    """One generated snapshot and where its files are."""

    label: str
    date: date
    irds_id: str
    n_documents: int
    n_topics: int
    n_judgments: int
    qrels_path: Path
    run_paths: dict[str, Path]  # tag → TREC run file


@dataclass
class _Truth:
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
        from .topics import normalise_query

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
        from .topics import normalise_query

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
        h = _mix(np.uint64(self.seed), t, d, version)
        flip = (h >> np.uint64(11)).astype(np.float64) * 2.0**-53 < self.disagreement
        up = (h & np.uint64(1)).astype(bool)
        grades = np.asarray(grades, dtype=np.int8)
        changed = np.where(grades == 0, 1, np.where(grades == 2, 1, np.where(up, 2, 0)))
        return np.where(flip, changed, grades).astype(np.int8)

    def assess_one(self, grade: int, t: int, d: int, version: int) -> int:
        """`assess` for one judgment, in plain Python (same hash, same answer)."""
        h = _mix_one(self.seed, t, d, version)
        if (h >> 11) * 2.0**-53 >= self.disagreement:
            return grade
        if grade != 1:
            return 1
        return 2 if h & 1 else 0


_MASK = (1 << 64) - 1


def _mix_one(seed: int, *keys: int) -> int:
    """`_mix` for one tuple of Python ints (the assessor answers one question at a time)."""
    h = seed
    for key in keys:
        h = (h + 0x9E3779B97F4A7C15 + key) & _MASK
        h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & _MASK
        h ^= h >> 31
    return h


def _mix(seed: np.uint64, *keys: np.ndarray) -> np.ndarray:
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


@dataclass
class DemoCollection:
    """What `generate_demo` wrote, the planted expectations, and the hidden truth to judge with."""

    out_dir: Path
    seed: int
    ir_datasets_home: Path  # set IR_DATASETS_HOME to this before ingesting
    snapshots: list[DemoSnapshot]
    systems: list[DemoSystem]
    churn: dict[str, ChurnCounts]  # keyed by the later snapshot's label
    topic_drift: dict[str, TopicDrift]  # keyed by the later snapshot's label
    depth: int
    pool_depth: int
    manifest_path: Path
    name: str = DEMO_COLLECTION
    doc_identity: str = "url"
    topic_identity: str = "text"
    pivot: str = PIVOT
    reused: bool = False  # True when matching files from an earlier run were kept as they were
    _truth: _Truth | None = field(default=None, repr=False)

    @property
    def labels(self) -> list[str]:
        """Snapshot labels in time order."""
        return [s.label for s in self.snapshots]

    @property
    def planted(self) -> dict[str, str]:
        """system → planted behaviour (pivot, persistent, decaying, improving, noisy, magical…)."""
        return {s.tag: s.planted for s in self.systems}

    @property
    def contributing(self) -> list[str]:
        """Tags of the systems whose runs fed the original pools."""
        return [s.tag for s in self.systems if s.contributing]

    def snapshot(self, label: str) -> DemoSnapshot:
        """The generated snapshot with this label."""
        for snap in self.snapshots:
            if snap.label == label:
                return snap
        raise KeyError(f"unknown snapshot {label!r} (known: {', '.join(self.labels)})")

    def run_path(self, label: str, tag: str) -> Path:
        """The TREC run file of system `tag` in snapshot `label`."""
        return self.snapshot(label).run_paths[tag]

    def truth(self, topic: str, doc: str, snapshot: str | None = None) -> int:
        """The hidden true grade (0/1/2) of a document for a topic, without disagreement.

        `topic` is a topic id of any snapshot or a query text; `doc` a document id or a URL.
        Without `snapshot`, the snapshot named by the topic id (else the document id, else the
        latest snapshot holding the document) says which version of the document is meant.
        """
        truth = self._require_truth()
        j, t, d = truth.resolve(topic, doc, snapshot)
        return truth.grade(j, t, d)

    def judge(self, topic: str, doc: str, snapshot: str | None = None) -> int:
        """A simulated assessor's grade: the truth with a little seeded disagreement.

        Deterministic: the same (topic, document version) always gets the same answer, the same
        one the original qrels hold where they judged it.
        """
        truth = self._require_truth()
        j, t, d = truth.resolve(topic, doc, snapshot)
        return truth.assess_one(truth.grade(j, t, d), t, d, int(truth.version[j, d]))

    def relevant(self, label: str, topic_id: str) -> dict[str, int]:
        """The hidden truth of one topic in one snapshot: external doc id → grade > 0."""
        truth = self._require_truth()
        j = self.labels.index(label)
        t, j_topic = truth.by_topic_id[topic_id]
        if j_topic != j:
            raise KeyError(f"topic {topic_id!r} belongs to snapshot {self.labels[j_topic]!r}")
        docs = truth.candidates[t]
        keep = (truth.grades[j, t] > 0) & truth.present[j, docs]
        ids = truth.doc_ids[j, docs[keep]]
        return {str(i): int(g) for i, g in zip(ids.tolist(), truth.grades[j, t][keep].tolist(),
                                               strict=True)}

    def _require_truth(self) -> _Truth:
        if self._truth is None:  # pragma: no cover - always set by generate_demo
            raise RuntimeError("this DemoCollection carries no hidden truth")
        return self._truth


@contextmanager
def _steps(enabled: bool, total: int) -> Iterator[Any]:
    """A rich progress bar over the generator's steps, or a no-op."""
    if not enabled:
        yield lambda description: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("demo: generating", total=total)

        def advance(description: str) -> None:
            bar.update(task, advance=1, description=f"demo: {description}")

        yield advance


def generate_demo(
    out_dir: Path,
    seed: int = 42,
    n_documents: int = 20_000,
    n_topics: int = 100,
    depth: int = 1000,
    *,
    pool_depth: int = 20,
    removed: float = 0.06,
    added: float = 0.06,
    rewritten: float = 0.10,
    renumbered: float = 0.02,
    topics_dropped: float = 0.05,
    topics_added: float = 0.05,
    disagreement: float = 0.05,
    reuse: bool = True,
    progress: bool = False,
) -> DemoCollection:
    """Write the demo collection under `out_dir` and return what it holds; same seed, same bytes.

    Churn rates are shares of the previous snapshot (`removed`, `added`, `rewritten` of the
    surviving documents, `renumbered` of the surviving unchanged ones); topic rates likewise.
    Earlier output under ``out_dir/ir_datasets`` and ``out_dir/runs`` is replaced — unless
    `reuse` and ``demo.json`` says the files there were generated with the same parameters and
    they are unchanged: then nothing is written (`DemoCollection.reused`), so their mtimes, and
    with them the ingest fingerprints, stay as they were and a second `tcdb demo` is a no-op.
    The hidden truth is rebuilt in memory either way.
    """
    _check_parameters(n_documents, n_topics, depth, pool_depth,
                      (removed, added, rewritten, renumbered, topics_dropped, topics_added,
                       disagreement))
    out_dir = Path(out_dir)
    parameters: dict[str, Any] = {
        "seed": seed, "n_documents": n_documents, "n_topics": n_topics, "depth": depth,
        "pool_depth": pool_depth, "removed": removed, "added": added, "rewritten": rewritten,
        "renumbered": renumbered, "topics_dropped": topics_dropped,
        "topics_added": topics_added, "disagreement": disagreement,
    }
    reused = reuse and _unchanged_output(out_dir, parameters)
    home = out_dir / "ir_datasets"
    rng = np.random.default_rng(seed)
    n_snap = len(DEMO_SNAPSHOTS)
    labels = [label for label, _ in DEMO_SNAPSHOTS]
    with _steps(progress, 5) as step:
        # --- documents: membership, versions, ids -------------------------------------------
        step("document churn")
        present, version, churn_sets = _document_churn(
            rng, n_documents, n_snap, removed, added, rewritten, renumbered
        )
        n_universe = present.shape[1]
        doc_ids = _assign_ids(rng, present, churn_sets)
        urls = _urls(rng, n_universe)

        # --- topics ----------------------------------------------------------------------------
        topic_present, drift = _topic_drift(rng, n_topics, n_snap, topics_dropped, topics_added)
        n_topic_universe = topic_present.shape[1]
        queries = _queries(rng, n_topic_universe)
        topic_ids = _topic_ids(rng, topic_present, labels)

        # --- truth -----------------------------------------------------------------------------
        step("hidden relevance")
        n_cand = min(n_universe, int(round(depth * _CANDIDATES)) + 60)
        candidates = np.stack(
            [rng.choice(n_universe, n_cand, replace=False) for _ in range(n_topic_universe)]
        )
        grades, hidden = _relevance(rng, candidates, churn_sets, n_snap)
        truth = _Truth(seed, disagreement, labels, present, version, doc_ids, urls,
                       topic_present, topic_ids, queries, candidates, grades, hidden)

        # --- runs: drawn once per (system, topic, candidate), reused in every snapshot ---------
        step("runs")
        shared = rng.standard_normal((n_topic_universe, n_cand), dtype=np.float32)
        own = rng.standard_normal((len(SYSTEMS), n_topic_universe, n_cand), dtype=np.float32)
        rankings = _rank(truth, shared, own, depth)
        runs_dir = out_dir / "runs"
        run_paths = [{system.tag: runs_dir / label / f"{system.tag}.run" for system in SYSTEMS}
                     for label in labels]
        if not reused:
            _write_runs(runs_dir, truth, rankings, run_paths, depth)

        # --- original qrels: a depth-k pool over the contributing runs, assessed ---------------
        step("original qrels")
        contributing = [s for s, system in enumerate(SYSTEMS) if system.contributing]
        qrels = [_pool_qrels(truth, j, rankings[j], contributing, pool_depth)
                 for j in range(n_snap)]

        # --- the on-disk LongEval layout -------------------------------------------------------
        step("LongEval layout")
        if reused:
            from .longeval_layout import longeval_web_layout

            layout = longeval_web_layout(home)
        else:
            layout = _write_layout(rng, home, truth, qrels)  # the last use of rng

    snapshots = [
        DemoSnapshot(
            label=label,
            date=snap_date,
            irds_id=f"{DEMO_COLLECTION}/{label}",
            n_documents=int(present[j].sum()),
            n_topics=int(topic_present[j].sum()),
            n_judgments=len(qrels[j]),
            qrels_path=layout.qrels_file(label),
            run_paths=run_paths[j],
        )
        for j, (label, snap_date) in enumerate(DEMO_SNAPSHOTS)
    ]
    churn = {labels[j]: _churn_counts(present, version, doc_ids, j) for j in range(1, n_snap)}
    demo = DemoCollection(
        out_dir=out_dir,
        seed=seed,
        ir_datasets_home=home,
        snapshots=snapshots,
        systems=list(SYSTEMS),
        churn=churn,
        topic_drift={labels[j]: drift[j - 1] for j in range(1, n_snap)},
        depth=depth,
        pool_depth=pool_depth,
        manifest_path=out_dir / MANIFEST,
        reused=reused,
        _truth=truth,
    )
    if not reused:
        _write_manifest(demo, parameters)
    return demo


def _write_runs(runs_dir: Path, truth: _Truth,
                rankings: list[list[list[tuple[int, np.ndarray, np.ndarray]]]],
                run_paths: list[dict[str, Path]], depth: int) -> None:
    """Replace ``runs/`` with one TREC run file per snapshot and system."""
    if runs_dir.exists():
        shutil.rmtree(runs_dir)
    rank_text = [f"{rank} " for rank in range(1, depth + 1)]
    for j, paths in enumerate(run_paths):
        id_text = np.array([str(i) for i in truth.doc_ids[j].tolist()], dtype=object)
        for s, system in enumerate(SYSTEMS):
            path = paths[system.tag]
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_run_lines(path, truth, j, rankings[j][s], system.tag, id_text, rank_text)


def _check_parameters(n_documents: int, n_topics: int, depth: int, pool_depth: int,
                      rates: tuple[float, ...]) -> None:
    """Refuse sizes the generator cannot honour, before writing anything."""
    if n_documents < 200:
        raise ValueError(f"n_documents must be at least 200, got {n_documents}")
    if n_topics < 5:
        raise ValueError(f"n_topics must be at least 5, got {n_topics}")
    if not 10 <= depth <= n_documents // 2:
        raise ValueError(f"depth must be between 10 and n_documents / 2, got {depth}")
    if not 1 <= pool_depth <= depth:
        raise ValueError(f"pool_depth must be between 1 and depth, got {pool_depth}")
    if any(not 0.0 <= r < 0.5 for r in rates):
        raise ValueError(f"churn, drift and disagreement rates must be in [0, 0.5), got {rates}")


def _document_churn(
    rng: np.random.Generator, n0: int, n_snap: int, removed: float, added: float,
    rewritten: float, renumbered: float,
) -> tuple[np.ndarray, np.ndarray, list[dict[str, np.ndarray]]]:
    """Membership and version per snapshot, and per transition the index sets of each change."""
    n_added = []
    n_present = n0
    for _ in range(1, n_snap):
        n_rm = int(round(removed * n_present))
        n_add = int(round(added * n_present))
        n_added.append(n_add)
        n_present += n_add - n_rm
    universe = n0 + sum(n_added)
    present = np.zeros((n_snap, universe), dtype=bool)
    version = np.zeros((n_snap, universe), dtype=np.int8)
    present[0, :n0] = True
    next_new = n0
    sets: list[dict[str, np.ndarray]] = []
    for j in range(1, n_snap):
        prev = np.flatnonzero(present[j - 1])
        gone = np.sort(rng.choice(prev, int(round(removed * len(prev))), replace=False))
        new = np.arange(next_new, next_new + n_added[j - 1])
        next_new += len(new)
        survivors = np.setdiff1d(prev, gone, assume_unique=True)
        rewrite = np.sort(rng.choice(survivors, int(round(rewritten * len(survivors))),
                                     replace=False))
        same = np.setdiff1d(survivors, rewrite, assume_unique=True)
        renumber = np.sort(rng.choice(same, int(round(renumbered * len(same))), replace=False))
        present[j] = present[j - 1]
        present[j, gone] = False
        present[j, new] = True
        version[j] = version[j - 1]
        version[j, rewrite] += 1
        sets.append({"removed": gone, "added": new, "rewritten": rewrite, "renumbered": renumber})
    return present, version, sets


def _assign_ids(rng: np.random.Generator, present: np.ndarray,
                sets: list[dict[str, np.ndarray]]) -> np.ndarray:
    """Numeric LongEval-style ids: new for added, rewritten and re-numbered documents."""
    n_snap, universe = present.shape
    fresh_needed = int(present[0].sum()) + sum(
        len(s["added"]) + len(s["rewritten"]) + len(s["renumbered"]) for s in sets
    )
    pool = rng.choice(90_000_000, fresh_needed, replace=False).astype(np.int64) + 10_000_000
    ids = np.full((n_snap, universe), -1, dtype=np.int64)
    first = np.flatnonzero(present[0])
    ids[0, first] = pool[: len(first)]
    used = len(first)
    for j in range(1, n_snap):
        ids[j] = ids[j - 1]
        change = sets[j - 1]
        ids[j, change["removed"]] = -1
        for key in ("added", "rewritten", "renumbered"):
            docs = change[key]
            ids[j, docs] = pool[used : used + len(docs)]
            used += len(docs)
    return ids


def _pseudo_words(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct pronounceable filler words (the long tail of a web vocabulary)."""
    onsets = np.array(_ONSETS)
    nuclei = np.array(_NUCLEI)
    words: dict[str, None] = {}
    while len(words) < n:
        k = 2 * n
        syllables = rng.integers(2, 4, k)
        parts = [onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)],
                 onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)],
                 onsets[rng.integers(0, len(onsets), k)], nuclei[rng.integers(0, len(nuclei), k)]]
        for i in range(k):
            word = "".join(p[i] for p in parts[: 2 * int(syllables[i])])
            if word not in _WORDS:
                words.setdefault(word)
            if len(words) == n:
                break
    return list(words)


def _urls(rng: np.random.Generator, n: int) -> list[str]:
    """One stable URL per document: site, section and slug."""
    sites = _pseudo_words(rng, 300)
    site = rng.integers(0, len(sites), n).tolist()
    section = rng.integers(0, len(_WORDS), n).tolist()
    slug = rng.integers(0, len(_WORDS), n).tolist()
    return [
        f"https://www.{sites[a]}.fr/{_WORDS[b]}/{_WORDS[c]}-{d}.html"
        for d, (a, b, c) in enumerate(zip(site, section, slug, strict=True))
    ]


def _topic_drift(rng: np.random.Generator, n0: int, n_snap: int, dropped: float,
                 added: float) -> tuple[np.ndarray, list[TopicDrift]]:
    """Which topics each snapshot asks: a few dropped and a few new at each step."""
    steps = []
    n_present = n0
    for _ in range(1, n_snap):
        n_drop, n_add = int(round(dropped * n_present)), int(round(added * n_present))
        steps.append((n_drop, n_add))
        n_present += n_add - n_drop
    universe = n0 + sum(a for _, a in steps)
    present = np.zeros((n_snap, universe), dtype=bool)
    present[0, :n0] = True
    next_new = n0
    drift = []
    for j, (n_drop, n_add) in enumerate(steps, start=1):
        prev = np.flatnonzero(present[j - 1])
        gone = rng.choice(prev, n_drop, replace=False)
        present[j] = present[j - 1]
        present[j, gone] = False
        present[j, next_new : next_new + n_add] = True
        next_new += n_add
        drift.append(TopicDrift(kept=len(prev) - n_drop, dropped=n_drop, added=n_add))
    return present, drift


def _queries(rng: np.random.Generator, n: int) -> list[str]:
    """`n` distinct two-to-four-word queries from the vocabulary."""
    queries: dict[str, None] = {}
    while len(queries) < n:
        k = int(rng.integers(2, 5))
        words = rng.choice(len(_WORDS), k, replace=False)
        queries.setdefault(" ".join(_WORDS[w] for w in words))
    return list(queries)


def _topic_ids(rng: np.random.Generator, present: np.ndarray,
               labels: list[str]) -> list[list[str | None]]:
    """LongEval-style ids (``q`` + MMYY + number), drawn afresh in every snapshot."""
    out: list[list[str | None]] = []
    for j, label in enumerate(labels):
        year, month = label[2:4], label[5:7]
        topics = np.flatnonzero(present[j])
        numbers = rng.choice(9000, len(topics), replace=False) + 1000
        ids: list[str | None] = [None] * present.shape[1]
        for t, number in zip(topics.tolist(), numbers.tolist(), strict=True):
            ids[t] = f"q{month}{year}{number}"
        out.append(ids)
    return out


def _relevance(rng: np.random.Generator, candidates: np.ndarray,
               sets: list[dict[str, np.ndarray]], n_snap: int) -> tuple[np.ndarray, np.ndarray]:
    """Graded truth per (snapshot, topic, candidate): rewrites may change a document's grade."""
    n_topics, n_cand = candidates.shape
    n_rel = rng.integers(8, 41, n_topics)
    n_rel = np.minimum(n_rel, n_cand // 4)
    first = np.zeros((n_topics, n_cand), dtype=np.int8)
    is_rel = np.arange(n_cand)[None, :] < n_rel[:, None]
    two = rng.random((n_topics, n_cand)) < 0.3
    first[is_rel] = np.where(two[is_rel], 2, 1)
    hidden = rng.random((n_topics, n_cand)) < _HIDDEN_SHARE
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


def _rank(truth: _Truth, shared: np.ndarray, own: np.ndarray,
          depth: int) -> list[list[list[tuple[int, np.ndarray, np.ndarray]]]]:
    """Per snapshot, per system, per topic: (topic, document indices, scores) best first."""
    strength = np.array([s.strength for s in SYSTEMS], dtype=np.float32)  # (S, J)
    hidden_w = np.array([s.hidden for s in SYSTEMS], dtype=np.float32)[:, None]
    noise = np.array([s.noise for s in SYSTEMS], dtype=np.float32)[:, None, None]
    like = np.array([s.like_pivot for s in SYSTEMS], dtype=np.float32)[:, None, None]
    pivot = [s.tag for s in SYSTEMS].index(PIVOT)
    own = noise * (like * own[pivot][None] + np.sqrt(1.0 - like**2) * own)
    n_sys = len(SYSTEMS)
    out: list[list[list[tuple[int, np.ndarray, np.ndarray]]]] = []
    for j in range(len(truth.labels)):
        per_system: list[list[tuple[int, np.ndarray, np.ndarray]]] = [[] for _ in range(n_sys)]
        for t in np.flatnonzero(truth.topic_present[j]).tolist():
            docs = truth.candidates[t]
            keep = np.flatnonzero(truth.present[j, docs])
            grade = truth.grades[j, t, keep].astype(np.float32) * _SIGNAL
            hid = truth.hidden[t, keep]
            seen = np.where(hid[None, :], hidden_w, strength[:, j : j + 1])
            score = seen * grade[None, :] + _SHARED * shared[t, keep][None, :] \
                + own[:, t, keep]
            order = np.argsort(-score, axis=1, kind="stable")[:, :depth]
            for s in range(n_sys):
                top = order[s]
                per_system[s].append((t, docs[keep[top]], score[s, top]))
        out.append(per_system)
    return out


def _write_run_lines(path: Path, truth: _Truth, j: int,
                     ranking: list[tuple[int, np.ndarray, np.ndarray]], tag: str,
                     id_text: np.ndarray, rank_text: list[str]) -> None:
    """Write a TREC run byte for byte as `tcdb.collections.runs.write_run` would.

    Why not call it: it formats a Python tuple per row, and the demo writes three million rows
    inside a time budget; the test suite checks the bytes are identical. Scores are BM25-like,
    positive and strictly decreasing (so trec_eval's tie-breaking cannot reorder a run).
    `id_text` holds the snapshot's doc ids as str, `rank_text` the ranks as "1 ", "2 ", ….
    """
    chunks: list[str] = []
    for t, docs, score in ranking:
        n = len(docs)
        values = 20.0 + 3.0 * score.astype(np.float64) - 1e-5 * np.arange(n)
        prefix = f"{truth.topic_ids[j][t]} Q0 "
        suffix = f" {tag}\n"
        chunks.append("".join([
            f"{prefix}{doc} {rank}{value!r}{suffix}"
            for doc, rank, value in zip(id_text[docs].tolist(), rank_text[:n],
                                        np.round(values, 6).tolist(), strict=True)
        ]))
    path.write_text("".join(chunks), encoding="utf-8")


def _pool_qrels(truth: _Truth, j: int,
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


def _write_layout(rng: np.random.Generator, home: Path, truth: _Truth,
                  qrels: list[list[QrelRecord]]) -> Any:
    """Texts for every document version, then the LongEval layout of the three snapshots."""
    from .longeval_layout import LongEvalSnapshot, write_longeval_web

    n_snap, universe = truth.present.shape
    # one text slot per (document, version): version 0 at index d, rewrites appended
    slots = np.zeros((n_snap, universe), dtype=np.int64)
    slots[0] = np.arange(universe)
    n_slots = universe
    parent: list[int] = []
    for j in range(1, n_snap):
        slots[j] = slots[j - 1]
        changed = np.flatnonzero(truth.version[j] != truth.version[j - 1])
        slots[j, changed] = np.arange(n_slots, n_slots + len(changed))
        parent.extend(slots[j - 1, changed].tolist())
        n_slots += len(changed)
    texts = _texts(rng, universe, np.array(parent, dtype=np.int64), truth, slots)
    snapshots = {}
    for j, label in enumerate(truth.labels):
        docs = np.flatnonzero(truth.present[j])
        documents = [
            DocumentRecord(str(doc_id), texts[slot], truth.urls[d])
            for d, doc_id, slot in zip(docs.tolist(), truth.doc_ids[j, docs].tolist(),
                                       slots[j, docs].tolist(), strict=True)
        ]
        topics = [TopicRecord(tid, truth.queries[t])
                  for t, tid in enumerate(truth.topic_ids[j]) if tid is not None]
        snapshots[label] = LongEvalSnapshot(documents=documents, queries=topics, qrels=qrels[j])
    return write_longeval_web(home, snapshots)


def _texts(rng: np.random.Generator, universe: int, parent: np.ndarray, truth: _Truth,
           slots: np.ndarray) -> list[str]:
    """Short synthetic texts (30–80 words); a rewrite keeps the start of its parent's text.

    Documents relevant to a topic and visible to lexical rankers carry the query's words; the
    hidden relevant ones do not (the vocabulary mismatch only the magical system overcomes).
    """
    filler = _pseudo_words(rng, 2000)
    vocab = np.array(_WORDS + filler, dtype=object)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    weights[: len(_WORDS)] = weights[: len(_WORDS)].mean()  # topical words: flat, common
    order = rng.permutation(len(vocab))
    vocab = vocab[order]
    n_slots = universe + len(parent)
    width = 80
    words = rng.choice(len(vocab), size=(n_slots, width), p=weights / weights.sum())
    lengths = rng.integers(30, width + 1, n_slots)
    if len(parent):  # a rewrite keeps the first half of its own length, at least 15 new words
        keep = np.arange(width)[None, :] < (lengths[universe:] // 2)[:, None]
        words[universe:] = np.where(keep, words[parent], words[universe:])
    extras: dict[int, list[str]] = {}
    for j in range(len(truth.labels)):
        t_idx, k_idx = np.nonzero((truth.grades[j] > 0) & ~truth.hidden)
        docs = truth.candidates[t_idx, k_idx]
        live = truth.present[j, docs]
        for t, slot in zip(t_idx[live].tolist(), slots[j, docs[live]].tolist(), strict=True):
            extra = extras.setdefault(slot, [])
            query = truth.queries[t]
            if query not in extra:
                extra.append(query)
    texts = []
    for slot in range(n_slots):
        text = " ".join(vocab[words[slot, : lengths[slot]]].tolist())
        if slot in extras:
            text = f"{text} {' '.join(extras[slot])}"
        texts.append(text)
    return texts


def _churn_counts(present: np.ndarray, version: np.ndarray, ids: np.ndarray,
                  j: int) -> ChurnCounts:
    """Count the changes from snapshot j-1 to j as anyone comparing the files would see them."""
    before, after = present[j - 1], present[j]
    both = before & after
    rewritten = both & (version[j] != version[j - 1])
    renumbered = both & ~rewritten & (ids[j] != ids[j - 1])
    return ChurnCounts(
        removed=int((before & ~after).sum()),
        added=int((after & ~before).sum()),
        rewritten=int(rewritten.sum()),
        renumbered=int(renumbered.sum()),
        unchanged=int((both & ~rewritten & ~renumbered).sum()),
    )


def _write_manifest(demo: DemoCollection, parameters: dict[str, Any]) -> None:
    """``demo.json``: what was generated, so `tcdb demo` can tell a matching output from a stale
    one and show the planted expectations without regenerating."""
    base = demo.out_dir

    def rel(path: Path) -> str:
        return path.relative_to(base).as_posix()

    manifest = {
        "collection": demo.name,
        "doc_identity": demo.doc_identity,
        "topic_identity": demo.topic_identity,
        "parameters": parameters,
        "ir_datasets_home": rel(demo.ir_datasets_home),
        "pivot": demo.pivot,
        "systems": [
            {"tag": s.tag, "planted": s.planted, "contributing": s.contributing,
             "group": s.group, "category": s.category, "manual": s.manual,
             "description": s.description}
            for s in demo.systems
        ],
        "snapshots": [
            {"label": s.label, "date": s.date.isoformat(), "irds_id": s.irds_id,
             "n_documents": s.n_documents, "n_topics": s.n_topics,
             "n_judgments": s.n_judgments, "qrels": rel(s.qrels_path),
             "runs": {tag: rel(p) for tag, p in s.run_paths.items()}}
            for s in demo.snapshots
        ],
        "churn": {label: vars(c) for label, c in demo.churn.items()},
        "topic_drift": {label: vars(d) for label, d in demo.topic_drift.items()},
        "files": _digests(base),
    }
    demo.manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def _generated_files(out_dir: Path) -> list[Path]:
    """Every file the generator wrote: the layout's two roots (which the writer replaces
    whole) and the runs. Caches ir_datasets adds later are listed too, but only until the next
    rewrite; the manifest records the files as written."""
    from .longeval_layout import longeval_web_layout

    layout = longeval_web_layout(out_dir / "ir_datasets")
    files = []
    for folder in (layout.french.parents[1], layout.test.parent, out_dir / "runs"):
        if folder.exists():
            files.extend(p for p in folder.rglob("*") if p.is_file())
    return sorted(files)


def _digests(out_dir: Path) -> dict[str, str]:
    """relative path → xxh3-128 of the bytes, for the generated files."""
    import xxhash

    return {
        p.relative_to(out_dir).as_posix(): xxhash.xxh3_128_hexdigest(p.read_bytes())
        for p in _generated_files(out_dir)
    }


def _unchanged_output(out_dir: Path, parameters: dict[str, Any]) -> bool:
    """Whether ``demo.json`` was written with these parameters and its files are intact."""
    import xxhash

    try:
        manifest = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("parameters") != parameters:
        return False
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return False
    for rel, digest in files.items():
        path = out_dir / rel
        if not path.is_file() or xxhash.xxh3_128_hexdigest(path.read_bytes()) != digest:
            return False
    return True
