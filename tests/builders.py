"""Tiny test collections on disk: TREC documents, topics, qrels and run files, and a snapshot
ingested from them through the real ingest path (`tcdb.ingest.ingest_snapshot` + `LocalSource`).

Shared by the run, evaluation, pool and report tests; everything is written under the test's
`tmp_path`, nothing touches the network.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


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
    from tcdb.collections.runs import write_run

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
    from tcdb.catalog import add_collection
    from tcdb.collections.sources import LocalSource
    from tcdb.ingest import ingest_snapshot

    folder = tmp_path / collection / label
    docs_path = write_documents(folder / "docs.trec", docs)
    topics_path = write_topics(folder / "topics.tsv", topics)
    qrels_path = write_qrels_file(folder / "qrels.txt", qrels) if qrels is not None else None
    add_collection(collection, doc_identity, topic_identity)
    return ingest_snapshot(collection, label, LocalSource(docs_path, topics_path, qrels_path),
                           date=date, qrels_name=qrels_name)
