"""How the demo collection changes between snapshots: documents and topics come, go and
are rewritten or re-numbered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def document_churn(
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


def assign_ids(rng: np.random.Generator, present: np.ndarray,
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


def draw_topic_drift(rng: np.random.Generator, n0: int, n_snap: int, dropped: float,
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


def draw_topic_ids(rng: np.random.Generator, present: np.ndarray,
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


def churn_counts(present: np.ndarray, version: np.ndarray, ids: np.ndarray,
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
