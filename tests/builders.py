"""What several test modules build alike: tiny test collections on disk (TREC documents,
topics, qrels and run files), a snapshot ingested from them through the real ingest path
(`tcdb.ingest.ingest_snapshot` + `LocalSource`), a pool's entries by external ids, and the
seeded longitudinal collection the dashboard tests look at.

Everything is written under the test's `tmp_path`; nothing touches the network. Test modules
import from here, never from one another.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tcdb.operations import Database


def write_documents(path: Path, docs: Mapping[str, str]) -> Path:
    """A TREC SGML document file: one `<DOC>` per (doc id, text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [f"<DOC>\n<DOCNO>{doc_id}</DOCNO>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n"
             for doc_id, text in docs.items()]
    path.write_text("".join(parts), encoding="utf-8")
    return path


def write_topics(path: Path, topics: Mapping[str, str]) -> Path:
    """A TSV topics file: `id<TAB>query` per topic."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t}\t{q}\n" for t, q in topics.items()), encoding="utf-8")
    return path


def write_qrels_file(path: Path, qrels: Iterable[Sequence[Any]]) -> Path:
    """A TREC qrels file from (topic, doc, grade) rows."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t} 0 {d} {int(g)}\n" for t, d, g in qrels), encoding="utf-8")
    return path


def write_run_file(
    folder: Path, tag: str, rows: Iterable[Sequence[Any]], name: str | None = None
) -> Path:
    """A TREC run file `<folder>/<name or tag>.run` (`.gz` names are gzipped).

    Rows are (topic, doc, score) — ranks then count 1, 2, … per topic in the order given — or
    (topic, doc, rank, score) written as given.
    """
    from tcdb.collections.runs.trec import write_run

    folder.mkdir(parents=True, exist_ok=True)
    ranked: list[tuple[str, str, int, float]] = []
    next_rank: dict[str, int] = {}
    for row in rows:
        if len(row) == 3:
            topic, doc, score = row
            next_rank[topic] = next_rank.get(topic, 0) + 1
            ranked.append((str(topic), str(doc), next_rank[topic], float(score)))
        else:
            topic, doc, rank, score = row
            ranked.append((str(topic), str(doc), int(rank), float(score)))
    path = folder / (name or f"{tag}.run")
    write_run(path, ranked, tag)
    return path


def build_snapshot(
    tmp_path: Path,
    collection: str,
    label: str,
    docs: Mapping[str, str],
    topics: Mapping[str, str],
    qrels: Iterable[Sequence[Any]] | None = None,
    *,
    date: dt.date | None = None,
    qrels_name: str = "original",
    doc_identity: str = "doc_id",
    topic_identity: str = "query_id",
) -> Any:
    """Write the files under `tmp_path/<collection>/<label>/` and ingest them as a snapshot.

    The collection is created if needed. Returns the `IngestReport`.
    """
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    folder = tmp_path / collection / label
    docs_path = write_documents(folder / "docs.trec", docs)
    topics_path = write_topics(folder / "topics.tsv", topics)
    qrels_path = write_qrels_file(folder / "qrels.txt", qrels) if qrels is not None else None
    add_collection(Database(), collection, doc_identity, topic_identity)
    return ingest_snapshot(Database(),
                           collection, label, LocalSource(docs_path, topics_path, qrels_path),
                           date=date, qrels_name=qrels_name)


