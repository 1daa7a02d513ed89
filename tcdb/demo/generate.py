"""`generate_demo`: the whole demo collection from one seed, and what it holds
(`DemoCollection`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from tcdb.demo.longeval_files import longeval_web_layout
from tcdb.progress import Progress

from .churn import (
    ChurnCounts,
    TopicDrift,
    assign_ids,
    churn_counts,
    document_churn,
    draw_topic_drift,
    draw_topic_ids,
)
from .layout import MANIFEST, digests, unchanged_output, write_layout
from .runs import RUN_METADATA, rank_candidates, write_runs
from .systems import DEMO_COLLECTION, DEMO_SNAPSHOTS, PIVOT, SYSTEMS, DemoSystem
from .truth import Truth, draw_relevance, original_qrels
from .words import make_queries, make_urls

# Bumped when the files written change shape, so an older demo-data/ is written anew.
LAYOUT_VERSION = 3

CANDIDATES = 1.45  # candidates per topic, as a multiple of the run depth


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
    metadata_path: Path  # the organisers' table of the runs (tcdb.runs.metadata)


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
    _truth: Truth | None = field(default=None, repr=False)

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

    def _require_truth(self) -> Truth:
        if self._truth is None:  # pragma: no cover - always set by generate_demo
            raise RuntimeError("this DemoCollection carries no hidden truth")
        return self._truth


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
    check_parameters(n_documents, n_topics, depth, pool_depth,
                     (removed, added, rewritten, renumbered, topics_dropped, topics_added,
                      disagreement))
    out_dir = Path(out_dir)
    parameters: dict[str, Any] = {
        "seed": seed, "n_documents": n_documents, "n_topics": n_topics, "depth": depth,
        "pool_depth": pool_depth, "removed": removed, "added": added, "rewritten": rewritten,
        "renumbered": renumbered, "topics_dropped": topics_dropped,
        "topics_added": topics_added, "disagreement": disagreement,
        "layout": LAYOUT_VERSION,
    }
    reused = reuse and unchanged_output(out_dir, parameters)
    home = out_dir / "ir_datasets"
    rng = np.random.default_rng(seed)
    n_snap = len(DEMO_SNAPSHOTS)
    labels = [label for label, _ in DEMO_SNAPSHOTS]
    with Progress("demo: generating", total=5, enabled=progress) as steps:
        # --- documents: membership, versions, ids -------------------------------------------
        steps.advance(description="document churn")
        present, version, churn_sets = document_churn(
            rng, n_documents, n_snap, removed, added, rewritten, renumbered
        )
        n_universe = present.shape[1]
        doc_ids = assign_ids(rng, present, churn_sets)
        urls = make_urls(rng, n_universe)

        # --- topics ----------------------------------------------------------------------------
        topic_present, drift = draw_topic_drift(rng, n_topics, n_snap, topics_dropped, topics_added)
        n_topic_universe = topic_present.shape[1]
        queries = make_queries(rng, n_topic_universe)
        topic_ids = draw_topic_ids(rng, topic_present, labels)

        # --- truth -----------------------------------------------------------------------------
        steps.advance(description="hidden relevance")
        n_cand = min(n_universe, int(round(depth * CANDIDATES)) + 60)
        candidates = np.stack(
            [rng.choice(n_universe, n_cand, replace=False) for _ in range(n_topic_universe)]
        )
        grades, hidden = draw_relevance(rng, candidates, churn_sets, n_snap)
        truth = Truth(seed, disagreement, labels, present, version, doc_ids, urls,
                      topic_present, topic_ids, queries, candidates, grades, hidden)

        # --- runs: drawn once per (system, topic, candidate), reused in every snapshot ---------
        steps.advance(description="runs")
        shared = rng.standard_normal((n_topic_universe, n_cand), dtype=np.float32)
        own = rng.standard_normal((len(SYSTEMS), n_topic_universe, n_cand), dtype=np.float32)
        rankings = rank_candidates(truth, shared, own, depth)
        runs_dir = out_dir / "runs"
        run_paths = [{system.tag: runs_dir / label / f"{system.tag}.run" for system in SYSTEMS}
                     for label in labels]
        if not reused:
            write_runs(runs_dir, truth, rankings, run_paths, depth)

        # --- original qrels: a depth-k pool over the contributing runs, assessed ---------------
        steps.advance(description="original qrels")
        contributing = [s for s, system in enumerate(SYSTEMS) if system.contributing]
        qrels = [original_qrels(truth, j, rankings[j], contributing, pool_depth)
                 for j in range(n_snap)]

        # --- the on-disk LongEval layout -------------------------------------------------------
        steps.advance(description="LongEval layout")
        # writing the layout is the last use of rng
        layout = longeval_web_layout(home) if reused else write_layout(rng, home, truth, qrels)

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
            metadata_path=runs_dir / label / RUN_METADATA,
        )
        for j, (label, snap_date) in enumerate(DEMO_SNAPSHOTS)
    ]
    churn = {labels[j]: churn_counts(present, version, doc_ids, j) for j in range(1, n_snap)}
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
        write_manifest(demo, parameters)
    return demo


def check_parameters(n_documents: int, n_topics: int, depth: int, pool_depth: int,
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


def write_manifest(demo: DemoCollection, parameters: dict[str, Any]) -> None:
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
             "group": s.group, "category": s.category, "run_type": s.run_type,
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
        "files": digests(base),
    }
    demo.manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
