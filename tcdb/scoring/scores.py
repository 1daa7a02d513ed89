"""Score tables with trec_eval semantics, and importing published per-topic scores.

Only the topics a run answered are stored (`tcdb.scoring.evaluate`). A mean follows `trec_eval -c`:
the sum over the qrels set's topics (every topic with at least one judgment) divided by their
number, so an unanswered topic counts 0 (a count — NumRet, NumRel, NumRet(rel=1), NumQ — is the
sum, as trec_eval and ir_measures give it: `tcdb.analysis.means.aggregate`); `intersection=True`
averages over the answered topics instead (plain `trec_eval`). A (run, measure) that was never
evaluated — an imported run without that measure — is missing (NaN), never 0. `topics` (a topic
set name) averages over the qrels set's topics that are in the set — `topic_set` names it in every
row, so a subset mean is never read as the full one; nothing is stored either way (means are
computed on demand).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, select

from tcdb.analysis.means import aggregate, counts_unanswered, unanswered_value
from tcdb.operations.database import Database
from tcdb.schema import QrelsSet, Run, Snapshot
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection


MEAN_COLUMNS = ["collection", "snapshot", "qrels", "run", "system", "measure", "value",
                "n_topics", "n_answered", "source", "topic_set"]
PER_TOPIC_COLUMNS = ["collection", "snapshot", "qrels", "run", "system", "topic", "topic_id",
                     "topic_key", "measure", "value", "answered"]


def score_table(
    db: Database,
    collection: str,
    snapshot: str,
    qrels: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    per_topic: bool = False,
    intersection: bool = False,
    *,
    residual_of: str | None = None,
    compute: bool = True,
    topics: str | None = None,
) -> pd.DataFrame:
    """Means (or per-topic values) of runs on one snapshot and qrels set, one row per value.

    With `compute`, missing scores are evaluated first (stored ones are reused). Per-topic rows
    cover every qrels topic (0 for unanswered ones, `answered` False) unless `intersection`.
    `residual_of` reads the residual scores (`tcdb.scoring.evaluate.evaluate`). `topics`: only the
    qrels topics in this topic set (means over them, `trec_eval -c` over the subset).
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import evaluate, residual_set
    from tcdb.scoring.measures import parse_measures

    names = parse_measures(measures)
    if compute:
        evaluate(db, collection, snapshot, qrels, names, runs, residual_of=residual_of)
    with db.session() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        residual_id = residual_set(session, snap, residual_of).pk if residual_of else 0
        return scores_of(session, collection, snap, qset, names, get_runs(session, snap, runs),
                         per_topic, intersection, residual_id, topics)


def scores_of(
    session: Session,
    collection: str,
    snap: Snapshot,
    qset: QrelsSet,
    names: list[str],
    run_list: list[Run],
    per_topic: bool,
    intersection: bool,
    residual_of_id: int = 0,
    topic_set: str | None = None,
    computed: Mapping[tuple[int, int], dict[int, float]] | None = None,
) -> pd.DataFrame:
    """`score_table` on rows its caller resolved: the snapshot, qrels set and runs.

    `computed` ((run id, measure id) → {topic id: value}) replaces a run's stored scores with
    values scored now: an earlier version's (`tcdb.scoring.versions`)."""
    import pandas as pd

    from tcdb.queries import (
        evaluations,
        measure_ids,
        qrels_topics,
        run_rows,
        score_rows,
        snapshot_topics,
    )
    conn = session.connection()
    info = {r["run_id"]: r for r in run_rows(conn, snapshot_ids=[snap.pk])}
    ids = measure_ids(conn, names)
    run_ids = [r.pk for r in run_list]
    done = evaluations(conn, qset.pk, run_ids, list(ids.values()), residual_of_id)
    values: dict[tuple[int, int], dict[int, float]] = {}
    answers: dict[tuple[int, int], dict[int, float]] = {}  # as stored, when values add to it
    for run_id, mid, topic_id, value in score_rows(conn, qset.pk, run_ids, list(ids.values()),
                                                   residual_of_id):
        values.setdefault((run_id, mid), {})[topic_id] = value
    for pair, got in (computed or {}).items():
        values[pair], done[pair] = dict(got), "ir_measures"
    qtopics = qrels_topics(conn, qset.pk, snap.pk)
    from tcdb.reports.fields import topic_set_name

    selection, topic_set = topic_set, topic_set_name(topic_set)  # the row's: None over all
    if topic_set is not None and selection is not None:  # all, core: every qrels topic
        qtopics = _in_topic_set(session, collection, snap, qtopics, selection, qset.name)
        values = {key: {t: v for t, v in got.items() if t in qtopics}
                  for key, got in values.items()}
    all_topics = snapshot_topics(conn, snap.pk)
    n_topics = len(qtopics)
    if not intersection:
        answers = dict(values)
        values = with_unanswered(conn, qset.pk, names, ids, qtopics, done, values)
    rows: list[tuple[Any, ...]] = []
    for run in run_list:
        base = (collection, snap.label, qset.name, run.tag, info[run.pk]["system"])
        for name in names:
            mid = ids.get(name, -1)
            source = done.get((run.pk, mid))
            got = values.get((run.pk, mid), {})
            answered = answers.get((run.pk, mid), got)
            if not per_topic:
                rows.append((*base, name, *_mean(name, got, answered, qtopics, n_topics,
                                                 intersection, source is not None),
                             source, topic_set))
                continue
            if source is None:
                continue
            wanted = got if intersection else qtopics
            for topic_id in sorted(wanted, key=lambda t: natural_key(
                    all_topics.get(t, (qtopics.get(t, ""),))[0])):
                ext, key = all_topics.get(topic_id, (qtopics.get(topic_id, "?"), None))
                rows.append((*base, ext, topic_id, key, name, got.get(topic_id, 0.0),
                             topic_id in answered))
    columns = PER_TOPIC_COLUMNS if per_topic else MEAN_COLUMNS
    return pd.DataFrame(rows, columns=columns)


