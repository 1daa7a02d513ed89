"""Do two assessors agree? Cohen's κ on the documents both judged, and their confusion matrix.

κ = 1 − Σ w·O / Σ w·E over the confusion matrix O of the two assessors' grades and the matrix
E the marginals predict under independence (Cohen 1960, 1968). Weights w: 0 on the diagonal
and 1 off it (unweighted), |i − j| (linear) or (i − j)² (quadratic) for grades i and j, so a
grade 2 against 0 costs more than 2 against 1. The same κ as
`sklearn.metrics.cohen_kappa_score(a, b, labels=…, weights=…)` with the labels of the grade
scale (every grade from the lowest to the highest seen), which the tests check.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

WEIGHTS = ("none", "linear", "quadratic")

__all__ = ["WEIGHTS", "cohen_kappa", "confusion_matrix", "grade_labels", "kappa_of_confusion"]


def grade_labels(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Every grade from the lowest to the highest either assessor gave: the scale's steps."""
    seen = [*a, *b]
    if not seen:
        return []
    return list(range(int(min(seen)), int(max(seen)) + 1))


def confusion_matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int]) -> np.ndarray:
    """Counts[i, j]: documents assessor A graded labels[i] and assessor B labels[j]."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        matrix[index[int(x)], index[int(y)]] += 1
    return matrix


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: str = "none",
                labels: Sequence[int] | None = None) -> float:
    """Cohen's κ of two assessors' grades of the same documents; NaN when it is undefined
    (no document, or both gave one and the same grade throughout)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}")
    labels = list(labels) if labels is not None else grade_labels(a, b)
    return float(kappa_of_confusion(confusion_matrix(a, b, labels), weights))


def kappa_of_confusion(observed: np.ndarray, weights: str = "none") -> np.ndarray:
    """κ of one confusion matrix (L × L) or of many stacked (… × L × L), NaN where undefined.

    Why stacked: the bootstrap over topics sums each resample's per-topic matrices and needs
    κ for ten thousand of them at once.
    """
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}")
    observed = np.asarray(observed, dtype=float)
    size = observed.shape[-1]
    i, j = np.indices((size, size))
    if weights == "none":
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    else:
        w = ((i - j) ** 2).astype(float)
    n = observed.sum(axis=(-2, -1))
    rows, columns = observed.sum(axis=-1), observed.sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = rows[..., :, None] * columns[..., None, :] / n[..., None, None]
        disagreement = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - (w * observed).sum(axis=(-2, -1)) / disagreement
    return np.where((n > 0) & (disagreement > 0), kappa, np.nan)
