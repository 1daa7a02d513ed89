"""Zobel's uniques test, generalised: would a group's runs score the same had it not contributed?

For each group of contributing runs (by participant group, run type — automatic, manual,
feedback — or category), qrels A loses the relevant documents that only that group's runs placed
in their top K (`tcdb.analysis.reusability.uniques_leave_out`); the group's runs are scored on
what is left and re-ranked among every other run's scores under A. A big drop means the
collection favours contributors. The TREC-8 "minus manual runs" analysis is `by="run-type"`.

A report reads: the reduced qrels and the group's scores on them live in memory. With `save`
they are stored as `derived` qrels sets (parent A, named `<save>-<group>`) and evaluated, so
they can be inspected, exported and reused.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, field_validator
from sqlalchemy import select
from sqlmodel import Session, col

from tcdb.errors import ConflictError, FieldError, InputError
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import qrels_option, topics_option
from tcdb.schema import QrelsKind, QrelsSet, Run, Snapshot
from tcdb.scoring.measures import MeasureNames
from tcdb.vocabulary import Grouping

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.queries import ScoreMap

BY_REASON = "group runs by one of {choices}, not {value!r}"


def grouping(value: Grouping | str) -> Grouping:
    """`value` as a Grouping; a FieldError on `by` names the choices."""
    try:
        return Grouping(value)
    except ValueError:
        choices = ", ".join(member.value for member in Grouping)
        raise FieldError("by", BY_REASON.format(value=value, choices=choices)) from None


def group_of(run: Run, by: Grouping | str) -> str:
    """The group a run belongs to; a run without a participant group is its own group."""
    by = grouping(by)
    if by is Grouping.group:
        return run.group_name or run.tag
    if by is Grouping.run_type:
        return run.run_type.value
    return run.category.value if run.category is not None else "uncategorised"


def derived_name(prefix: str, group: str) -> str:
    """The stored name of a group's leave-out qrels set: `<prefix>-<group>`, made name-safe."""
    from tcdb.names import made_name

    return made_name(f"{prefix}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', group)}", "save")


class LeaveOutRequest(Request):
    """Which qrels set, pool depth and grouping a leave-one-group-out report tests."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()  # set A, to leave groups out of
    depth: int = option(ge=1, help="Pool depth K of the contributing runs.")
    by: Grouping = option(Grouping.group, help="Leave out each participant group, each run "
                          "type (automatic, manual, feedback) or each category.")
    measures: MeasureNames = option(["AP"], help="Measure (repeat).", short="-m")
    topics: Name = topics_option()
    save: Name | None = option(
        None, metavar="PREFIX", help="Also store each group's reduced qrels as a derived set "
        "PREFIX-GROUP, with the group's scores on it.")
    compute: bool = option(True, help="Compute missing scores under the qrels first (else "
                           "only read).")

    @field_validator("by", mode="before")
    @classmethod
    def _grouping(cls, value: Grouping | str) -> Grouping:
        return grouping(value)


class LeaveOutRun(BaseModel):
    """One run of the group left out: full and reduced score and rank."""

    run: str
    score_full: float
    score_reduced: float
    rank_full: int
    rank_reduced: int
    rank_change: int


class LeaveOutGroup(BaseModel):
    """One group left out: its runs' rank changes and τ between the full and reduced rankings."""

    group: str
    qrels: str | None  # the stored derived set, with `save`
    n_removed: int
    runs: list[LeaveOutRun]
    kendall_tau: float | None
    tau_b: float | None
    tau_ap: float | None
    max_drop: int


class LeaveOutMeasure(BaseModel):
    n_runs: int
    groups: list[LeaveOutGroup]


class LeaveOutResult(Result):
    """Zobel's uniques test, per measure and group."""

    collection: str
    snapshot: str
    qrels: str
    depth: int
    by: str
    topics: str
    n_topics: int
    saved: str | None
    measures: dict[str, LeaveOutMeasure]
    seconds: float
    lineage: Lineage | None = None  # the full qrels (and the stored reduced ones), the runs

    def to_frame(self) -> pd.DataFrame:
        """One row per measure × group left out × run of that group: full and reduced score
        and rank, and the group's τ, τ-b, τ_AP and removed relevant documents."""
        import pandas as pd

        columns = ["measure", "group", "run", "score_full", "score_reduced", "rank_full",
                   "rank_reduced", "rank_change", "n_removed", "kendall_tau", "tau_b",
                   "tau_ap", "qrels"]
        rows = [{"measure": name, "group": g.group, **run.model_dump(),
                 "n_removed": g.n_removed, "kendall_tau": g.kendall_tau, "tau_b": g.tau_b,
                 "tau_ap": g.tau_ap, "qrels": g.qrels}
                for name, m in self.measures.items() for g in m.groups for run in g.runs]
        return pd.DataFrame(rows, columns=columns)