def _in_topic_set(session: Session, collection: str, snap: Snapshot, qtopics: dict[int, str],
                  selection: str, qrels: str) -> dict[int, str]:
    """The qrels topics under the selection (all / core / a topic set, resolved by the
    `select_topics`); none is an error (a mean over nothing is no mean)."""
    from tcdb.errors import FieldError
    from tcdb.queries.topic_selection import select_topics

    try:
        kept = select_topics(session, collection, snap, list(qtopics), selection)
    except FieldError as error:
        raise FieldError("topics", f"topic set {selection!r} has no topic judged in qrels "
                         f"set {qrels!r}") from error
    return {t: qtopics[t] for t in kept}


def unanswered_values(conn: Connection, qrels_set_id: int, measure: str,
                      topics: dict[int, str]) -> dict[int, float]:
    """topic id → what `trec_eval -c` gives `topics` a run did not answer, for a count that
    is not 0 there (NumQ: 1, NumRel: the topic's relevant documents); empty for every other
    measure, where an unanswered topic is 0 (`tcdb.analysis.means.unanswered_value`)."""
    from tcdb.queries import qrels_of

    if not counts_unanswered(measure):
        return {}
    qrels = qrels_of(conn, qrels_set_id)
    return {t: unanswered_value(measure, qrels.get(ext, {})) for t, ext in topics.items()}


def with_unanswered(conn: Connection, qrels_set_id: int, names: list[str],
                     ids: dict[str, int], qtopics: dict[int, str],
                     done: dict[tuple[int, int], str],
                     values: dict[tuple[int, int], dict[int, float]],
                     ) -> dict[tuple[int, int], dict[int, float]]:
    """`values` with, for a count an unanswered topic adds to (NumQ, NumRel), that topic's
    value as `trec_eval -c` gives it (`unanswered_values`); unchanged for other measures."""
    filled = dict(values)
    for name in names:
        fill = unanswered_values(conn, qrels_set_id, name, qtopics) if name in ids else {}
        if not fill:
            continue
        for (run_id, mid) in done:
            if mid == ids[name]:
                filled[(run_id, mid)] = {**fill, **values.get((run_id, mid), {})}
    return filled


def _mean(measure: str, got: dict[int, float], answers: dict[int, float],
          qtopics: dict[int, str], n_topics: int, intersection: bool, evaluated: bool,
          ) -> tuple[float, int, int]:
    """(mean, topics averaged over, topics answered) — `trec_eval -c` unless `intersection`;
    a count (NumRet, NumRel, …) is summed, as trec_eval's `all` line (`aggregate`). `got` may
    hold the values of unanswered topics (NumRel's relevant documents); `answers` is what
    the run answered."""
    values = [v for t, v in got.items() if t in qtopics]
    n_answered = sum(1 for t in answers if t in qtopics)
    if not evaluated:
        return math.nan, 0, 0
    if intersection:
        return aggregate(measure, values), n_answered, n_answered
    return aggregate(measure, values, n_topics), n_topics, n_answered


def per_topic_scores(
    db: Database,
    collection: str,
    snapshots: Sequence[str],
    qrels: str,
    measure: str,
    runs: Sequence[str] | None = None,
    *,
    intersection: bool = False,
    compute: bool = True,
    topics: str = "all",
) -> pd.DataFrame:
    """Per-topic values of one measure across snapshots (each with its qrels set of that name).

    `topic_key` is the topic's identity across snapshots (its id or normalised query text),
    `topic` the id it has in each snapshot; `topics`: all, core (the topics every snapshot
    given has and judges, as persistence reads them) or a topic set's members. Runs are matched
    by tag; a tag missing from a snapshot is skipped there.
    """
    import pandas as pd

    from tcdb.catalog.collections import get_snapshot

    frames = []
    for label in snapshots:
        wanted = runs
        if runs is not None:
            with db.session() as session:
                snap = get_snapshot(session, collection, label)
                tags = set(session.exec(select(Run.tag).where(Run.snapshot_id == snap.pk)))
            wanted = [r for r in runs if r in tags]
            if not wanted:
                continue
        frames.append(score_table(db, collection, label, qrels, [measure], wanted, per_topic=True,
                                  intersection=intersection, compute=compute,
                                  topics="all" if topics == "core" else topics))
    if not frames:
        return pd.DataFrame(columns=PER_TOPIC_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    if topics == "core":  # one snapshot's core is all it judges; across several, the shared
        frame = frame[frame["topic_id"].isin(_core(db, collection, snapshots, qrels))]
    return frame.reset_index(drop=True)


def _core(db: Database, collection: str, snapshots: Sequence[str], qrels: str) -> set[int]:
    """Topic ids every snapshot has and judges in its qrels set of that name (`core` as the
    reports resolve it: `tcdb.queries.topic_selection.topic_lists`)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_topics
    from tcdb.queries.topic_selection import topic_lists

    with db.session() as session:
        judged = {}
        for label in dict.fromkeys(snapshots):
            snap = get_snapshot(session, collection, label)
            qset = get_qrels_set(session, snap, qrels)
            judged[label] = qrels_topics(session.connection(), qset.pk, snap.pk)
        return set(next(iter(topic_lists(session, collection, judged, "core").values())))
