"""How alike are two rankings of one topic? Kendall's τ Union (KTU) and rank-biased overlap (RBO).

Breuer et al. (SIGIR 2020) compare an original and a reproduced run topic by topic with these
two; here the two are one system's rankings of the same core topic in two snapshots, its
documents named by the collection's identity (its key: the id, or the URL), so a document
renamed between snapshots is still the same document. Both follow repro_eval 0.5.0
(`repro_eval.measure.document_order`) to the bit:

* KTU: the documents of both rankings (top `depth` of each) form a union sorted by name; each
  ranking becomes the list of its documents' positions in that union, and KTU is scipy's Kendall
  τ-b (`tcdb.analysis.rank_correlation.tau_b`) between the two lists, rounded to 14 decimals.
  repro_eval needs two lists of one length; when one ranking is shorter, both are cut to the
  shorter one's length (`n`), which is repro_eval's computation on those two lists. One
  document, or no order to compare: None. Note what repro_eval's construction measures: it pairs
  the two rankings rank by rank, so identical rankings give 1, but a reversed ranking gives −1
  only when the ranking runs in name order (in general it gives whatever τ the two position
  lists have).
* RBO: Clarke et al.'s normalised form as repro_eval reproduces it — Σ_{i<depth} p^i ·
  |A[:i+1] ∩ B[:i+1]| / (i+1), divided by Σ_{i<depth} p^i; a ranking shorter than `depth`
  simply stops growing. `ranking_agreement` evaluates it to `depth` but never past the longer
  of the two rankings (`rbo_depth`): further on no document is added, and repro_eval's
  default depth of 1000 would give two identical 20-document rankings an RBO below 1.

The rankings are lists of document names in the order evaluation sees (trec_eval's order).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from tcdb.analysis import json_float
from tcdb.analysis.means import trec_eval_mean
from tcdb.analysis.rank_correlation import tau_b

__all__ = ["ktu", "rbo", "ranking_agreement"]

KTU_DECIMALS = 14  # repro_eval rounds KTU to 14 decimals


def ktu(first: Sequence[str], later: Sequence[str], depth: int = 1000) -> float | None:
    """Kendall's τ Union between two rankings (repro_eval's `_KTU`); None when undefined."""
    n = min(len(first), len(later), depth)
    a, b = list(first[:n]), list(later[:n])
    if n < 2:
        return None
    union = sorted(set(a) | set(b))
    position = {doc: i for i, doc in enumerate(union)}
    tau = tau_b([position[d] for d in a], [position[d] for d in b])
    if math.isnan(tau):
        return None
    return float(round(tau, KTU_DECIMALS))


def rbo(ranking: Sequence[str], ideal: Sequence[str], p: float = 0.8, depth: int = 1000
        ) -> float:
    """Rank-biased overlap of `ranking` against `ideal` to `depth` (repro_eval's `_rbo`)."""
    seen_ranking: set[str] = set()
    seen_ideal: set[str] = set()
    score = normalizer = 0.0
    weight = 1.0
    for i in range(depth):
        if i < len(ranking):
            seen_ranking.add(ranking[i])
        if i < len(ideal):
            seen_ideal.add(ideal[i])
        score += weight * len(seen_ideal & seen_ranking) / (i + 1)
        normalizer += weight
        weight *= p
    return score / normalizer


def ranking_agreement(
    first: Mapping[Any, Sequence[str]],
    later: Mapping[Any, Sequence[str]],
    topics: Sequence[Any],
    *,
    depth: int = 1000,
    p: float = 0.8,
) -> dict[str, Any]:
    """Per topic KTU and RBO of the later ranking against the first, and their means.

    Returns `{topics: [{topic, n_first, n_later, n_compared, common, ktu, rbo, rbo_depth,
    reason}…],
    mean_ktu, mean_rbo, n_ktu, n_rbo}`. A topic without a ranking in one snapshot has no KTU
    or RBO (its `reason` says which); means are over the topics that have one (None if none).
    """
    if depth < 1:
        raise ValueError("depth must be at least 1")
    if not 0 < p < 1:
        raise ValueError("p must lie strictly between 0 and 1")
    rows: list[dict[str, Any]] = []
    for topic in topics:
        a, b = list(first.get(topic, ())), list(later.get(topic, ()))
        row: dict[str, Any] = {"topic": topic, "n_first": len(a), "n_later": len(b),
                               "n_compared": min(len(a), len(b), depth),
                               "common": len(set(a[:depth]) & set(b[:depth])),
                               "ktu": None, "rbo": None,
                               "rbo_depth": min(depth, max(len(a), len(b))), "reason": None}
        if not a or not b:
            row["reason"] = "no ranking in the " + ("first" if not a else "later") + " snapshot"
        else:
            row["ktu"] = ktu(a, b, depth)
            row["rbo"] = json_float(rbo(b, a, p, row["rbo_depth"]))
            if row["ktu"] is None:
                row["reason"] = "KTU needs two documents in both rankings"
        rows.append(row)
    ktus = [r["ktu"] for r in rows if r["ktu"] is not None]
    rbos = [r["rbo"] for r in rows if r["rbo"] is not None]
    return {"topics": rows,
            "mean_ktu": json_float(trec_eval_mean(ktus)) if ktus else None,
            "mean_rbo": json_float(trec_eval_mean(rbos)) if rbos else None,
            "n_ktu": len(ktus), "n_rbo": len(rbos)}
