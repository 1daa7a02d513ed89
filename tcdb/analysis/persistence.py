"""Is a system's effectiveness persistent across snapshots? ARP, RΔ, ER and ΔRI vs a pivot.

Follows the LongEval persistence study (Keller, Breuer, Schaer) built on the replicability
measures of Breuer et al. (SIGIR 2020). The first snapshot plays the part of the original
experiment and each later snapshot that of a replication on *another* collection — repro_eval's
other-collection case — so every later snapshot is compared with the first, each mean taken over
that snapshot's own topics (`trec_eval -c`: a topic a system has no score for counts 0):

* ARP(s) — mean score of a system in snapshot s.
* RΔ = ARP(first) − ARP(later); relative drop = RΔ / ARP(first).
* ER = mean_t∈later(S − P) / mean_t∈first(S − P): the share of S's improvement over the pivot
  P that survives (repro_eval `overall_effects.ER`).
* ΔRI = RI(first) − RI(later), RI = (ARP(S) − ARP(P)) / ARP(P) (repro_eval `DRI`).
* p-value: unpaired two-sided Student t-test (`scipy.stats.ttest_ind`, equal variances, as
  repro_eval's `statistics.ttest(..., rpd=False)`) between S's per-topic scores in the first and
  the later snapshot. As repro_eval does, a NaN p-value for identical score lists becomes 1.0.
* paired p-value (on request): two-sided paired t-test (`scipy.stats.ttest_rel`, as repro_eval's
  `statistics.ttest(..., rpd=True)`) over the core topics of the two snapshots — those in both
  topic lists, matched by topic identity — the same NaN → 1.0 rule for identical scores.

The pivot itself has no ER or ΔRI: its improvement over itself is 0/0, so both are None (shown
as –), not a conventional 1 and 0 that would read as a measured perfect persistence. A zero
denominator (no improvement in the first snapshot, a zero pivot or first-snapshot mean) gives
NaN — None in the JSON-able table — where repro_eval would return inf or NaN with a numpy
warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from tcdb.analysis import json_float, long_scores
from tcdb.analysis.means import DECIMALS, aggregate, exact_mean, sums_over_topics

__all__ = [
    "effect_ratio",
    "delta_relative_improvement",
    "persistence_table",
    "per_topic_deltas",
    "snapshot_matrices",
    "snapshot_paired_ttest",
    "snapshot_ttest",
]


def _ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, NaN when the denominator is zero or either side is NaN."""
    if denominator == 0 or np.isnan(denominator) or np.isnan(numerator):
        return float("nan")
    return float(numerator / denominator)


def effect_ratio(
    s_first: np.ndarray, p_first: np.ndarray, s_later: np.ndarray, p_later: np.ndarray
) -> float:
    """ER: mean per-topic improvement of S over P in the later snapshot ÷ in the first.

    Arrays are per-topic scores aligned by topic within each snapshot (repro_eval computes the
    mean of the per-topic differences, so we do too, for bit-level agreement).
    """
    first = float(np.mean(np.asarray(s_first) - np.asarray(p_first)))
    later = float(np.mean(np.asarray(s_later) - np.asarray(p_later)))
    return _ratio(later, first)


def _relative_improvement(s: np.ndarray, p: np.ndarray) -> float:
    """RI = (mean S − mean P) / mean P, NaN for a zero pivot mean."""
    mean_s = float(np.asarray(s).mean())
    mean_p = float(np.asarray(p).mean())
    return _ratio(mean_s - mean_p, mean_p)


def delta_relative_improvement(
    s_first: np.ndarray, p_first: np.ndarray, s_later: np.ndarray, p_later: np.ndarray
) -> float:
    """ΔRI = RI(first) − RI(later); 0 means the relative improvement persisted exactly."""
    return _relative_improvement(s_first, p_first) - _relative_improvement(s_later, p_later)


def snapshot_matrices(
    per_topic: pd.DataFrame,
    snapshots: Sequence[str],
    topics: Mapping[str, Sequence[Any]] | None = None,
) -> dict[str, pd.DataFrame]:
    """Per snapshot, a topic × system matrix over that snapshot's topics, missing scores 0.

    A snapshot's topics are `topics[snapshot]` when given, else every topic scored in it.
    Every system must appear in every snapshot: a system with no run there cannot be compared.
    """
    if "snapshot" not in per_topic.columns:
        raise ValueError("per-topic scores lack column 'snapshot'")
    if len(set(snapshots)) != len(snapshots) or len(snapshots) < 1:
        raise ValueError("snapshots must be a non-empty list of distinct labels")
    frame = long_scores(per_topic.rename(columns={"run": "system"}), key="system", by=("snapshot",))
    systems = list(dict.fromkeys(frame["system"]))
    matrices: dict[str, pd.DataFrame] = {}
    for snap in snapshots:
        part = frame[frame["snapshot"] == snap]
        if part.empty:
            raise ValueError(f"no per-topic scores for snapshot {snap!r}")
        present = set(part["system"])
        absent = [s for s in systems if s not in present]
        if absent:
            raise ValueError(f"system(s) {absent} have no scores in snapshot {snap!r}")
        wide = part.pivot(index="topic", columns="system", values="value")
        if topics is not None and snap in topics:
            wide = wide.reindex(list(dict.fromkeys(topics[snap])))
        matrices[snap] = wide.reindex(columns=systems).fillna(0.0)
        if matrices[snap].shape[0] == 0:
            raise ValueError(f"snapshot {snap!r} has no topics")
    return matrices


