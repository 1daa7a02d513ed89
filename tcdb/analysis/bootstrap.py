"""Seeded percentile bootstrap over topics for τ and for the persistence measures.

Resampling topics with replacement is the same as giving each topic a weight = (times drawn) / T.
We draw the index matrix once per group of topics (numpy Generator, `integers(0, T, (S, T))`),
turn it into an S × T weight matrix, and every mean for every resample is then one matrix
product — no Python loop over samples. Groups (the topics of different snapshots) are resampled
independently; score matrices that share topics (the same runs under qrels A and B) share one
group, so they are resampled jointly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from tcdb.analysis import json_float, union_topics, wide_scores
from tcdb.analysis.means import rounded
from tcdb.analysis.rank_correlation import goodman_kruskal_gamma_matrix, tau_b_matrix
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

__all__ = [
    "bootstrap_ci",
    "percentile_bounds",
    "persistence_ci",
    "resample_weights",
    "tau_ci",
]

Statistic = Callable[[Sequence[np.ndarray]], np.ndarray]


def resample_weights(n_topics: int, size: int, n_samples: int, rng: np.random.Generator
                     ) -> np.ndarray:
    """S × T weights of `size` topics drawn with replacement from `n_topics` (rows sum to 1).

    One drawn index matrix (`rng.integers(0, n_topics, (n_samples, size))`), counted per row:
    `weights @ scores` is then the mean of every resample at once. `size = n_topics` is the
    ordinary bootstrap; a smaller `size` draws subsets of that size (`tcdb.analysis.subset`).
    """
    if n_topics < 1 or size < 1:
        raise ValueError("cannot resample an empty topic set")
    index = rng.integers(0, n_topics, size=(n_samples, size))
    offsets = (np.arange(n_samples) * n_topics)[:, None]
    counts = np.bincount((index + offsets).ravel(), minlength=n_samples * n_topics)
    return counts.reshape(n_samples, n_topics) / size


def percentile_bounds(values: np.ndarray, alpha: float) -> np.ndarray:
    """The α/2 and 1 − α/2 percentiles of resampled values along the first axis (samples).

    Why not `scipy.stats.bootstrap(method="percentile")`: it resamples each sample to its own
    size (the subset check draws n of T topics), keeps NaN resamples (which make its interval
    NaN, where `bootstrap_ci` leaves them out and counts them) and re-derives α from the
    confidence level as (1 − (1 − α)) / 2, which moves about half the bounds by an ulp.
    """
    return np.percentile(values, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)


def bootstrap_ci(
    statistic: Statistic,
    group_sizes: Sequence[int],
    n_samples: int = BOOTSTRAP_SAMPLES,
    alpha: float = 0.05,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Percentile interval of a statistic of topic-weighted means.

    `statistic` takes one weight matrix per group (shape samples × topics of that group, rows
    summing to 1) and returns one value per row; weighted means are `weights @ scores`. The
    point estimate is the statistic under uniform weights (the plain topic means). Samples where
    the statistic is NaN (e.g. a zero denominator) are left out and counted in `n_nan`.
    Returns `{estimate, low, high, alpha, n_samples, n_nan}` (NaN as None).
    """
    if not 0 < alpha < 1:
        raise ValueError("alpha must be between 0 and 1")
    if n_samples < 1:
        raise ValueError("n_samples must be positive")
    rng = np.random.default_rng(seed)
    weights = [resample_weights(size, size, n_samples, rng) for size in group_sizes]
    uniform = [np.full((1, size), 1.0 / size) for size in group_sizes]
    estimate = float(np.asarray(statistic(uniform), dtype=float).reshape(-1)[0])
    values = np.asarray(statistic(weights), dtype=float).reshape(-1)
    finite = values[np.isfinite(values)]
    if finite.size:
        low, high = percentile_bounds(finite, alpha)
    else:
        low = high = float("nan")
    return {
        "estimate": json_float(estimate),
        "low": json_float(low),
        "high": json_float(high),
        "alpha": alpha,
        "n_samples": n_samples,
        "n_nan": int(values.size - finite.size),
    }


