"""Source bias (Cocktail): does a system rank LLM-written documents above human-written ones?

Pure functions over DataFrames and arrays, no database. Cocktail (Dai et al., ACL Findings 2024)
scores a run on the mixed corpus twice — against the judgments of the human-written documents
only, and against those of the LLM-generated ones only, each LLM rewrite carrying the judgment
of the human original it was rewritten from when it has none of its own — and compares:

    Relative Δ = (M_human − M_llm) / ((M_human + M_llm) / 2) × 100

positive when human-written documents are ranked higher, negative when LLM-generated ones are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tcdb.analysis import json_float
from tcdb.analysis.bootstrap import bootstrap_ci
from tcdb.analysis.means import DECIMALS, exact_mean, trec_eval_mean
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

__all__ = [
    "bias_correlation",
    "relative_delta",
    "run_bias",
    "source_qrels",
]


def source_qrels(judgments: pd.DataFrame, members: pd.DataFrame, source: str,
                 copy_twins: bool = True) -> tuple[pd.DataFrame, int]:
    """The judgments of one source's documents, and how many were copied from originals.

    `judgments`: `[topic, doc, grade]`; `members`: the snapshot's documents, `[doc, source,
    twin]` (`twin`: the original's doc, or -1). A judgment is kept when its document is of
    `source` in the snapshot; documents of other snapshots have no source and are left out.
    With `copy_twins` (Cocktail's rule) a document of `source` without a judgment for a topic
    gets its original's judgment for that topic, if the original has one.
    """
    of_source = members[members["source"] == source]
    own = judgments[judgments["doc"].isin(of_source["doc"])]
    if not copy_twins:
        return own.reset_index(drop=True), 0
    twins = of_source[of_source["twin"] >= 0][["doc", "twin"]]
    inherited = judgments.merge(twins, left_on="doc", right_on="twin", suffixes=("_o", ""))
    inherited = inherited[["topic", "doc", "grade"]]
    judged = pd.MultiIndex.from_frame(own[["topic", "doc"]])
    fresh = inherited[~pd.MultiIndex.from_frame(inherited[["topic", "doc"]]).isin(judged)]
    out = pd.concat([own[["topic", "doc", "grade"]], fresh], ignore_index=True)
    return out, len(fresh)


def relative_delta(human: Any, llm: Any) -> Any:
    """Cocktail's Relative Δ in percent, element-wise; NaN where both scores are 0."""
    h, m = np.asarray(human, dtype=float), np.asarray(llm, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(h + m != 0, (h - m) / ((h + m) / 2) * 100, np.nan)
    return np.round(out, DECIMALS)


def run_bias(human: np.ndarray, llm: np.ndarray, *, n_samples: int = BOOTSTRAP_SAMPLES,
             alpha: float = 0.05, seed: int = BOOTSTRAP_SEED) -> dict[str, Any]:
    """One run's bias from its per-topic scores under the two sources' qrels (same topics,
    unanswered ones 0): means, Relative Δ with a percentile bootstrap CI over topics, the
    per-topic Δ, and paired tests of human against LLM per topic (t-test, Wilcoxon; scipy).
    """
    from scipy import stats

    from tcdb.analysis.significance import _safe_p

    human, llm = np.asarray(human, dtype=float), np.asarray(llm, dtype=float)
    n = len(human)
    mean_h, mean_l = exact_mean(human.tolist(), n), exact_mean(llm.tolist(), n)
    delta = float(relative_delta(mean_h, mean_l))

    def statistic(weights: Sequence[np.ndarray]) -> np.ndarray:
        return np.asarray(relative_delta(weights[0] @ human, weights[0] @ llm))

    ci = bootstrap_ci(statistic, [n], n_samples=n_samples, alpha=alpha, seed=seed) \
        if n and n_samples else {"low": None, "high": None}
    return {
        "human": trec_eval_mean(human.tolist(), n), "llm": trec_eval_mean(llm.tolist(), n),
        "relative_delta": json_float(delta), "ci_low": ci["low"], "ci_high": ci["high"],
        "p_t": json_float(_safe_p(stats.ttest_rel, human, llm)),
        "p_wilcoxon": json_float(_safe_p(stats.wilcoxon, human, llm)),
        "per_topic_delta": [json_float(v) for v in relative_delta(human, llm).tolist()],
    }


def bias_correlation(effectiveness: Sequence[float], deltas: Sequence[float | None]
                     ) -> dict[str, Any]:
    """Pearson's r (scipy) between runs' effectiveness and their Relative Δ (Cocktail Fig. 1):
    r and p, None with fewer than three runs or a constant side."""
    from scipy import stats

    pairs = [(e, d) for e, d in zip(effectiveness, deltas, strict=True)
             if d is not None and np.isfinite(e) and np.isfinite(d)]
    if len(pairs) < 3 or len({e for e, _ in pairs}) < 2 or len({d for _, d in pairs}) < 2:
        return {"r": None, "p": None, "n_runs": len(pairs)}
    result = stats.pearsonr([e for e, _ in pairs], [d for _, d in pairs])
    return {"r": json_float(result.statistic), "p": json_float(result.pvalue),
            "n_runs": len(pairs)}
