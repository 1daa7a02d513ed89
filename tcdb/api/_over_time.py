"""A collection over time: persistence (LongEval), per-topic change, rankings compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tcdb.api._labels import Labels, _as_labels, _labels_or_none, _qrels, _speaks_python

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.reports.results import PersistenceReport


@_speaks_python()
def persistence(
    collection: str,
    snapshots: Labels,
    pivot: str,
    measures: Labels = ("nDCG@10",),
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    topics: str = "all",
    bootstrap: int = 0,
    seed: int = 0,
    systems: Labels | None = None,
    paired: bool = False,
    cross_snapshot: bool = False,
) -> PersistenceReport:
    """ARP, RΔ, ER, ΔRI and p-values of every system against `pivot` (the report's JSON).

    `qrels`: one name for every snapshot, one per snapshot in order, or {snapshot: name};
    `systems`: only these systems (the pivot is always in); `paired`: also the paired t-test
    on the core topics; `cross_snapshot`: the first snapshot's runs scored on every snapshot's
    qrels (documents and topics mapped by identity) instead of each snapshot's own runs."""
    from tcdb.reports.persistence import persistence_report

    return persistence_report(collection, _as_labels(snapshots, "snapshots"), pivot,
                              _as_labels(measures, "measures"), _qrels(qrels), topics,
                              bootstrap, seed, systems=_labels_or_none(systems, "systems"),
                              paired=paired, cross_snapshot=cross_snapshot)


@_speaks_python()
def per_topic_deltas(
    collection: str,
    snapshots: Labels,
    pivot: str,
    measures: Labels = ("nDCG@10",),
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    topics: str = "all",
    systems: Labels | None = None,
) -> pd.DataFrame:
    """Per-topic improvement of every system over the pivot, per snapshot (the LongEval plot)."""
    from tcdb.reports.persistence import per_topic_deltas_frame

    return per_topic_deltas_frame(collection, _as_labels(snapshots, "snapshots"), pivot,
                                  _as_labels(measures, "measures"), _qrels(qrels), topics,
                                  systems=_labels_or_none(systems, "systems"))


@_speaks_python()
def topic_deltas(
    collection: str,
    system: str,
    snapshots: Labels,
    measure: str = "nDCG@10",
    qrels: str | Sequence[str] | Mapping[str, str] = "original",
    pivot: str | None = None,
    topics: str | None = None,
) -> pd.DataFrame:
    """One system's per-topic change from snapshot A to B on the core topics (B − A), largest
    gain first, with the pivot's beside it: `topic_a, topic_b, topic_key, score_a, score_b,
    delta, pivot_a, pivot_b, pivot_delta` (LongEval's per-topic Δ figure). `topics`: only the
    core topics in this topic set."""
    import pandas as pd

    from tcdb.reports.topic_deltas import topic_deltas_report

    report = topic_deltas_report(collection, system, _as_labels(snapshots, "snapshots"),
                                 measure, _qrels(qrels), pivot, topics=topics)
    a, b = report["snapshots"]
    rows = [{"topic_a": r["topic"][a], "topic_b": r["topic"][b],
             **{k: v for k, v in r.items() if k != "topic"}} for r in report["topics"]]
    return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "score_a", "score_b",
                                       "delta", "pivot_a", "pivot_b", "pivot_delta"])


@_speaks_python(k="depth")
def ranking_agreement(
    collection: str,
    system: str,
    snapshots: Labels,
    depth: int = 1000,
    rbo_p: float = 0.8,
    topics: str | None = None,
) -> pd.DataFrame:
    """KTU and RBO between the system's rankings of each core topic in snapshots A and B,
    documents matched by identity (repro_eval's measures): `topic_a, topic_b, topic_key,
    n_first, n_later, n_compared, common, ktu, rbo, rbo_depth, reason`. `topics`: only the
    core topics in this topic set."""
    import pandas as pd

    from tcdb.reports.ranking_agreement import ranking_agreement_report

    report = ranking_agreement_report(collection, system, _as_labels(snapshots, "snapshots"),
                                      depth, rbo_p, topics=topics)
    a, b = report["snapshots"]
    rows = [{"topic_a": r["topic"][a], "topic_b": r["topic"][b],
             **{k: v for k, v in r.items() if k != "topic"}} for r in report["topics"]]
    return pd.DataFrame(rows, columns=["topic_a", "topic_b", "topic_key", "n_first", "n_later",
                                       "n_compared", "common", "ktu", "rbo", "rbo_depth",
                                       "reason"])
