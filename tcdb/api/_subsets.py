"""Topic subsets: a run's mean over a subset against the bootstrap interval of its full mean."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.api._labels import Labels, _labels_or_none, _speaks_python

if TYPE_CHECKING:
    import pandas as pd


@_speaks_python(samples="n_samples")
def subset_ci(
    collection: str,
    snapshot: str,
    topics: str,
    runs: Labels | None = None,
    measure: str = "nDCG@10",
    qrels: str = "original",
    n_samples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Per run (`tcdb report subset`): `run, system, mean, ci_low, ci_high, subset_mean, delta,
    position` — the full-topic mean, its percentile bootstrap interval when each resample
    draws as many topics as the topic set `topics` has judged, the mean over those topics,
    and whether it lies `below`, `inside` or `above`. The rest of the report (`for_model`,
    `n_topics`, `n_subset`, `skipped`, …) is in `.attrs`."""
    import pandas as pd

    from tcdb.reports.subset import subset_report

    report = subset_report(collection, snapshot, topics, _labels_or_none(runs, "runs"),
                           measure, qrels, n_samples, seed, alpha)
    frame = pd.DataFrame(report["runs"], columns=["run", "system", "mean", "ci_low",
                                                  "ci_high", "subset_mean", "delta",
                                                  "position"])
    frame.attrs.update({k: v for k, v in report.items() if k != "runs"})
    return frame
