"""Would a second judge (an LLM) rank the systems as the first (NIST assessors) does? The system
rankings by mean score under two qrels sets compared as the papers on LLM judges do.

* τ-b (`scipy.stats.kendalltau`) and τ_AP (Yilmaz et al. 2008; the first set's ranking is the
  truth) over every system (`tcdb.analysis.rank_correlation`);
* top-k τ: τ-b among the k systems ranked highest under the first set (Clarke and Dietz: an LLM
  judge disagrees most where it matters, among the best systems), beside τ_AP among them and
  how many of the first set's top k are also the second set's top k;
* RBO, extrapolated (Webber, Moffat, Zobel 2010, eq. 32) from the two rankings' top k:
  RBO_ext = X_k/k · p^k + (1 − p)/p · Σ_{d=1..k} X_d/d · p^d, X_d the systems the two top d
  share. Extrapolated, not truncated: two identical rankings score 1 at any k;
* the systems whose rank moves most; percentile bootstrap intervals over topics (topics drawn
  with replacement, the same draw for both sets, means recomputed and rounded as the one mean).

Rankings sort by the rounded mean descending, ties by name ascending (trectools' order, the
one τ_AP uses); ranks for the movers are 1 = best, ties sharing the best rank.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tcdb.analysis import json_float, mean_scores, wide_scores
from tcdb.analysis.bootstrap import bootstrap_ci
from tcdb.analysis.means import rounded
from tcdb.analysis.rank_correlation import descending_order, tau_ap, tau_b
from tcdb.analysis.reusability import rank_changes
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

__all__ = ["RANKING_FIGURES", "ranking_fidelity", "rbo_ext", "top_k_tau"]

RANKING_FIGURES = ("tau_b", "tau_ap", "top_k_tau_b", "top_k_tau_ap", "top_k_overlap", "rbo")


def rbo_ext(first: Sequence[Any], second: Sequence[Any], p: float, k: int) -> float:
    """Extrapolated rank-biased overlap of two rankings from their top k (Webber et al. 2010,
    eq. 32); k is cut to the shorter ranking."""
    if not 0 < p < 1:
        raise ValueError("p must lie strictly between 0 and 1")
    k = min(k, len(first), len(second))
    if k < 1:
        return float("nan")
    seen_a: set[Any] = set()
    seen_b: set[Any] = set()
    total = 0.0
    overlap = 0
    for d in range(1, k + 1):
        x, y = first[d - 1], second[d - 1]
        if x == y:
            overlap += 1
        else:
            overlap += (x in seen_b) + (y in seen_a)
        seen_a.add(x)
        seen_b.add(y)
        total += overlap / d * p ** d
    return overlap / k * p ** k + (1 - p) / p * total


def top_k_tau(scores_a: pd.Series, scores_b: pd.Series, k: int) -> dict[str, float | None]:
    """τ-b and τ_AP among the first ranking's top k systems, and how many of its top k are the
    second ranking's top k too."""
    names = list(scores_a.index)
    order_a = descending_order(scores_a.to_numpy(), names)
    order_b = descending_order(scores_b.reindex(scores_a.index).to_numpy(), names)
    top = [names[i] for i in order_a[:k]]
    overlap = len(set(top) & {names[i] for i in order_b[:k]})
    return {"top_k_tau_b": json_float(tau_b(scores_a[top], scores_b[top])),
            "top_k_tau_ap": json_float(tau_ap(scores_a[top], scores_b[top])),
            "top_k_overlap": float(overlap)}


def _figures(scores_a: pd.Series, scores_b: pd.Series, k: int, p: float
             ) -> dict[str, float | None]:
    """Every figure of `RANKING_FIGURES` for one pair of mean-score vectors."""
    names = list(scores_a.index)
    b = scores_b.reindex(scores_a.index)
    first = [names[i] for i in descending_order(scores_a.to_numpy(), names)]
    second = [names[i] for i in descending_order(b.to_numpy(), names)]
    return {"tau_b": json_float(tau_b(scores_a, b)), "tau_ap": json_float(tau_ap(scores_a, b)),
            **top_k_tau(scores_a, b, k), "rbo": json_float(rbo_ext(first, second, p, k))}


def ranking_fidelity(
    per_topic_a: pd.DataFrame,
    per_topic_b: pd.DataFrame,
    topics: Sequence[Any],
    k: int = 10,
    p: float = 0.9,
    movers: int = 5,
    n_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """The system rankings by mean score under sets A and B (long `[run, topic, value]` frames,
    `trec_eval -c` over `topics`) compared.

    Returns `{n_runs, n_topics, k, p, figures{RANKING_FIGURES}, runs[{run, score_a, rank_a,
    score_b, rank_b, rank_change}] (largest move first), movers[the first `movers` that
    moved], top_k[runs of A's top k], intervals{figure: bootstrap_ci dict} | None}`.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    topic_list = list(dict.fromkeys(topics))
    mean_a = mean_scores(per_topic_a, topics=topic_list)
    mean_b = mean_scores(per_topic_b, topics=topic_list)
    if set(mean_a.index) != set(mean_b.index):
        raise ValueError("per-topic scores under A and B must cover the same runs")
    mean_b = mean_b.reindex(mean_a.index)
    changes = rank_changes(mean_a, mean_b)
    runs = [{"run": str(r.run), "score_a": float(r.score_a), "rank_a": int(r.rank_a),
             "score_b": float(r.score_b), "rank_b": int(r.rank_b),
             "rank_change": int(r.rank_change)} for r in changes.itertuples(index=False)]
    names = list(mean_a.index)
    top_k = [str(names[i]) for i in descending_order(mean_a.to_numpy(), names)[:k]]
    intervals = None
    if n_samples and len(names) >= 2:
        xa = wide_scores(per_topic_a, topics=topic_list)[names].to_numpy()
        xb = wide_scores(per_topic_b, topics=topic_list)[names].to_numpy()
        intervals = _intervals(xa, xb, names, k, p, n_samples, seed, alpha)
    return {"n_runs": len(names), "n_topics": len(topic_list), "k": k, "p": p,
            "figures": _figures(mean_a, mean_b, k, p), "runs": runs,
            "movers": [r for r in runs if r["rank_change"] != 0][:movers], "top_k": top_k,
            "intervals": intervals}


def _intervals(xa: np.ndarray, xb: np.ndarray, names: list[Any], k: int, p: float,
               n_samples: int, seed: int, alpha: float) -> dict[str, dict[str, Any]]:
    """Bootstrap intervals of every figure. Every figure's `bootstrap_ci` draws the same
    resamples (one seed); each resample's rankings are compared once, keyed by its weights."""
    memo: dict[bytes, dict[str, np.ndarray]] = {}

    def rows(weights: np.ndarray) -> dict[str, np.ndarray]:
        key = hashlib.blake2b(weights.tobytes(), digest_size=16).digest()
        if key in memo:
            return memo[key]
        means_a, means_b = rounded(weights @ xa), rounded(weights @ xb)
        out = {figure: np.empty(len(means_a)) for figure in RANKING_FIGURES}
        for i in range(len(means_a)):
            sa, sb = pd.Series(means_a[i], index=names), pd.Series(means_b[i], index=names)
            for figure, value in _figures(sa, sb, k, p).items():
                out[figure][i] = np.nan if value is None else value
        memo[key] = out
        return out

    def statistic(figure: str) -> Any:
        return lambda weights: rows(weights[0])[figure]

    return {figure: bootstrap_ci(statistic(figure), [xa.shape[0]], n_samples, alpha, seed)
            for figure in RANKING_FIGURES}
