"""A generated three-snapshot web collection whose longitudinal answers are known by
construction, for the ranking-agreement, topic-deltas and cross-snapshot evaluation tests.

* Documents are kept by URL; every snapshot renames them (`a-017`, `b-017`, `c-017` are one
  document, `https://site/017`), drops the five oldest and adds five new ones.
* Topics are kept by query text and re-numbered in every snapshot (1…, 11…, 21…); snapshot 2
  adds a topic, snapshot 3 drops one, so A/B core topics differ from all three's.
* Systems: `steady` ranks the same URLs in the same order in every snapshot (KTU 1, RBO 1);
  `flip` ranks them (in URL order) in snapshot 2 in the reverse order of snapshot 1 (KTU −1,
  see `tcdb.analysis.ranking_agreement`); `noisy` ranks
  a seeded random sample of each snapshot's documents; `short` answers fewer documents in
  snapshot 2 than in 1.

`Web` records every ranking (by URL, in rank order) and every qrels file, so tests compute
the expected numbers with repro_eval and ir_measures themselves.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from tcdb.operations import Database
from tests.builders import write_qrels_file, write_run_file, write_topics

COLLECTION = "web3"
LABELS = ["s1", "s2", "s3"]
PREFIX = {"s1": "a", "s2": "b", "s3": "c"}
QUERIES = ["solar power", "river maps", "cheap flights", "bread recipes", "chess openings"]
DEPTH = 20


@dataclass
class Web:
    """What `build_web` wrote: names, rankings and judgments by snapshot."""

    topics: dict[str, dict[str, str]]  # snapshot → external topic id → query text
    docs: dict[str, dict[str, str]]  # snapshot → URL → external doc id
    rankings: dict[str, dict[str, dict[str, list[str]]]]  # system → snapshot → query → URLs
    qrels: dict[str, list[tuple[str, str, int]]]  # snapshot → (topic, doc, grade) external
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # snapshot → URL → text
    runs: dict[str, dict[str, Path]] = field(default_factory=dict)  # system → snapshot → file

    def topic_of(self, label: str, query: str) -> str:
        return next(t for t, q in self.topics[label].items() if q == query)


def _text(url: str, j: int) -> str:
    """A page's text in snapshot j: 5 to 9 words; pages …7 grow by a word per snapshot, pages
    …3 lose one, pages …5 change a word (same length), the others never change."""
    n = 5 + int(url[-2]) % 5 + (j if url.endswith("7") else -j if url.endswith("3") else 0)
    words = ["page", *(["word"] * (n - 2)), url]
    if url.endswith("5"):
        words[1] = f"w{j}rd"
    return "  ".join(words) if url.endswith("1") else " ".join(words)  # …1: double spaces


def _urls(j: int) -> list[str]:
    return [f"https://site/{i:03d}" for i in range(5 * j, 5 * j + 40)]


def build_web(tmp_path: Path, seed: int = 3) -> Web:
    """Write and ingest the three snapshots, import the runs (system = name, tag
    `name-snapshot`) and evaluate them on each snapshot's original qrels (nDCG@10, AP)."""
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.scoring.evaluate import evaluate

    rng = random.Random(seed)
    add_collection(Database(), COLLECTION, "url", "text", grade_min=0, grade_max=2)
    everywhere = sorted(set(_urls(0)) & set(_urls(2)))  # in all three snapshots (30)
    # in URL order: repro_eval's KTU pairs the two rankings rank by rank (each document's place
    # in the sorted union), so a reversal gives −1 exactly when the ranking is in name order
    order = {q: sorted(rng.sample(everywhere, DEPTH)) for q in QUERIES}
    truth = {q: {u: rng.choice([0, 0, 1, 2]) for u in _urls(0) + _urls(2)} for q in QUERIES}
    web = Web({}, {}, {"steady": {}, "flip": {}, "noisy": {}, "short": {}}, {})
    for j, label in enumerate(LABELS):
        folder = tmp_path / COLLECTION / label
        folder.mkdir(parents=True, exist_ok=True)
        urls = _urls(j)
        web.docs[label] = {u: f"{PREFIX[label]}-{u[-3:]}" for u in urls}
        corpus = folder / "corpus.jsonl"
        web.texts[label] = {u: _text(u, j) for u in urls}
        corpus.write_text("".join(json.dumps({"_id": web.docs[label][u], "url": u,
                                              "text": web.texts[label][u]}) + "\n"
                                  for u in urls))
        queries = QUERIES[:4] if j == 0 else QUERIES if j == 1 else QUERIES[:3] + QUERIES[4:]
        web.topics[label] = {str(10 * j + i + 1): q for i, q in enumerate(queries)}
        topics = write_topics(folder / "topics.tsv", web.topics[label])
        web.qrels[label] = [(t, web.docs[label][u], truth[q][u])
                            for t, q in web.topics[label].items() for u in urls[:30]]
        qrels = write_qrels_file(folder / "qrels.txt", web.qrels[label])
        ingest_snapshot(Database(), COLLECTION, label, LocalSource(corpus, topics, qrels))
        for system in web.rankings:
            by_query: dict[str, list[str]] = {}
            for q in queries:
                if system == "steady" or (system == "flip" and j != 1):
                    by_query[q] = list(order[q])
                elif system == "flip":
                    by_query[q] = list(reversed(order[q]))
                elif system == "short":
                    by_query[q] = list(order[q][: DEPTH - 5 * (j == 1)])
                else:
                    by_query[q] = rng.sample(urls, DEPTH)
            web.rankings[system][label] = by_query
            rows = [(web.topic_of(label, q), web.docs[label][u], float(DEPTH - r))
                    for q, ranked in by_query.items() for r, u in enumerate(ranked)]
            path = write_run_file(folder / "runs", f"{system}-{label}", rows)
            web.runs.setdefault(system, {})[label] = path
            run_import(COLLECTION, label, [path], system=system)
        evaluate(Database(), COLLECTION, label, "original", ["nDCG@10", "AP"])
    return web
