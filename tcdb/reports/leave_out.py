"""Zobel's uniques test, generalised: would a group's runs score the same had it not contributed?

For each group of contributing runs (by participant group, manual vs automatic, or category),
a `derived` qrels set is made from qrels A without the relevant documents that only that group's
runs placed in their top K (`tcdb.analysis.reusability.uniques_leave_out`). It is stored with its
parent, so it can be inspected and reused; the group's runs are evaluated with it and re-ranked
among every other run's scores under A. A big drop means the collection favours contributors.
The TREC-8 "minus manual runs" analysis is `by="manual"`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select

from tcdb.db import session_scope
from tcdb.errors import ConflictError, InputError
from tcdb.schema import QrelsKind, QrelsSet, Run

GROUPINGS = ("group", "manual", "category")


def group_of(run: Run, by: str) -> str:
    """The group a run belongs to; a run without a participant group is its own group."""
    if by == "group":
        return run.group_name or run.tag
    if by == "manual":
        return "manual" if run.is_manual else "automatic"
    if by == "category":
        return run.category.value if run.category is not None else "uncategorised"
    raise InputError("--by", None, f"group runs by one of {', '.join(GROUPINGS)}, not {by!r}")


def derived_name(qrels: str, by: str, group: str, depth: int) -> str:
    """The stored name of a leave-out qrels set: readable, and unique per parameters."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", group)
    return f"{qrels}-minus-{by}-{slug}-k{depth}"


def leave_out_report(
    collection: str,
    snapshot: str,
    qrels: str,
    depth: int,
    by: str = "group",
    measures: Sequence[str] = ("AP",),
    topics: str | None = None,
) -> dict[str, Any]:
    """Leave each group of contributing runs out of the qrels in turn; see the module docstring.

    Returns `{collection, snapshot, qrels, depth, by, topic_set, n_topics, measures: {name:
    {groups: [{group, qrels, n_removed, runs: [{tag, score_full, score_reduced, rank_full,
    rank_reduced, rank_change}], kendall_tau, tau_b, tau_ap, max_drop}]}}}`.
    """
    from tcdb.analysis import mean_scores
    from tcdb.analysis.reusability import (
        kendall_tau_omit_ties,
        rank_changes,
        tau_ap,
        tau_b,
        uniques_leave_out,
    )
    from tcdb.catalog import get_snapshot
    from tcdb.evaluation import evaluate, parse_measures
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids
    from tcdb.reports.reusability import (
        load_judgments,
        load_top_k,
        per_topic_frame,
        select_topics,
        stored_scores,
    )
    from tcdb.runs import get_runs

    started = time.perf_counter()
    if depth < 1:
        raise InputError("--depth", None, f"depth must be at least 1, got {depth}")
    if by not in GROUPINGS:
        raise InputError("--by", None, f"group runs by one of {', '.join(GROUPINGS)}, not {by!r}")
    names = parse_measures(measures)
    evaluate(collection, snapshot, qrels, names)
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        parent = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap)
        contributing = [r for r in run_list if r.contributed and r.n_entries > 0]
        if not contributing:
            raise InputError(None, None, f"no run of snapshot {snapshot!r} is marked as "
                             "contributing to the pools (import runs with --contributed)")
        groups: dict[str, list[Run]] = {}
        for run in contributing:
            groups.setdefault(group_of(run, by), []).append(run)
        if len(groups) < 2:
            raise InputError("--by", None, f"the contributing runs form a single {by} "
                             f"({next(iter(groups))!r}): nothing to leave out")
        conn = session.connection()
        top = load_top_k(conn, snap.id or 0, [r.id or 0 for r in contributing], depth)
        group_by_run = {r.id: g for g, runs in groups.items() for r in runs}
        top["group"] = top["run"].map(group_by_run)
        judgments = load_judgments(conn, parent.id or 0)
        derived: dict[str, str] = {}
        removed: dict[str, int] = {}
        for group in groups:
            reduced = uniques_leave_out(top, judgments, group)
            name = derived_name(qrels, by, group, depth)
            removed[group] = len(judgments) - len(reduced)
            _store_derived(session, snap, parent, name, reduced, by, group, depth)
            derived[group] = name
        judged = sorted(set(judgments["topic"].unique().tolist()))
        topic_names = select_topics(session, collection, snap.id or 0, judged, topics)
    for group, runs in groups.items():
        evaluate(collection, snapshot, derived[group], names, [r.tag for r in runs])

    result: dict[str, Any] = {
        "collection": collection, "snapshot": snapshot, "qrels": qrels, "depth": depth,
        "by": by, "topic_set": topics, "n_topics": len(topic_names), "measures": {},
    }
    with session_scope() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        ids = measure_ids(conn, names)
        run_ids = [r.id or 0 for r in run_list]
        tags = {r.id or 0: r.tag for r in run_list}
        done = evaluations(conn, parent.id or 0, run_ids, list(ids.values()))
        full_scores = stored_scores(conn, parent.id or 0, run_ids, list(ids.values()))
        reduced_scores = {}
        for group, runs in groups.items():
            qset = get_qrels_set(session, snap, derived[group])
            reduced_scores[group] = stored_scores(conn, qset.id or 0, [r.id or 0 for r in runs],
                                                  list(ids.values()))
    topic_list = list(topic_names.values())
    for name in names:
        mid = ids[name]
        usable = [r for r in run_ids if (r, mid) in done]
        full = per_topic_frame(full_scores, usable, tags, mid, topic_names)
        mean_full = mean_scores(full, topics=topic_list)
        report_groups = []
        for group, runs in groups.items():
            mine = [r.id or 0 for r in runs]
            reduced = per_topic_frame(reduced_scores[group], mine, tags, mid, topic_names)
            mean_reduced = mean_full.copy()
            mean_reduced.update(mean_scores(reduced, topics=topic_list))
            changes = rank_changes(mean_full, mean_reduced)
            own = changes[changes["run"].isin({r.tag for r in runs})]
            entries = [{"tag": row.run, "score_full": float(row.score_a),
                        "score_reduced": float(row.score_b), "rank_full": int(row.rank_a),
                        "rank_reduced": int(row.rank_b), "rank_change": int(row.rank_change)}
                       for row in own.itertuples(index=False)]
            report_groups.append({
                "group": group, "qrels": derived[group], "n_removed": removed[group],
                "runs": entries,
                "kendall_tau": _json(kendall_tau_omit_ties(mean_full, mean_reduced)),
                "tau_b": _json(tau_b(mean_full, mean_reduced)),
                "tau_ap": _json(tau_ap(mean_full, mean_reduced)),
                "max_drop": max((-e["rank_change"] for e in entries), default=0),
            })
        result["measures"][name] = {"n_runs": len(usable), "groups": report_groups}
    result["seconds"] = time.perf_counter() - started
    return result