@operation("leave_out", command="report leave-out")
def leave_out(request: LeaveOutRequest, db: Database) -> LeaveOutResult:
    """Leave-one-group-out (Zobel's uniques test): each group's runs on qrels without the
    relevant documents only that group found, re-ranked among the others.

    Why: a big drop means the collection favours the groups that contributed to its pools.
    Reads, unless `save` stores the reduced qrels (missing scores are computed, as every
    report does, unless `compute` is off).
    """
    from tcdb.analysis.means import counts_unanswered
    from tcdb.analysis.reusability import uniques_leave_out
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import (
        document_names,
        evaluations,
        load_judgments,
        load_top_k,
        measure_ids,
        qrels_dict,
        qrels_topics,
        stored_scores,
    )
    from tcdb.queries.topic_selection import select_topics
    from tcdb.runs import get_runs
    from tcdb.scoring.compute import score_runs
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import with_unanswered

    started = time.perf_counter()
    collection, snapshot, qrels, depth = (request.collection, request.snapshot, request.qrels,
                                          request.depth)
    by, save = request.by, request.save
    names = list(request.measures)  # parsed by the request (MeasureNames)
    if request.compute:
        evaluate(db, collection, snapshot, qrels, names)
    with db.session() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        parent = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap)
        groups = _contributing_groups(run_list, by, snapshot)
        contributing = [r for runs in groups.values() for r in runs]
        top = load_top_k(conn, snap.pk, [r.pk for r in contributing], depth)
        top["group"] = top["run"].map({r.id: g for g, runs in groups.items() for r in runs})
        judgments = load_judgments(conn, parent.pk)
        topic_names = select_topics(session, collection, snap,
                                    sorted(set(judgments["topic"].tolist())), request.topics)
        all_topics = _topic_names(session, snap)
        documents = document_names(conn, snap.pk, judgments["doc"].unique().tolist())
        run_ids = [r.pk for r in run_list]
        mids = measure_ids(conn, names)
        done = evaluations(conn, parent.pk, run_ids, list(mids.values()))
        full_scores = stored_scores(conn, parent.pk, run_ids, list(mids.values()))
        if any(counts_unanswered(n) for n in names):  # NumRel, NumQ: as trec_eval -c
            full_scores = with_unanswered(conn, parent.pk, names, mids,
                                          qrels_topics(conn, parent.pk, snap.pk), done,
                                          full_scores)
        reduced_scores: dict[str, ScoreMap] = {}
        removed: dict[str, int] = {}
        stored_as: dict[str, str | None] = {}
        topic_id_of = {ext: t for t, ext in all_topics.items()}
        for group, runs in groups.items():
            reduced = uniques_leave_out(top, judgments, group)
            removed[group] = len(judgments) - len(reduced)
            as_external = _external(reduced, all_topics, documents)
            reduced_qrels = qrels_dict(as_external)
            reduced_scores[group] = {
                (run_id, mids.get(name, -1)): {
                    **_unanswered(name, reduced_qrels, topic_id_of),
                    **{topic_id_of[t]: v for t, v in by_topic.items()}}
                for run_id, values in score_runs(conn, snap.pk, [r.pk for r in runs],
                                                 names, reduced_qrels)
                for name, by_topic in values.items()}
            stored_as[group] = None
            if save is not None:
                stored_as[group] = _store_derived(session, snap, parent, derived_name(save, group),
                                                  as_external, by, group, depth)
    if save is not None:
        for group, runs in groups.items():
            evaluate(db, collection, snapshot, stored_as[group] or "", names, [r.tag for r in runs])

    tags = {r.pk: r.tag for r in run_list}
    measures: dict[str, LeaveOutMeasure] = {}
    for name in names:
        mid = mids.get(name, -1)
        usable = [r for r in run_ids if (r, mid) in done]
        figures = [_group_figures(group, [r.pk for r in runs], full_scores,
                                  reduced_scores[group], usable, tags, mid, topic_names,
                                  stored_as[group], removed[group], measure=name)
                   for group, runs in groups.items()]
        measures[name] = LeaveOutMeasure(n_runs=len(usable), groups=figures)
    return LeaveOutResult(
        collection=collection, snapshot=snapshot, qrels=qrels, depth=depth, by=by.value,
        topics=request.topics, n_topics=len(topic_names), saved=save, measures=measures,
        seconds=time.perf_counter() - started,
        lineage=lineage_of(db, collection, runs=[(snapshot, t) for t in tags.values()],
                           qrels=[(snapshot, qrels)] + [(snapshot, s) for s in
                                                        stored_as.values() if s],
                           topics=request.topics, measures=names))


def _contributing_groups(runs: list[Run], by: Grouping, snapshot: str) -> dict[str, list[Run]]:
    """The contributing runs with entries, by group; at least two groups, or nothing to test."""
    groups: dict[str, list[Run]] = {}
    for run in runs:
        if run.contributed and run.n_entries > 0:
            groups.setdefault(group_of(run, by), []).append(run)
    if not groups:
        raise InputError(f"snapshot {snapshot}", None, "no run is marked as contributing to the "
                         "pools (import runs with --contributed)")
    if len(groups) < 2:
        raise FieldError("by", f"the contributing runs form a single {by.value} "
                         f"({next(iter(groups))!r}): nothing to leave out")
    return groups


