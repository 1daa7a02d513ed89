"""The systems' runs: every system scores each topic's candidates, and the runs are written
as TREC files.
"""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from pathlib import Path

import numpy as np

from .systems import DEMO_SNAPSHOTS, PIVOT, SYSTEMS
from .truth import Truth

RUN_METADATA = "runs.csv"  # each snapshot's table of its runs, beside them

SIGNAL = 1.1  # grade → score units; with noise of scale ~1 the pivot's nDCG@10 is ≈ 0.35
SHARED = 0.6  # weight of the noise every system shares (lexical look-alikes fool them all)


def rank_candidates(truth: Truth, shared: np.ndarray, own: np.ndarray,
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
            grade = truth.grades[j, t, keep].astype(np.float32) * SIGNAL
            hid = truth.hidden[t, keep]
            seen = np.where(hid[None, :], hidden_w, strength[:, j : j + 1])
            score = seen * grade[None, :] + SHARED * shared[t, keep][None, :] \
                + own[:, t, keep]
            order = np.argsort(-score, axis=1, kind="stable")[:, :depth]
            for s in range(n_sys):
                top = order[s]
                per_system[s].append((t, docs[keep[top]], score[s, top]))
        out.append(per_system)
    return out


def write_runs(runs_dir: Path, truth: Truth,
               rankings: list[list[list[tuple[int, np.ndarray, np.ndarray]]]],
               run_paths: list[dict[str, Path]], depth: int) -> None:
    """Replace ``runs/`` with one TREC run file per snapshot and system, and each snapshot's
    table of the runs' metadata (`RUN_METADATA`), as organisers hand them out."""
    if runs_dir.exists():
        shutil.rmtree(runs_dir)
    rank_text = [f"{rank} " for rank in range(1, depth + 1)]
    for j, paths in enumerate(run_paths):
        id_text = np.array([str(i) for i in truth.doc_ids[j].tolist()], dtype=object)
        for s, system in enumerate(SYSTEMS):
            path = paths[system.tag]
            path.parent.mkdir(parents=True, exist_ok=True)
            write_run_lines(path, truth, j, rankings[j][s], system.tag, id_text, rank_text)
        write_run_metadata(next(iter(paths.values())).parent / RUN_METADATA,
                           DEMO_SNAPSHOTS[j][1])


def write_run_metadata(path: Path, released: dt.date) -> None:
    """The systems as a `tcdb run import --metadata` table; in each snapshot the systems are
    submitted a week apart in `SYSTEMS` order after its release (a leaderboard over time)."""
    with path.open("w", encoding="utf-8", newline="") as f:
        table = csv.writer(f)
        table.writerow(["tag", "group", "runtype", "contributed", "category", "submitted",
                        "description"])
        for i, system in enumerate(SYSTEMS):
            table.writerow([system.tag, system.group, system.run_type,
                            "yes" if system.contributing else "no", system.category,
                            (released + dt.timedelta(days=7 * (i + 1))).isoformat(),
                            system.description])


def write_run_lines(path: Path, truth: Truth, j: int,
                    ranking: list[tuple[int, np.ndarray, np.ndarray]], tag: str,
                    id_text: np.ndarray, rank_text: list[str]) -> None:
    """Write a TREC run byte for byte as `tcdb.collections.runs.trec.write_run` would.

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