def tau_ci(
    per_topic_a: pd.DataFrame,
    per_topic_b: pd.DataFrame,
    topics: Iterable[Any] | None = None,
    method: Literal["omit_ties", "b"] = "omit_ties",
    n_samples: int = BOOTSTRAP_SAMPLES,
    alpha: float = 0.05,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, Any]:
    """Bootstrap CI of τ between the run rankings by mean score under A and under B.

    Topics are resampled jointly for A and B (the same resampled topic list scores both), the
    means recomputed, then τ between the two rankings: `omit_ties` is Goodman–Kruskal γ (the
    tie-omitting τ), `b` is τ-b (`tcdb.analysis.rank_correlation`).
    """
    topic_list = union_topics(per_topic_a, per_topic_b, topics)
    wa = wide_scores(per_topic_a, topics=topic_list)
    wb = wide_scores(per_topic_b, topics=topic_list)
    if set(wa.columns) != set(wb.columns):
        raise ValueError("per-topic scores under A and B must cover the same runs")
    xa = wa.to_numpy()
    xb = wb[wa.columns].to_numpy()
    if method == "omit_ties":
        tau_fn = goodman_kruskal_gamma_matrix
    elif method == "b":
        tau_fn = tau_b_matrix
    else:
        raise ValueError(f"unknown tau method {method!r}; use 'omit_ties' or 'b'")

    def statistic(weights: Sequence[np.ndarray]) -> np.ndarray:
        return tau_fn(rounded(weights[0] @ xa), rounded(weights[0] @ xb))

    return bootstrap_ci(statistic, [len(topic_list)], n_samples, alpha, seed)


def persistence_ci(
    per_topic: pd.DataFrame,
    snapshots: Sequence[str],
    pivot: str,
    system: str,
    topics: Mapping[str, Sequence[Any]] | None = None,
    n_samples: int = BOOTSTRAP_SAMPLES,
    alpha: float = 0.05,
    seed: int = BOOTSTRAP_SEED,
    sums: bool = False,
) -> dict[str, Any]:
    """Bootstrap CIs of a system's ARP per snapshot and RΔ, ER, ΔRI per later snapshot
    (with `sums`, a count's: ARP and RΔ of the sum over each snapshot's topics).

    Each snapshot's topics are resampled independently (the snapshots have their own topic
    sets); the system and the pivot are resampled together within a snapshot, since ER and ΔRI
    pair them by topic. Returns `{arp{snap}, result_delta{later}, er{later}, delta_ri{later}}`,
    each a `bootstrap_ci` dict (ER and ΔRI left empty for the pivot, fixed at 1 and 0). All
    measures share one seed, hence one set of resamples.
    """
    from tcdb.analysis.persistence import snapshot_matrices

    matrices = snapshot_matrices(per_topic, snapshots, topics)
    for name in (pivot, system):
        if name not in matrices[snapshots[0]].columns:
            raise ValueError(f"system {name!r} has no per-topic scores")
    s = [matrices[snap][system].to_numpy() for snap in snapshots]
    p = [matrices[snap][pivot].to_numpy() for snap in snapshots]
    sizes = [len(x) for x in s]
    scale = sizes if sums else [1] * len(sizes)  # a resampled sum is n × the resampled mean
    first = 0

    def run(statistic: Statistic) -> dict[str, Any]:
        return bootstrap_ci(statistic, sizes, n_samples, alpha, seed)

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)

    def arp(i: int) -> Statistic:
        return lambda w: scale[i] * (w[i] @ s[i])

    def result_delta(j: int) -> Statistic:
        return lambda w: scale[first] * (w[first] @ s[first]) - scale[j] * (w[j] @ s[j])

    def er(j: int) -> Statistic:
        return lambda w: ratio(w[j] @ (s[j] - p[j]), w[first] @ (s[first] - p[first]))

    def delta_ri(j: int) -> Statistic:
        def ri(w: Sequence[np.ndarray], i: int) -> np.ndarray:
            mean_p = w[i] @ p[i]
            return ratio(w[i] @ s[i] - mean_p, mean_p)

        return lambda w: ri(w, first) - ri(w, j)

    out: dict[str, Any] = {
        "arp": {snap: run(arp(i)) for i, snap in enumerate(snapshots)},
        "result_delta": {},
        "er": {},
        "delta_ri": {},
    }
    for j, later in enumerate(snapshots[1:], start=1):
        out["result_delta"][later] = run(result_delta(j))
        if system == pivot:
            continue
        out["er"][later] = run(er(j))
        out["delta_ri"][later] = run(delta_ri(j))
    return out
