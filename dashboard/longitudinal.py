"""Cached loaders of the dashboard's longitudinal figures (the `snapshot_stats` operation, the
per-topic change of one system between two snapshots: `topic_deltas`): `tcdb.dashboard.data`'s
conventions — the database URL first, results kept for `TTL`, nothing computed or written."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from tcdb.dashboard.data import TTL, complete_labels, run_operation

if TYPE_CHECKING:
    from tcdb.reports.snapshot_stats import SnapshotStatsResult
    from tcdb.reports.topic_deltas import TopicDeltasResult


@st.cache_data(ttl=TTL, show_spinner=False)
def snapshot_stats(url: str, collection: str) -> dict[str, pd.DataFrame]:
    """`tcdb snapshot stats` over the complete snapshots, as frames: `churn` (transition,
    direction grew / shrank / same length, changed documents) and `grades` (snapshot, grade,
    judgments of the original qrels)."""
    labels = complete_labels(url, collection)
    if not labels:
        return {"churn": pd.DataFrame(columns=["transition", "direction", "changed documents"]),
                "grades": pd.DataFrame(columns=["snapshot", "grade", "judgments"])}
    # neither texts nor run entries are read: the page shows neither
    report: SnapshotStatsResult = run_operation(
        url, "snapshot_stats", collection=collection, snapshots=labels, tokens=False,
        rankings=False)
    churn = [{"transition": f"{c.a} → {c.b}", "direction": direction.replace("_", " "),
              "changed documents": getattr(c, direction)}
             for c in report.churn for direction in ("grew", "shrank", "same_length")]
    grades = [{"snapshot": s.label, "grade": str(grade), "judgments": n}
              for s in report.per_snapshot for grade, n in s.judgments_by_grade.items()]
    return {"churn": pd.DataFrame(churn, columns=["transition", "direction",
                                                  "changed documents"]),
            "grades": pd.DataFrame(grades, columns=["snapshot", "grade", "judgments"])}


@st.cache_data(ttl=TTL, show_spinner=False)
def topic_change(url: str, collection: str, system: str, a: str, b: str, measure: str,
                 qrels: tuple[str, str], pivot: str) -> pd.DataFrame:
    """`tcdb report topic-deltas` on stored scores: per core topic, the system's and the
    pivot's score in `b` minus `a` (`topic` as `b` names it, largest gain first)."""
    report: TopicDeltasResult = run_operation(
        url, "topic_deltas", collection=collection, system=system, snapshots=[a, b],
        measure=measure, qrels={a: qrels[0], b: qrels[1]}, pivot=pivot, compute=False)
    rows = [{"topic": r.topic[b], "topic_key": r.topic_key, "delta": r.delta,
             "pivot_delta": r.pivot_delta, "score_a": r.score_a, "score_b": r.score_b}
            for r in report.topics]
    return pd.DataFrame(rows, columns=["topic", "topic_key", "delta", "pivot_delta", "score_a",
                                       "score_b"])