def persistence_table(
    per_topic: pd.DataFrame,
    snapshots: Sequence[str],
    pivot: str,
    topics: Mapping[str, Sequence[Any]] | None = None,
    *,
    paired: bool = False,
    measure: str | None = None,
) -> list[dict[str, Any]]:
    """One JSON-able record per system (pivot first), each later snapshot against the first.

    The ARP of a count `measure` (NumRet…) is its sum over the topics, as trec_eval's `all`
    line gives it, and RΔ the change of that sum; ER, ΔRI and the t-tests stay defined on
    per-topic means (within a snapshot the sum is n × the mean: ΔRI's ratios are the same).

    Record keys: `system`, `is_pivot`, `arp{snapshot}`, and keyed by the later snapshot's label
    `result_delta`, `relative_drop`, `er`, `delta_ri` (None for the pivot), `p_value`; with
    `paired`, also `p_value_paired` and `n_paired` (the core topics it pairs). NaN is None.
    """
    matrices = snapshot_matrices(per_topic, snapshots, topics)
    first = snapshots[0]
    systems = list(matrices[first].columns)
    if pivot not in systems:
        raise ValueError(f"pivot {pivot!r} has no per-topic scores")
    order = [pivot] + [s for s in systems if s != pivot]
    counts = measure is not None and sums_over_topics(measure)
    records = []
    for system in order:
        is_pivot = system == pivot
        exact = {snap: (aggregate(measure or "", matrices[snap][system].tolist()) if counts
                        else exact_mean(matrices[snap][system].tolist())) for snap in snapshots}
        arp = {snap: round(value, DECIMALS) for snap, value in exact.items()}
        record: dict[str, Any] = {
            "system": system,
            "is_pivot": is_pivot,
            "arp": {snap: json_float(v) for snap, v in arp.items()},
            "result_delta": {},
            "relative_drop": {},
            "er": {},
            "delta_ri": {},
            "p_value": {},
        }
        if paired:
            record["p_value_paired"] = {}
            record["n_paired"] = {}
        s1 = matrices[first][system].to_numpy()
        p1 = matrices[first][pivot].to_numpy()
        for later in snapshots[1:]:
            s2 = matrices[later][system].to_numpy()
            p2 = matrices[later][pivot].to_numpy()
            delta = exact[first] - exact[later]
            record["result_delta"][later] = json_float(delta)
            record["relative_drop"][later] = json_float(_ratio(delta, exact[first]))
            if is_pivot:
                er = dri = float("nan")  # 0/0: the pivot's improvement over itself
            else:
                er = effect_ratio(s1, p1, s2, p2)
                dri = delta_relative_improvement(s1, p1, s2, p2)
            record["er"][later] = json_float(er)
            record["delta_ri"][later] = json_float(dri)
            record["p_value"][later] = json_float(
                snapshot_ttest(matrices[first][system], matrices[later][system])
            )
            if paired:
                p, n = snapshot_paired_ttest(matrices[first][system], matrices[later][system])
                record["p_value_paired"][later] = json_float(p)
                record["n_paired"][later] = n
        records.append(record)
    return records


def snapshot_ttest(first: pd.Series, later: pd.Series) -> float:
    """p-value of the unpaired t-test between a system's per-topic scores in two snapshots.

    Mirrors repro_eval: `ttest_ind` with equal variances; when that p is NaN and the two
    per-topic score maps are identical (same topics, same values), the p-value is 1.0.
    """
    p = float(stats.ttest_ind(first.to_numpy(), later.to_numpy()).pvalue)
    if np.isnan(p) and first.to_dict() == later.to_dict():
        return 1.0
    return p


def snapshot_paired_ttest(first: pd.Series, later: pd.Series) -> tuple[float, int]:
    """(p-value, topics paired) of the paired t-test between a system's scores in two
    snapshots, over the topics both have (the core topics; Series indexed by topic identity).

    Mirrors repro_eval's `ttest(..., rpd=True)`: `ttest_rel`; a NaN p for identical score
    lists is 1.0. Fewer than two shared topics: NaN.
    """
    shared = set(later.index)
    common = [t for t in first.index if t in shared]
    if len(common) < 2:
        return float("nan"), len(common)
    a, b = first.loc[common].to_numpy(), later.loc[common].to_numpy()
    p = float(stats.ttest_rel(a, b).pvalue)
    if np.isnan(p) and np.array_equal(a, b):
        return 1.0, len(common)
    return p, len(common)


def per_topic_deltas(
    per_topic: pd.DataFrame,
    snapshots: Sequence[str],
    pivot: str,
    topics: Mapping[str, Sequence[Any]] | None = None,
) -> pd.DataFrame:
    """`[system, snapshot, topic, delta]`: each non-pivot system's score minus the pivot's.

    Why: ER summarises the mean improvement; the per-topic deltas show where it came from and
    whether it is carried by a few topics.
    """
    matrices = snapshot_matrices(per_topic, snapshots, topics)
    if pivot not in matrices[snapshots[0]].columns:
        raise ValueError(f"pivot {pivot!r} has no per-topic scores")
    parts = []
    for snap in snapshots:
        wide = matrices[snap]
        deltas = wide.drop(columns=[pivot]).sub(wide[pivot], axis=0)
        long = deltas.reset_index().melt(id_vars="topic", var_name="system", value_name="delta")
        long.insert(1, "snapshot", snap)
        parts.append(long[["system", "snapshot", "topic", "delta"]])
    out = pd.concat(parts, ignore_index=True)
    return out.astype({"delta": "float64"})