def _group_figures(group: str, mine: list[int], full_scores: ScoreMap, reduced_scores: ScoreMap,
                   usable: list[int], tags: dict[int, str], mid: int,
                   topic_names: dict[int, str], stored_as: str | None, n_removed: int,
                   measure: str | None = None) -> LeaveOutGroup:
    """One group's rank changes and τ: its runs on the reduced qrels, the others on the full
    (a count `measure`'s scores summed over the topics: the same ranks and τ)."""
    from tcdb.analysis import json_float, mean_scores
    from tcdb.analysis.rank_correlation import goodman_kruskal_gamma, tau_ap, tau_b
    from tcdb.analysis.reusability import rank_changes
    from tcdb.reports.common import per_topic_frame

    topic_list = list(topic_names.values())
    mean_full = mean_scores(per_topic_frame(full_scores, usable, tags, mid, topic_names),
                            topics=topic_list, aggregate_as=measure)
    reduced = per_topic_frame(reduced_scores, [r for r in mine if r in usable], tags, mid,
                              topic_names)
    mean_reduced = mean_full.copy()
    if not reduced.empty:
        mean_reduced.update(mean_scores(reduced, topics=topic_list, aggregate_as=measure))
    changes = rank_changes(mean_full, mean_reduced)
    own = changes[changes["run"].isin({tags[r] for r in mine})]
    entries = [LeaveOutRun(run=row.run, score_full=float(row.score_a),
                           score_reduced=float(row.score_b), rank_full=int(row.rank_a),
                           rank_reduced=int(row.rank_b), rank_change=int(row.rank_change))
               for row in own.itertuples(index=False)]
    return LeaveOutGroup(
        group=group, qrels=stored_as, n_removed=n_removed, runs=entries,
        kendall_tau=json_float(goodman_kruskal_gamma(mean_full, mean_reduced)),
        tau_b=json_float(tau_b(mean_full, mean_reduced)),
        tau_ap=json_float(tau_ap(mean_full, mean_reduced)),
        max_drop=max((-e.rank_change for e in entries), default=0))


def _unanswered(measure: str, qrels: dict[str, dict[str, int]], topic_id_of: dict[str, int],
                ) -> dict[int, float]:
    """topic id → what `trec_eval -c` gives a topic of the reduced qrels a run did not
    answer, for a count that is not 0 there (NumRel: its relevant documents left; NumQ: 1);
    empty for every other measure (`tcdb.analysis.means.unanswered_value`)."""
    from tcdb.analysis.means import counts_unanswered, unanswered_value

    if not counts_unanswered(measure):
        return {}
    return {topic_id_of[t]: unanswered_value(measure, judged) for t, judged in qrels.items()
            if t in topic_id_of}


def _topic_names(session: Session, snap: Snapshot) -> dict[int, str]:
    from tcdb.queries import snapshot_topics

    return {t: ext for t, (ext, _) in snapshot_topics(session, snap.pk).items()}


def _external(reduced: pd.DataFrame, topics: dict[int, str], documents: dict[int, str]
              ) -> pd.DataFrame:
    """Judgments of integer ids as external ids: `topic, doc, grade`."""
    import pandas as pd

    return pd.DataFrame({"topic": [topics[t] for t in reduced["topic"].tolist()],
                         "doc": [documents[d] for d in reduced["doc"].tolist()],
                         "grade": reduced["grade"].tolist()})


def _store_derived(session: Session, snap: Snapshot, parent: QrelsSet, name: str,
                   judgments: pd.DataFrame, by: Grouping, group: str, depth: int) -> str:
    """Store the leave-out qrels as `derived` (parent A), or reuse the stored set of that name.

    A stored set with other judgments means the contributing runs changed since (or the name
    is taken): refused, because qrels sets are immutable.
    """
    from tcdb.collections.sources.records import QrelRecord
    from tcdb.judging.qrels import store_qrels
    from tcdb.queries import qrels_frame

    rows = set(zip(judgments["topic"].tolist(), judgments["doc"].tolist(),
                   judgments["grade"].tolist(), strict=True))
    existing = session.execute(select(QrelsSet).where(
        col(QrelsSet.snapshot_id) == snap.id, col(QrelsSet.name) == name)).scalar_one_or_none()
    if existing is not None:
        stored = qrels_frame(session, existing.pk)
        same = set(zip(stored["topic"].tolist(), stored["doc"].tolist(),
                       stored["grade"].tolist(), strict=True)) == rows
        if existing.kind != QrelsKind.derived or existing.parent_id != parent.id or not same:
            raise ConflictError(f"qrels set {name!r} of {snap.label!r} exists with other "
                                "judgments (the contributing runs changed?): qrels sets are "
                                "immutable; save under another name")
        return name
    records = (QrelRecord(t, d, g) for t, d, g in sorted(rows))
    store_qrels(session, snap, name, QrelsKind.derived, records, parent_id=parent.id,
                method="leave-out",
                description=f"{parent.name} without the relevant documents only {by.value} "
                f"{group!r} retrieved in its top {depth}")
    return name
