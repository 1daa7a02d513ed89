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

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from tcdb.analysis.means import aggregate
from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.schema import Evaluation, QrelsSet, Run, Score, Snapshot
from tcdb.sorting import natural_key
from tcdb.storage.db import bulk_insert, session_scope

if TYPE_CHECKING:
    import pandas as pd

MEAN_COLUMNS = ["collection", "snapshot", "qrels", "run", "system", "measure", "value",
                "n_topics", "n_answered", "source", "topic_set"]
PER_TOPIC_COLUMNS = ["collection", "snapshot", "qrels", "run", "system", "topic", "topic_id",
                     "topic_key", "measure", "value", "answered"]


def score_table(
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
    from tcdb.scoring.evaluate import evaluate, residual_set
    from tcdb.scoring.measures import parse_measures

    names = parse_measures(measures)
    if compute:
        evaluate(collection, snapshot, qrels, names, runs, residual_of=residual_of)
    with session_scope() as session:
        from tcdb.catalog.collections import get_snapshot
        from tcdb.judging.qrels import get_qrels_set

        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        residual_id = residual_set(session, snap, residual_of).pk if residual_of else 0
        return _table(session, collection, snap, qset, names, runs, per_topic, intersection,
                      residual_id, topics)


def _table(
    session: Session,
    collection: str,
    snap: Snapshot,
    qset: QrelsSet,
    names: list[str],
    runs: Sequence[str] | None,
    per_topic: bool,
    intersection: bool,
    residual_of_id: int = 0,
    topic_set: str | None = None,
) -> pd.DataFrame:
    import pandas as pd

    from tcdb.queries import (
        evaluations,
        measure_ids,
        qrels_topics,
        run_rows,
        score_rows,
        snapshot_topics,
    )
    from tcdb.runs import get_runs

    conn = session.connection()
    run_list = get_runs(session, snap, runs)
    info = {r["run_id"]: r for r in run_rows(conn, snapshot_ids=[snap.pk])}
    ids = measure_ids(conn, names)
    run_ids = [r.pk for r in run_list]
    done = evaluations(conn, qset.pk, run_ids, list(ids.values()), residual_of_id)
    values: dict[tuple[int, int], dict[int, float]] = {}
    for run_id, mid, topic_id, value in score_rows(conn, qset.pk, run_ids, list(ids.values()),
                                                   residual_of_id):
        values.setdefault((run_id, mid), {})[topic_id] = value
    qtopics = qrels_topics(conn, qset.pk, snap.pk)
    from tcdb.reports.fields import topic_set_name

    selection, topic_set = topic_set, topic_set_name(topic_set)  # the row's: None over all
    if topic_set is not None and selection is not None:  # all, core: every qrels topic
        qtopics = _in_topic_set(session, collection, snap, qtopics, selection, qset.name)
        values = {key: {t: v for t, v in got.items() if t in qtopics}
                  for key, got in values.items()}
    all_topics = snapshot_topics(conn, snap.pk)
    n_topics = len(qtopics)
    rows: list[tuple[Any, ...]] = []
    for run in run_list:
        base = (collection, snap.label, qset.name, run.tag, info[run.pk]["system"])
        for name in names:
            mid = ids.get(name, -1)
            source = done.get((run.pk, mid))
            got = values.get((run.pk, mid), {})
            if not per_topic:
                rows.append((*base, name, *_mean(name, got, qtopics, n_topics, intersection,
                                                 source is not None), source, topic_set))
                continue
            if source is None:
                continue
            wanted = got if intersection else qtopics
            for topic_id in sorted(wanted, key=lambda t: natural_key(
                    all_topics.get(t, (qtopics.get(t, ""),))[0])):
                ext, key = all_topics.get(topic_id, (qtopics.get(topic_id, "?"), None))
                rows.append((*base, ext, topic_id, key, name, got.get(topic_id, 0.0),
                             topic_id in got))
    columns = PER_TOPIC_COLUMNS if per_topic else MEAN_COLUMNS
    return pd.DataFrame(rows, columns=columns)


def _in_topic_set(session: Session, collection: str, snap: Snapshot, qtopics: dict[int, str],
                  selection: str, qrels: str) -> dict[int, str]:
    """The qrels topics under the selection (all / core / a topic set, resolved by the
    reports' `select_topics`); none is an error (a mean over nothing is no mean)."""
    from tcdb.errors import FieldError
    from tcdb.reports.common import select_topics

    try:
        kept = select_topics(session, collection, snap, list(qtopics), selection)
    except FieldError as error:
        raise FieldError("topics", f"topic set {selection!r} has no topic judged in qrels "
                         f"set {qrels!r}") from error
    return {t: qtopics[t] for t in kept}


def _mean(measure: str, got: dict[int, float], qtopics: dict[int, str], n_topics: int,
          intersection: bool, evaluated: bool) -> tuple[float, int, int]:
    """(mean, topics averaged over, topics answered) — `trec_eval -c` unless `intersection`;
    a count (NumRet, NumRel, …) is summed, as trec_eval's `all` line (`aggregate`)."""
    answered = [v for t, v in got.items() if t in qtopics]
    if not evaluated:
        return math.nan, 0, 0
    if intersection:
        return aggregate(measure, answered), len(answered), len(answered)
    return aggregate(measure, answered, n_topics), n_topics, len(answered)


def per_topic_scores(
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
            with session_scope() as session:
                snap = get_snapshot(session, collection, label)
                tags = set(session.exec(select(Run.tag).where(Run.snapshot_id == snap.pk)))
            wanted = [r for r in runs if r in tags]
            if not wanted:
                continue
        frames.append(score_table(collection, label, qrels, [measure], wanted, per_topic=True,
                                  intersection=intersection, compute=compute,
                                  topics="all" if topics == "core" else topics))
    if not frames:
        return pd.DataFrame(columns=PER_TOPIC_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    if topics == "core":  # one snapshot's core is all it judges; across several, the shared
        frame = frame[frame["topic_id"].isin(_core(collection, snapshots, qrels))]
    return frame.reset_index(drop=True)


def _core(collection: str, snapshots: Sequence[str], qrels: str) -> set[int]:
    """Topic ids every snapshot has and judges in its qrels set of that name (`core` as the
    reports resolve it: `tcdb.reports.persistence_scores._topic_lists`)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_topics
    from tcdb.reports.persistence_scores import _topic_lists

    with session_scope() as session:
        judged = {}
        for label in dict.fromkeys(snapshots):
            snap = get_snapshot(session, collection, label)
            qset = get_qrels_set(session, snap, qrels)
            judged[label] = qrels_topics(session.connection(), qset.pk, snap.pk)
        return set(next(iter(_topic_lists(session, collection, judged, "core").values())))


@dataclass
class ScoresImportReport:
    """What `import_scores` stored."""

    collection: str
    snapshot: str
    qrels: str
    run: str
    status: str  # "imported" | "unchanged" | "replaced"
    measures: list[str] = field(default_factory=list)
    n_scores: int = 0
    skipped: list[str] = field(default_factory=list)  # measures of the file not imported

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_scores(
    collection: str,
    snapshot: str,
    qrels: str,
    run_tag: str,
    path: Path | str,
    system: str | None = None,
    *,
    replace: bool = False,
) -> ScoresImportReport:
    """Store published per-topic scores (`trec_eval -q` or ir_measures TSV) for a run whose file
    is gone: creates the run without entries, and per measure an `imported` evaluation.

    The same values again are a no-op; different values for a stored measure are refused unless
    `replace`. Every topic must be in the qrels set (trec_eval only reports those), so the
    `trec_eval -c` means stay right.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.collections.runs import checksum_file
    from tcdb.collections.trec_eval_output import read_trec_eval
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import qrels_topics, topic_ids
    from tcdb.runs import get_system
    from tcdb.scoring.measures import measure_id

    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"scores file not found: {path}")
    output = read_trec_eval(path)
    if not output.per_topic:
        raise InputError(path, None, "no per-topic scores of a known measure (was the file "
                         "written with trec_eval -q?)")
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        topics = topic_ids(session, snap.pk)
        judged = qrels_topics(session, qset.pk, snap.pk)
        values: dict[str, dict[int, float]] = {}
        for measure, topic, value in output.per_topic:
            topic_id = topics.get(topic)
            if topic_id is None or topic_id not in judged:
                where = "is not in snapshot" if topic_id is None else "has no judgments in"
                target = f"{snapshot!r}" if topic_id is None else f"qrels set {qrels!r}"
                raise InputError(path, _line_of(path, topic, output.source_format),
                                 f"topic {topic!r} {where} {target}")
            if math.isnan(value):
                raise InputError(path, _line_of(path, topic, output.source_format),
                                 f"{measure} for topic {topic!r} is NaN")
            values.setdefault(measure, {})[topic_id] = value
        run = session.exec(select(Run).where(
            Run.snapshot_id == snap.pk, Run.tag == run_tag)).first()
        if run is not None and run.n_entries + run.n_unresolved > 0:
            raise ConflictError(f"run {run_tag!r} of {snapshot!r} has its entries stored: "
                                "`tcdb evaluate` computes its scores")
        if run is None:
            system_row = get_system(session, snap.collection_id, system or run_tag,
                                    explicit=system is not None)
            run = Run(snapshot_id=snap.pk, system_id=system_row.pk, tag=run_tag,
                      checksum=checksum_file(path), source=str(path.resolve()),
                      description="per-topic scores imported from evaluation output")
            session.add(run)
            session.flush()
        assert run.id is not None and qset.id is not None
        mids = {name: measure_id(session, name) for name in values}
        report = ScoresImportReport(collection, snapshot, qrels, run_tag, "imported",
                                    sorted(values), skipped=sorted(output.skipped))
        stored = _stored(session, run.id, qset.id, list(mids.values()))
        different = sorted(m for m in values if mids[m] in stored and stored[mids[m]] != values[m])
        fresh = [m for m in values if mids[m] not in stored]
        if different and not replace:
            raise ConflictError(f"run {run_tag!r} already has different {qrels!r} scores for "
                                f"{', '.join(different)}: pass --replace to overwrite them")
        for name in different:
            mid = mids[name]
            session.execute(delete(Score).where(
                col(Score.run_id) == run.id, col(Score.qrels_set_id) == qset.id,
                col(Score.measure_id) == mid, col(Score.residual_of_id) == 0))
            session.execute(delete(Evaluation).where(
                col(Evaluation.run_id) == run.id, col(Evaluation.qrels_set_id) == qset.id,
                col(Evaluation.measure_id) == mid, col(Evaluation.residual_of_id) == 0))
        write = {m: values[m] for m in [*fresh, *different]}
        if not write:
            report.status = "unchanged"
            return report
        if different:
            report.status = "replaced"
        now = dt.datetime.now(dt.UTC)
        report.n_scores = bulk_insert(
            session, "score", ["run_id", "qrels_set_id", "measure_id", "topic_id", "value"],
            [(run.id, qset.id, mids[m], t, v) for m, by_topic in write.items()
             for t, v in by_topic.items()])
        bulk_insert(session, "evaluation", ["run_id", "qrels_set_id", "measure_id", "source",
                                            "n_topics", "computed_at"],
                    [(run.id, qset.id, mids[m], "imported", len(v), now)
                     for m, v in write.items()])
        return report


def _stored(session: Session, run_id: int, qrels_set_id: int, mids: list[int]
            ) -> dict[int, dict[int, float]]:
    """measure id → {topic id: value} already stored for the run and qrels set."""
    from tcdb.queries import evaluations, score_rows

    stored: dict[int, dict[int, float]] = {
        mid: {} for _, mid in evaluations(session, qrels_set_id, [run_id], mids)}
    for _, mid, topic_id, value in score_rows(session, qrels_set_id, [run_id], mids):
        stored.setdefault(mid, {})[topic_id] = value
    return stored


def _line_of(path: Path, topic: str, source_format: str) -> int | None:
    """The first line of an evaluation output naming `topic` (the reader keeps no lines)."""
    from tcdb.collections.runs import read_text

    column = 1 if source_format == "trec_eval" else 0
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        parts = line.split()
        if len(parts) == 3 and parts[column] == topic:
            return number
    return None
