"""A Cocktail-shaped corpus for the demo: human documents, LLM rewrites of half of them, and
runs with planted source bias.

Written as BEIR files (`corpus.jsonl` with `source` and `twin_of`, `queries.jsonl`,
`qrels/test.tsv` judging the human originals only, as Cocktail's are) and TREC run files. Every
judged original has a rewrite (as in Cocktail), and so has every other unjudged one. Every
tenth rewrite is refused: the LLM document's text equals its original's. The runs: a neutral
lexical run (a twin scores like its original, plus noise), a dense retriever with a planted
preference for LLM text, one that prefers human text, and an LLM re-ranker of the lexical run's
top 100 that prefers LLM text more (its first stage recorded). Seeded: the same seed writes the
same bytes, and files already there are kept (so the demo's second run changes nothing).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["COCKTAIL_SYSTEMS", "CocktailDemo", "write_cocktail_demo"]

# tag → (skill, preference for LLM text in score units, first stage)
COCKTAIL_SYSTEMS: dict[str, tuple[float, float, str | None]] = {
    "bm25": (1.0, 0.0, None),
    "dense-llm": (1.3, 0.9, None),
    "human-pref": (1.1, -0.6, None),
    "rerank-llm": (1.6, 1.5, "bm25"),
}
VERSION = 2


@dataclass(frozen=True)
class CocktailDemo:
    """Where the corpus, queries, qrels and runs are, and what was planted."""

    folder: Path
    corpus: Path
    queries: Path
    qrels: Path
    runs: dict[str, Path]
    first_stage: dict[str, str]  # re-ranker tag → first-stage tag
    planted: dict[str, str]  # tag → "neutral" | "prefers llm" | "prefers human"


def write_cocktail_demo(folder: Path, *, seed: int = 42, n_human: int = 2_000,
                        n_topics: int = 30, depth: int = 100) -> CocktailDemo:
    """Write the files under `folder` (kept when already written by this version and seed)."""
    folder.mkdir(parents=True, exist_ok=True)
    demo = CocktailDemo(
        folder=folder, corpus=folder / "corpus.jsonl", queries=folder / "queries.jsonl",
        qrels=folder / "qrels" / "test.tsv",
        runs={tag: folder / "runs" / f"{tag}.run" for tag in COCKTAIL_SYSTEMS},
        first_stage={t: fs for t, (_, _, fs) in COCKTAIL_SYSTEMS.items() if fs},
        planted={t: "neutral" if p == 0 else "prefers llm" if p > 0 else "prefers human"
                 for t, (_, p, _) in COCKTAIL_SYSTEMS.items()})
    marker = folder / "VERSION"
    stamp = f"{VERSION} {seed} {n_human} {n_topics} {depth}"
    if marker.exists() and marker.read_text() == stamp and all(
            p.exists() for p in (demo.corpus, demo.queries, demo.qrels, *demo.runs.values())):
        return demo
    rng = np.random.default_rng(seed)
    relevance = np.zeros((n_topics, n_human))
    judged_any = np.zeros(n_human, dtype=bool)
    demo.qrels.parent.mkdir(exist_ok=True)
    with demo.qrels.open("w", encoding="utf-8") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for t in range(n_topics):  # 12 originals judged per topic, grades 0–2
            judged = np.sort(rng.choice(n_human, size=12, replace=False))
            relevance[t, judged] = rng.integers(0, 3, size=12)
            judged_any[judged] = True
            out.write("".join(f"{t}\th{d}\t{int(relevance[t, d])}\n" for d in judged.tolist()))
    # Every judged original gets an LLM rewrite, as in Cocktail, and so does every other one of
    # the rest: half of the human documents or more.
    twins = np.union1d(np.arange(0, n_human, 2), np.flatnonzero(judged_any))
    with demo.corpus.open("w", encoding="utf-8") as out:
        for i in range(n_human):
            out.write(json.dumps({"_id": f"h{i}", "title": f"Page {i}",
                                  "text": f"human written page {i} on subject {i % n_topics}",
                                  "source": "human"}) + "\n")
        for i in twins.tolist():
            refused = i % 20 == 0  # a refused rewrite: the original's text, unchanged
            text = (f"human written page {i} on subject {i % n_topics}" if refused else
                    f"an LLM rewrite of page {i} about subject {i % n_topics}")
            out.write(json.dumps({"_id": f"l{i}", "title": f"Page {i}", "text": text,
                                  "source": "llm", "twin_of": f"h{i}"}) + "\n")
    demo.queries.write_text("".join(json.dumps({"_id": str(t), "text": f"subject {t}"}) + "\n"
                                    for t in range(n_topics)), encoding="utf-8")
    _write_runs(demo, rng, relevance, twins, depth)
    marker.write_text(stamp)
    return demo


def _write_runs(demo: CocktailDemo, rng: np.random.Generator, relevance: np.ndarray,
                twins: np.ndarray, depth: int) -> None:
    """Each system scores every document: its skill × relevance (a twin shares its original's)
    plus noise, plus its LLM preference on LLM documents; a re-ranker re-scores its first
    stage's top `depth`."""
    n_topics, _ = relevance.shape
    demo.runs["bm25"].parent.mkdir(exist_ok=True)
    names = np.array([f"h{i}" for i in range(relevance.shape[1])]
                     + [f"l{i}" for i in twins.tolist()])
    original = np.concatenate([np.arange(relevance.shape[1]), twins])
    is_llm = np.concatenate([np.zeros(relevance.shape[1]), np.ones(len(twins))])
    tops: dict[str, list[np.ndarray]] = {}
    for tag, (skill, prefer, first) in COCKTAIL_SYSTEMS.items():
        lines, tops[tag] = [], []
        for t in range(n_topics):
            scores = skill * relevance[t, original] + rng.normal(0, 0.8, len(names)) \
                + prefer * is_llm
            candidates = np.arange(len(names)) if first is None else tops[first][t]
            order = candidates[np.argsort(-scores[candidates], kind="stable")][:depth]
            tops[tag].append(order)
            lines += [f"{t} Q0 {names[d]} {rank} {scores[d]:.6f} {tag}\n"
                      for rank, d in enumerate(order.tolist(), start=1)]
        demo.runs[tag].write_text("".join(lines), encoding="utf-8")
