"""The demo on disk: texts of every document version in the LongEval layout, and the digests
of the generated files that `demo.json` records, so a second `tcdb demo` reuses unchanged files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord

from .truth import Truth
from .words import WORDS, pseudo_words

MANIFEST = "demo.json"


def write_layout(rng: np.random.Generator, home: Path, truth: Truth,
                 qrels: list[list[QrelRecord]]) -> Any:
    """Texts for every document version, then the LongEval layout of the three snapshots."""
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web

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
    texts = texts_of_versions(rng, universe, np.array(parent, dtype=np.int64), truth, slots)
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


def texts_of_versions(rng: np.random.Generator, universe: int, parent: np.ndarray, truth: Truth,
                      slots: np.ndarray) -> list[str]:
    """Short synthetic texts (30–80 words); a rewrite keeps the start of its parent's text.

    Documents relevant to a topic and visible to lexical rankers carry the query's words; the
    hidden relevant ones do not (the vocabulary mismatch only the magical system overcomes).
    """
    filler = pseudo_words(rng, 2000)
    vocab = np.array(WORDS + filler, dtype=object)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    weights[: len(WORDS)] = weights[: len(WORDS)].mean()  # topical words: flat, common
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


def generated_files(out_dir: Path) -> list[Path]:
    """Every file the generator wrote: the layout's two roots (which the writer replaces
    whole) and the runs. Caches ir_datasets adds later are listed too, but only until the next
    rewrite; the manifest records the files as written."""
    from tcdb.demo.longeval_files import longeval_web_layout

    layout = longeval_web_layout(out_dir / "ir_datasets")
    files: list[Path] = []
    for folder in (layout.french.parents[1], layout.test.parent, out_dir / "runs"):
        if folder.exists():
            files.extend(p for p in folder.rglob("*") if p.is_file())
    return sorted(files)


def digests(out_dir: Path) -> dict[str, str]:
    """relative path → xxh3-128 of the bytes, for the generated files."""
    import xxhash

    return {
        p.relative_to(out_dir).as_posix(): xxhash.xxh3_128_hexdigest(p.read_bytes())
        for p in generated_files(out_dir)
    }


def unchanged_output(out_dir: Path, parameters: dict[str, Any]) -> bool:
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