def _json(value: float) -> float | None:
    from tcdb.analysis import json_float

    return json_float(value)


def _store_derived(session: Any, snap: Any, parent: QrelsSet, name: str, reduced: Any, by: str,
                   group: str, depth: int) -> None:
    """Store the leave-out qrels as `derived` (parent A), or reuse the stored set of that name.

    A stored set with different judgments means the contributing runs changed since: refused,
    because qrels sets are immutable.
    """
    from tcdb.collections.records import QrelRecord
    from tcdb.qrels import store_qrels
    from tcdb.queries import snapshot_topics
    from tcdb.reports.reusability import load_judgments

    conn = session.connection()
    existing = session.execute(select(QrelsSet).where(
        QrelsSet.snapshot_id == snap.id, QrelsSet.name == name)).scalar_one_or_none()
    rows = set(zip(reduced["topic"].tolist(), reduced["doc"].tolist(),
                   reduced["grade"].tolist(), strict=True))
    if existing is not None:
        stored = load_judgments(conn, existing.id or 0)
        same = set(zip(stored["topic"].tolist(), stored["doc"].tolist(),
                       stored["grade"].tolist(), strict=True)) == rows
        if existing.kind != QrelsKind.derived or existing.parent_id != parent.id or not same:
            raise ConflictError(f"qrels set {name!r} of {snap.label!r} exists with other "
                                "judgments (the contributing runs changed?): qrels sets are "
                                "immutable; remove it to derive it again")
        return
    topics = {t: ext for t, (ext, _) in snapshot_topics(conn, snap.id).items()}
    docs = _document_names(conn, snap.id, {d for _, d, _ in rows})
    records = (QrelRecord(topics[t], docs[d], g) for t, d, g in sorted(rows))
    store_qrels(session, snap, name, QrelsKind.derived, records, parent_id=parent.id,
                method="leave-out",
                description=f"{parent.name} without the relevant documents only {by} {group!r} "
                f"retrieved in its top {depth}")


def _document_names(conn: Any, snapshot_id: int, wanted: set[int]) -> dict[int, str]:
    """document.id → external id in the snapshot, for the documents asked for."""
    from tcdb.lookups import document_ids

    return {d: ext for ext, d in document_ids(conn, snapshot_id).items() if d in wanted}
