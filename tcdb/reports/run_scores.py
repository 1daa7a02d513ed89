"""The per-topic scores of chosen runs on one snapshot, as the significance reports read them.

`tcdb report compare` and `tcdb report leaderboard` test runs against each other on the same
topics: every topic the qrels set judges (∩ a topic set, when one is named), a topic a run did
not answer counted 0 as `trec_eval -c` does. Each run comes with its system and its `submitted`
date; with `ranks=True`, and qrels with exactly one relevant document per topic (MS MARCO
style), also the rank of that document in each run (trec_eval's order), for the outcome
breakdown — or the reason there is none.
"""

from __future__ import annotations

import datetime as dt
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlmodel import col

from tcdb.errors import InputError, NotFoundError
from tcdb.operations.database import Database
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class RunScores:
    """What the significance reports need of a snapshot's runs under one measure and qrels."""

    measure: str
    wide: pd.DataFrame  # topic (external id) × run tag
    systems: dict[str, str | None]  # run tag → system name
    submitted: dict[str, dt.date | None]  # run tag → submitted date
    topic_ids: list[int] = field(default_factory=list)  # topic.id of each row of `wide`
    skipped: list[str] = field(default_factory=list)  # runs without scores (`skip_unscored`)
    ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    outcome_reason: str | None = "not asked"


def load_run_scores(
    db: Database,
    collection: str,
    snapshot: str,
    qrels: str,
    runs: Sequence[str] | None,
    measure: str,
    *,
    compute: bool = True,
    topics: str | None = None,
    ranks: bool = False,
    skip_unscored: bool = False,
) -> RunScores:
    """Per-topic scores of `runs` (None: every run of the snapshot, by tag) under `measure`.

    With `compute`, missing scores are computed and stored first. A run without scores for the
    measure (imported scores lacking it) is a NotFoundError that names it, or, with
    `skip_unscored`, left out and listed in `skipped`.
    """
    import pandas as pd

    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import (
        evaluations,
        measure_ids,
        qrels_topics,
        relevant_documents,
        relevant_ranks,
        score_rows,
    )
    from tcdb.queries.topic_selection import select_topics
    from tcdb.runs import get_runs
    from tcdb.schema import QrelsKind, System
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.measures import parse_measures
    from tcdb.scoring.scores import unanswered_values

    tags = None if runs is None else list(dict.fromkeys(runs))
    name = parse_measures([measure], "measure")[0]
    if compute:
        evaluate(db, collection, snapshot, qrels, [name], tags)
    with db.session() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap, tags)
        conn = session.connection()
        mid = measure_ids(conn, [name]).get(name, -1)
        run_ids = [r.pk for r in run_list]
        done = evaluations(conn, qset.pk, run_ids, [mid])
        skipped = [r.tag for r in run_list if (r.pk, mid) not in done]
        if skip_unscored:
            run_list = [r for r in run_list if (r.pk, mid) in done]
        for run in run_list:
            if (run.id, mid) not in done:
                why = _why_unscored(run, compute, collection, snapshot, qrels, name)
                raise NotFoundError(f"run {run.tag!r} of {snapshot!r} has no {name} scores on "
                                    f"qrels {qrels!r} ({why})")
        systems = dict(conn.execute(select(col(System.id), col(System.name)).where(
            col(System.id).in_([r.system_id for r in run_list]))).tuples().all())
        judged = qrels_topics(conn, qset.pk, snap.pk)
        if not judged:
            raise InputError(qrels, None, f"qrels set {qrels!r} judges no topics")
        if topics is not None:  # all, core or a topic set (None: all)
            judged = {t: judged[t] for t in select_topics(session, collection, snap,
                                                          list(judged), topics)}
        got: dict[int, dict[int, float]] = {}
        for run_id, _, topic_id, value in score_rows(conn, qset.pk, run_ids, [mid]):
            got.setdefault(run_id, {})[topic_id] = value
        order = sorted(judged, key=lambda t: natural_key(judged[t]))
        fill = unanswered_values(conn, qset.pk, name, judged)  # NumRel, NumQ under -c
        wide = pd.DataFrame(
            {run.tag: [got.get(run.pk, {}).get(t, fill.get(t, 0.0)) for t in order]
             for run in run_list},
            index=pd.Index([judged[t] for t in order], name="topic"))
        result = RunScores(name, wide, {r.tag: systems.get(r.system_id) for r in run_list},
                           {r.tag: r.submitted for r in run_list}, topic_ids=order,
                           skipped=skipped if skip_unscored else [])
        if ranks:
            relevant = relevant_documents(conn, qset.pk, snap.pk)
            result.outcome_reason = outcome_reason(judged, relevant, run_list) \
                if qset.kind != QrelsKind.published else (
                    f"qrels set {qrels!r} is published scores: it holds no judgments")
            if result.outcome_reason is None:
                for run in run_list:
                    found = relevant_ranks(conn, run.pk, qset.pk)
                    result.ranks[run.tag] = {judged[t]: found.get(t) for t in order}
    return result


def _why_unscored(run: Any, compute: bool, collection: str, snapshot: str, qrels: str,
                  measure: str) -> str:
    """Why a run has no scores for the measure: it has no entries to compute them from
    (published scores only), or, read without computing, its entries are not scored yet."""
    if run.n_entries and not compute:
        command = shlex.join(["tcdb", "evaluate", collection, snapshot, "--qrels", qrels,
                              "--measure", measure])
        return f"its {run.n_entries:,} entries are not scored yet: `{command}` scores them"
    return "no stored entries to compute them from; import them with `tcdb scores import`"


def outcome_reason(judged: dict[int, str], relevant: dict[int, list[tuple[int, str]]],
                   run_list: Sequence[Any]) -> str | None:
    """Why the outcome breakdown does not apply (None when it does)."""
    several = sum(1 for t in judged if len(relevant.get(t, [])) > 1)
    none = sum(1 for t in judged if not relevant.get(t))
    if several or none:
        parts = []
        if several:
            parts.append(f"{several} topic(s) have more than one relevant document")
        if none:
            parts.append(f"{none} topic(s) have none")
        return "the qrels set is not one-relevant-per-topic: " + ", ".join(parts)
    without = [r.tag for r in run_list if r.n_entries + r.n_unresolved == 0]
    if without:
        return f"run(s) {', '.join(without)} have no stored entries to rank the relevant document"
    return None
