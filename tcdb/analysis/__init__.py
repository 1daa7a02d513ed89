"""Pure analysis over DataFrames of per-topic scores: no database, no I/O.

Modules: `rank_correlation` (τ-b, Goodman–Kruskal γ — the tie-omitting τ —, τ_AP: every τ of
the project), `reusability` (τ, per-topic τ, rank changes, unjudged/new relevant, uniques),
`persistence` (ARP, RΔ, ER, ΔRI, p-values across snapshots), `significance` (pairwise tests
with multiple-comparison correction), `outcomes` (one-relevant-per-topic outcome breakdown),
`bootstrap` (seeded percentile intervals), `means` (the one mean every ranking uses),
`ranking_agreement` (KTU and RBO between two rankings of a topic, as repro_eval computes them).

Shared input convention: per-topic scores as a long DataFrame with columns `run` (or `system`),
`topic`, `value` for one measure (an optional `measure` column is allowed). Means follow
`trec_eval -c`: averaged over a given topic list, a topic a run has no score for counts 0.

pandas is imported inside the helpers below so that `import tcdb.analysis` stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["json_float", "long_scores", "mean_scores", "wide_scores"]


def _key_column(frame: pd.DataFrame) -> str:
    """Name of the column that identifies the scored thing (`run` wins over `system`)."""
    for name in ("run", "system"):
        if name in frame.columns:
            return name
    raise ValueError("per-topic scores need a 'run' or 'system' column")


def long_scores(
    per_topic: pd.DataFrame,
    measure: str | None = None,
    key: str | None = None,
    by: Sequence[str] = (),
) -> pd.DataFrame:
    """Validate per-topic scores and return a clean `[key, *by, topic, value]` frame.

    `by` names further identifying columns (e.g. `snapshot`): one score per key, by, topic.
    Why: every analysis needs one score per (run, topic) for one measure; mixing measures or
    duplicated rows would silently corrupt means, so both are errors here, not later.
    """
    key = key or _key_column(per_topic)
    ids = [key, *by, "topic"]
    missing = {*ids, "value"} - set(per_topic.columns)
    if missing:
        raise ValueError(f"per-topic scores lack column(s) {sorted(missing)}")
    frame = per_topic
    if "measure" in frame.columns:
        measures = frame["measure"].unique()
        if measure is not None:
            frame = frame[frame["measure"] == measure]
            if frame.empty:
                raise ValueError(f"no per-topic scores for measure {measure!r}")
        elif len(measures) > 1:
            raise ValueError(
                f"per-topic scores mix measures {sorted(map(str, measures))}; pass measure="
            )
    out = frame[[*ids, "value"]].reset_index(drop=True)
    if out["value"].isna().any():
        bad = out[out["value"].isna()].iloc[0]
        raise ValueError(f"missing score for {key} {bad[key]!r}, topic {bad['topic']!r}")
    dup = out.duplicated(ids)
    if dup.any():
        bad = out[dup].iloc[0]
        where = ", ".join(f"{c} {bad[c]!r}" for c in ids)
        raise ValueError(f"more than one score for {where}")
    return out.astype({"value": "float64"})


def wide_scores(
    per_topic: pd.DataFrame,
    topics: Iterable[Any] | None = None,
    measure: str | None = None,
) -> pd.DataFrame:
    """Topic × run matrix over `topics` (default: every topic seen), missing scores as 0.

    Why: `trec_eval -c` semantics — a run that returned nothing for a topic scores 0 on it —
    so every run is averaged over the same topic list.
    """
    frame = long_scores(per_topic, measure=measure)
    key = _key_column(frame)
    wide = frame.pivot(index="topic", columns=key, values="value")
    if topics is not None:
        topic_list = list(dict.fromkeys(topics))
        wide = wide.reindex(topic_list)
    wide = wide.fillna(0.0)
    wide.columns.name = key
    wide.index.name = "topic"
    return wide


def mean_scores(
    per_topic: pd.DataFrame,
    topics: Iterable[Any] | None = None,
    measure: str | None = None,
    aggregate_as: str | None = None,
) -> pd.Series:
    """Mean score per run over `topics` (default: all topics seen), `trec_eval -c` style: the
    one mean of `tcdb.analysis.means` (exact sum, rounded), so equal means tie. With
    `aggregate_as` a count measure (NumRet…) is summed instead, as trec_eval's `all` line:
    over one topic list the same order, so every τ stays the same."""
    import pandas as pd

    from tcdb.analysis.means import aggregate, column_means, sums_over_topics

    wide = wide_scores(per_topic, topics=topics, measure=measure)
    if wide.shape[0] == 0:
        raise ValueError("no topics to average over")
    if aggregate_as is not None and sums_over_topics(aggregate_as):
        means = pd.Series({c: aggregate(aggregate_as, wide[c].tolist(), wide.shape[0])
                           for c in wide.columns}, dtype="float64")
    else:
        means = column_means(wide)
    means.index.name = wide.columns.name
    means.name = "mean"
    return means


def union_topics(per_topic_a: pd.DataFrame, per_topic_b: pd.DataFrame,
               topics: Iterable[Any] | None = None) -> list[Any]:
    """The topics two score tables are compared over: `topics` as given (deduplicated), else
    every topic either table has, in order of first appearance."""
    import pandas as pd

    if topics is not None:
        return list(dict.fromkeys(topics))
    return list(dict.fromkeys(pd.concat([per_topic_a["topic"], per_topic_b["topic"]])))


def json_float(value: Any) -> float | None:
    """A plain float, or None for NaN/inf — so results serialise to JSON (NaN → null)."""
    if value is None:
        return None
    number = float(value)
    if number != number or number in (float("inf"), float("-inf")):
        return None
    return number
