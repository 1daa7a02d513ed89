"""Do two judges (NIST assessors and an LLM, two assessors) give the same labels? Agreement on the
(topic, document) pairs both judged, as the papers on LLM judges report it.

* Cohen's κ unweighted, linear and quadratic weighted (`tcdb.analysis.kappa`, equal to
  `sklearn.metrics.cohen_kappa_score` with the grade scale as labels);
* Krippendorff's α, ordinal and nominal (Krippendorff 2011, "Computing Krippendorff's alpha-
  reliability"): two coders and no missing value, so the coincidence matrix is o = C + Cᵀ of the
  confusion matrix C, n_c its row sums, n = 2N, and α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck
  with δ²_ck = [c ≠ k] (nominal) or (Σ_{g=c..k} n_g − (n_c + n_k)/2)² (ordinal). Equal to the
  `krippendorff` package's `alpha(reliability_data, level_of_measurement=…)`;
* the same on labels binarised at a relevance level (grade ≥ `relevant` is relevant);
* per topic and overall, with percentile bootstrap intervals over topics: a resample draws
  topics with replacement and pools the pairs of every topic drawn (each topic's confusion
  matrix counted as often as it is drawn), through `tcdb.analysis.bootstrap.bootstrap_ci`.

Input: a DataFrame `[topic, grade_a, grade_b]`, one row per pair both judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tcdb.analysis import json_float
from tcdb.analysis.bootstrap import bootstrap_ci
from tcdb.analysis.kappa import grade_labels, kappa_of_confusion
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

__all__ = ["ALPHA_LEVELS", "FIGURES", "alpha_of_confusion", "krippendorff_alpha",
           "label_agreement", "topic_confusions"]

ALPHA_LEVELS = ("ordinal", "nominal")
# every figure of the label agreement, overall, per topic and with an interval
FIGURES = ("kappa", "kappa_linear", "kappa_quadratic", "alpha_ordinal", "alpha_nominal",
           "kappa_binary", "alpha_binary", "agreement", "agreement_binary")


def alpha_of_confusion(confusion: np.ndarray, level: str = "ordinal") -> np.ndarray:
    """Krippendorff's α of two coders from their confusion matrix (L × L, grades in scale
    order) or many stacked (… × L × L); NaN where it is undefined (no pair, one value only)."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {', '.join(ALPHA_LEVELS)}, not {level!r}")
    c = np.asarray(confusion, dtype=float)
    o = c + np.swapaxes(c, -1, -2)  # the coincidence matrix
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    size = c.shape[-1]
    if level == "nominal":
        delta = np.broadcast_to((np.arange(size)[:, None] != np.arange(size)[None, :]
                                 ).astype(float), o.shape)
    else:
        cumulative = np.cumsum(n_c, axis=-1)
        low = np.minimum.outer(np.arange(size), np.arange(size))
        high = np.maximum.outer(np.arange(size), np.arange(size))
        before_low = np.where(low > 0, np.take(cumulative, np.maximum(low - 1, 0), axis=-1), 0)
        between = np.take(cumulative, high, axis=-1) - before_low  # Σ n_g, g = c..k
        delta = (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    return np.where((n > 0) & (expected > 0), alpha, np.nan)


def krippendorff_alpha(a: Sequence[int], b: Sequence[int], level: str = "ordinal",
                       labels: Sequence[int] | None = None) -> float:
    """α of two coders' grades of the same units (see `alpha_of_confusion`)."""
    from tcdb.analysis.kappa import confusion_matrix

    labels = list(labels) if labels is not None else grade_labels(a, b)
    return float(alpha_of_confusion(confusion_matrix(a, b, labels), level))


def _binary(confusion: np.ndarray, labels: Sequence[int], relevant: int) -> np.ndarray:
    """Stacked confusion matrices folded to 2 × 2: not relevant (grade < relevant), relevant."""
    rel = np.asarray([int(g >= relevant) for g in labels], dtype=int)  # none: no pair
    fold = np.zeros((len(labels), 2))
    fold[np.arange(len(labels)), rel] = 1.0
    return fold.T @ np.asarray(confusion, dtype=float) @ fold


def _agreement(confusion: np.ndarray) -> np.ndarray:
    """The share of pairs both judges gave the same label (NaN for none)."""
    total = confusion.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.trace(confusion, axis1=-2, axis2=-1) / total


def _figures(confusion: np.ndarray, labels: Sequence[int], relevant: int
             ) -> dict[str, np.ndarray]:
    """Every figure of `FIGURES` for stacked confusion matrices (… × L × L)."""
    binary = _binary(confusion, labels, relevant)
    return {
        "kappa": kappa_of_confusion(confusion, "none"),
        "kappa_linear": kappa_of_confusion(confusion, "linear"),
        "kappa_quadratic": kappa_of_confusion(confusion, "quadratic"),
        "alpha_ordinal": alpha_of_confusion(confusion, "ordinal"),
        "alpha_nominal": alpha_of_confusion(confusion, "nominal"),
        "kappa_binary": kappa_of_confusion(binary, "none"),
        "alpha_binary": alpha_of_confusion(binary, "nominal"),
        "agreement": _agreement(np.asarray(confusion, dtype=float)),
        "agreement_binary": _agreement(binary),
    }


def topic_confusions(pairs: pd.DataFrame, labels: Sequence[int]
                     ) -> tuple[list[Any], np.ndarray]:
    """The topics (in order of first appearance) and their confusion matrices (T × L × L)."""
    topics = list(dict.fromkeys(pairs["topic"].tolist()))
    index = {label: i for i, label in enumerate(labels)}
    where = {topic: i for i, topic in enumerate(topics)}
    out = np.zeros((len(topics), len(labels), len(labels)), dtype=np.int64)
    t = pairs["topic"].map(where).to_numpy(dtype=int)
    a = pairs["grade_a"].map(index).to_numpy(dtype=int)
    b = pairs["grade_b"].map(index).to_numpy(dtype=int)
    np.add.at(out, (t, a, b), 1)
    return topics, out


def label_agreement(
    pairs: pd.DataFrame,
    relevant: int = 1,
    n_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """κ (three weightings), α (ordinal, nominal), binary κ and α, raw agreement and the
    confusion matrix of two judges overall and per topic; bootstrap intervals over topics.

    Returns `{labels, confusion, confusion_binary, n_pairs, n_topics, overall{figure},
    per_topic[{topic, n_pairs, figure…}], intervals{figure: bootstrap_ci dict} | None}`
    (NaN as None). `n_samples = 0`: no intervals.
    """
    missing = {"topic", "grade_a", "grade_b"} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs lack column(s) {sorted(missing)}")
    a = pairs["grade_a"].astype(int).tolist()
    b = pairs["grade_b"].astype(int).tolist()
    labels = grade_labels(a, b)
    topics, per_topic = topic_confusions(pairs.astype({"grade_a": int, "grade_b": int}), labels)
    total = per_topic.sum(axis=0)
    overall = _figures(total, labels, relevant)
    each = _figures(per_topic, labels, relevant)
    rows = [{"topic": topic, "n_pairs": int(per_topic[i].sum()),
             **{key: json_float(each[key][i]) for key in FIGURES}}
            for i, topic in enumerate(topics)]
    intervals = None
    if n_samples and topics:
        flat = per_topic.reshape(len(topics), -1).astype(float)
        size = len(labels)
        intervals = {}
        for key in FIGURES:
            def statistic(weights: Sequence[np.ndarray], key: str = key) -> np.ndarray:
                counts = np.rint(weights[0] * len(topics)) @ flat  # topics drawn × their pairs
                return _figures(counts.reshape(-1, size, size), labels, relevant)[key]

            intervals[key] = bootstrap_ci(statistic, [len(topics)], n_samples, alpha, seed)
    return {
        "labels": labels,
        "confusion": total.tolist(),
        "confusion_binary": _binary(total, labels, relevant).astype(int).tolist(),
        "n_pairs": int(total.sum()),
        "n_topics": len(topics),
        "overall": {key: json_float(overall[key]) for key in FIGURES},
        "per_topic": rows,
        "intervals": intervals,
    }