def pool_entries(name: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(topic, doc) → (best rank, n_runs) of a pool, by external ids."""
    from sqlalchemy import text

    with Database().session() as session:
        rows = session.connection().execute(text(
            "SELECT st.external_id, sd.external_id, pe.best_rank, pe.n_runs FROM pool_entry pe "
            "JOIN pool p ON p.id = pe.pool_id "
            "JOIN snapshot_topic st ON st.snapshot_id = p.snapshot_id "
            "AND st.topic_id = pe.topic_id "
            "JOIN snapshot_document sd ON sd.snapshot_id = p.snapshot_id "
            "AND sd.document_id = pe.document_id WHERE p.name = :n"), {"n": name}).tuples()
        return {(t, d): (r, n) for t, d, r, n in rows}


# ---------------------------------------------------- a seeded collection for the dashboard

COLLECTION = "dash"
MEASURES = ["nDCG@10", "AP", "P@10"]
PAGES = {
    "overview": "Overview",
    "drift": "Snapshot drift",
    "persistence": "Persistence over time",
    "reusability": "Reusability",
    "judges": "Judge agreement",
    "pools": "Assessment pools",
    "compare": "Compare runs",
    "diff_runs": "Diff runs",
    "source_bias": "Source bias",
    "literature": "Literature",
}


@dataclass
class Seeded:
    """What `seed_collection` built, with the numbers the pages must show."""

    collection: str
    labels: list[str]
    systems: list[str]
    contributing: list[str]
    n_documents: dict[str, int]
    churn: dict[str, dict[str, int]]  # "a → b" → added/removed/changed/unchanged
    topics: dict[str, list[str]]
    pool: str
    pool_snapshot: str
    extra: dict[str, Any] = field(default_factory=dict)


def seed_collection(
    tmp_path: Path,
    *,
    n_runs: int = 8,
    n_topics: int = 6,
    n_documents: int = 40,
    n_snapshots: int = 3,
    depth: int = 20,
    pool_depth: int = 5,
    seed: int = 7,
    progress: bool = False,
) -> Seeded:
    """Write and ingest a small longitudinal collection, import and evaluate runs, build a pool.

    Snapshot j drops the two oldest documents of j-1, adds two new ones and rewrites one; its
    topics are j+1 … j+n_topics (one dropped, one added each time). Runs score documents by a
    hidden truth plus seeded noise; the first half (two groups, `lab-a` and `lab-b`) contributed
    to the original qrels (their
    top `pool_depth`, judged by the truth); a depth-10 pool over all runs of the last snapshot,
    judged by the truth too, expands them into `expanded`.
    """
    from tcdb.api import pool_build, pool_import_judgments, pool_show, run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.scoring.evaluate import evaluate

    rng = np.random.default_rng(seed)
    n_universe = n_documents + 2 * n_snapshots
    universe = [f"d{i:05d}" for i in range(n_universe)]
    position = {d: i for i, d in enumerate(universe)}
    all_topics = [str(t) for t in range(1, n_topics + n_snapshots + 1)]
    grades = rng.choice([0, 0, 0, 1, 2], size=(len(all_topics), n_universe))
    truth = {t: dict(zip(universe, grades[i].tolist(), strict=True))
             for i, t in enumerate(all_topics)}
    systems = ["bm25"] + [f"sys{i:03d}" for i in range(1, n_runs)]
    strength = {s: 0.6 + rng.random() for s in systems}
    noise = {s: rng.standard_normal((len(all_topics), n_universe)) for s in systems}
    contributing = systems[: max(1, n_runs // 2)]
    labels = [f"2024-{m:02d}" for m in range(1, n_snapshots + 1)]
    add_collection(Database(), COLLECTION, "doc_id", "query_id", grade_min=0, grade_max=2)

    present = list(universe[:n_documents])
    version = dict.fromkeys(universe, 0)
    churn: dict[str, dict[str, int]] = {}
    n_docs: dict[str, int] = {}
    topics: dict[str, list[str]] = {}
    for j, label in enumerate(labels):
        if j:
            removed, present = present[:2], present[2:]
            added = universe[n_documents + 2 * (j - 1): n_documents + 2 * j]
            present += added
            rewritten = present[len(present) // 2]
            version[rewritten] += 1
            churn[f"{labels[j - 1]} → {label}"] = {
                "added": len(added), "removed": len(removed), "changed": 1,
                "unchanged": len(present) - len(added) - 1}
        n_docs[label] = len(present)
        snap_topics = all_topics[j: j + n_topics]
        topics[label] = snap_topics
        folder = tmp_path / "seed" / label
        docs = write_documents(folder / "docs.trec", {
            d: f"document {d} version {version[d]} words {d[-2:]}" for d in present})
        topic_file = write_topics(folder / "topics.tsv", {t: f"query {t}" for t in snap_topics})
        runs_dir = folder / "runs"
        rankings: dict[str, dict[str, list[str]]] = {}
        paths = {}
        columns = np.array([position[d] for d in present])
        rows_of = np.array([all_topics.index(t) for t in snap_topics])
        for s in systems:
            scores = strength[s] * grades[np.ix_(rows_of, columns)] + \
                noise[s][np.ix_(rows_of, columns)]
            top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
            rows = []
            rankings[s] = {}
            for i, t in enumerate(snap_topics):
                rankings[s][t] = [present[c] for c in top[i]]
                rows += [(t, present[c], round(float(scores[i, c]), 6)) for c in top[i]]
            paths[s] = write_run_file(runs_dir, s, rows)
        judged = {(t, d) for s in contributing for t in snap_topics
                  for d in rankings[s][t][:pool_depth]}
        qrels = write_qrels_file(folder / "qrels.txt", sorted(
            (t, d, truth[t][d]) for t, d in judged))
        ingest_snapshot(Database(), COLLECTION, label, LocalSource(docs, topic_file, qrels),
                        date=dt.date(2024, j + 1, 1), progress=progress)
        half = (len(contributing) + 1) // 2
        for group, members in (("lab-a", contributing[:half]), ("lab-b", contributing[half:])):
            if members:
                run_import(COLLECTION, label, [paths[s] for s in members], group=group,
                           contributed=True)
        others = [paths[s] for s in systems if s not in contributing]
        if others:
            run_import(COLLECTION, label, others)
        evaluate(Database(), COLLECTION, label, "original", MEASURES, progress=progress)

    last = labels[-1]
    pool = f"{last}-depth10"
    pool_build(COLLECTION, last, pool, depth=10, all_runs=True, exclude_judged="original")
    pooled = pool_show(pool)
    from tcdb.pools import pool_documents

    judgments = sorted((t, d, truth[t][d]) for t, ds in pool_documents(Database(), pool).items()
                       for d in ds)
    path = write_qrels_file(tmp_path / "seed" / "judgments.txt", judgments)
    pool_import_judgments(pool, path, expand="original", expanded_name="expanded")
    evaluate(Database(), COLLECTION, last, "expanded", MEASURES, progress=progress)
    from tcdb import api

    leave_out = api.leave_out(COLLECTION, last, qrels="original", depth=pool_depth, by="group",
                              measures=["AP"]) if len(contributing) > 1 else None
    from importlib.resources import as_file, files

    with as_file(files("tcdb.demo") / "literature.csv") as shipped:
        api.literature_import(shipped, COLLECTION)  # the Literature page's trend chart
    return Seeded(COLLECTION, labels, systems, contributing, n_docs, churn, topics, pool, last,
                  {"pool_size": pooled.n_documents, "leave_out": leave_out})
