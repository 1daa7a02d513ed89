"""The per-topic scores behind the persistence report: systems followed across snapshots.

For every system followed across the chosen snapshots (its runs share `run.system_id`), the
stored per-topic scores of its run in each snapshot are read with Core SQL into one long frame
per measure (`PersistenceScores`), ready for `tcdb.analysis.persistence`.

Topics are identified by `topic.id` — the collection's topic identity — so a topic keeps its
identity when a snapshot re-numbers it (LongEval aligns queries by text). Each snapshot's topic
list follows `trec_eval -c`: the topics its qrels set judges, a topic a run did not answer
counting 0. `core` keeps the topics judged in every compared snapshot; a topic set name keeps
that set's members (judged in each snapshot). A system without exactly one evaluated run in
every snapshot is listed under `skipped` as `{system, reason, kind}` — kind `no_run`,
`several_runs` or `no_scores` — never silently dropped.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlmodel import col

from tcdb.errors import ConflictError, FieldError, NotFoundError, some
from tcdb.operations.database import Database
from tcdb.queries.topic_selection import topic_lists

if TYPE_CHECKING:
    import pandas as pd

QrelsChoice = str | Sequence[str] | Mapping[str, str]

# Why a system is left out of a measure (the `kind` of a skipped entry).
NO_RUN, SEVERAL_RUNS, NO_SCORES = "no_run", "several_runs", "no_scores"


@dataclass
class PersistenceScores:
    """Per-topic scores of the systems followed across snapshots, one long frame per measure.

    `frames[measure]` has columns `system, snapshot, topic (topic.id), value` with a row for every
    topic of `topics[snapshot]` (0 where the run did not answer), so every mean is `trec_eval -c`.
    """

    collection: str
    snapshots: list[str]
    qrels: dict[str, str]
    selection: str
    topics: dict[str, list[int]]
    topic_names: dict[str, dict[int, tuple[str, str]]]  # snapshot → topic id → (external, key)
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    runs: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)  # m → sys → s → tag
    skipped: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # --cross-snapshot: snapshot → topics selected, of which `topics` the first snapshot has
    n_selected: dict[str, int] | None = None


def resolve_qrels(snapshots: Sequence[str], qrels: QrelsChoice) -> dict[str, str]:
    """One qrels set name per snapshot: one name for all, or a map snapshot → name (a list
    never pairs names with snapshots by position: `tcdb.reports.fields.QrelsPerSnapshot`)."""
    if isinstance(qrels, str):
        return dict.fromkeys(snapshots, qrels)
    if isinstance(qrels, Mapping):
        missing = [s for s in snapshots if s not in qrels]
        if missing:
            raise FieldError("qrels", f"no qrels set named for snapshot(s) "
                              f"{some(missing)}")
        return {s: qrels[s] for s in snapshots}
    names = list(qrels)
    if len(names) == 1:
        return dict.fromkeys(snapshots, names[0])
    raise FieldError("qrels", "give one qrels set name for every snapshot, or one per "
                      "snapshot as SNAPSHOT=NAME")


def _check_snapshots(snapshots: Sequence[str]) -> list[str]:
    labels = list(snapshots)
    if len(labels) < 2:
        raise FieldError("snapshots", "name at least two snapshots")
    repeated = sorted({s for s in labels if labels.count(s) > 1})
    if repeated:
        raise FieldError("snapshots", f"snapshot(s) named twice: {', '.join(repeated)}")
    return labels


def choose_systems(known: Sequence[str], wanted: Sequence[str] | None, keep: str | None,
                   where: str) -> list[str]:
    """The systems a report follows: every known one, or those named (plus `keep`, the pivot).

    A name matches a system's label, or the name part of a `group/name` label. An unknown name
    is a FieldError listing the closest known systems first, then a few more.
    """
    if wanted is None:
        return list(known)
    chosen = {keep} if keep in known else set()
    for name in wanted:
        found = [s for s in known if s == name or s.endswith(f"/{name}")]
        if not found:
            close = _closest(name, known)
            listed = close + [s for s in known if s not in close]
            shown = ", ".join(listed[:8]) or "none"
            more = f" … and {len(listed) - 8} more" if len(listed) > 8 else ""
            raise FieldError("systems", f"no system {name!r} has runs in {where} "
                              f"(systems: {shown}{more})")
        chosen.update(found)
    return [s for s in known if s in chosen]


def _closest(name: str, known: Sequence[str], n: int = 3) -> list[str]:
    """The `n` known names most like `name` (similarity ≥ 0.5), ties in the known order."""
    ratios = [(-difflib.SequenceMatcher(None, name, s).ratio(), i) for i, s in enumerate(known)]
    return [known[i] for ratio, i in sorted(ratios)[:n] if -ratio >= 0.5]


def load_persistence_scores(
    db: Database,
    collection: str,
    snapshots: Sequence[str],
    measures: Sequence[str],
    qrels: QrelsChoice = "original",
    topics: str = "all",
    *,
    compute: bool = True,
    systems: Sequence[str] | None = None,
    keep: str | None = None,
) -> PersistenceScores:
    """Read the per-topic scores behind a persistence report (missing ones computed first).

    With `systems`, only those systems (and `keep`, the pivot) are followed.
    """
    import pandas as pd

    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids, qrels_topics, score_rows, snapshot_topics
    from tcdb.runs.systems import system_labels
    from tcdb.schema import Run, System
    from tcdb.schema.base import stored_id
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.measures import parse_measures
    from tcdb.scoring.scores import with_unanswered

    labels = _check_snapshots(snapshots)
    names = parse_measures(measures)
    qrels_names = resolve_qrels(labels, qrels)
    if compute:
        for label in labels:
            evaluate(db, collection, label, qrels_names[label], names)
    with db.session() as session:
        get_collection(session, collection)
        conn = session.connection()
        mids = measure_ids(conn, names)
        judged: dict[str, dict[int, str]] = {}
        topic_names: dict[str, dict[int, tuple[str, str]]] = {}
        # snapshot → system id → [(run id, tag)]
        by_id: dict[str, dict[int, list[tuple[int, str]]]] = {}
        systems_seen: dict[int, tuple[str, str]] = {}  # system id → (group, name)
        run_groups: dict[int, dict[str, set[str]]] = {}  # system id → run group → snapshots
        done: dict[str, dict[tuple[int, int], str]] = {}
        values: dict[str, dict[tuple[int, int], dict[int, float]]] = {}
        for label in labels:
            snap = get_snapshot(session, collection, label)
            qset = get_qrels_set(session, snap, qrels_names[label])
            judged[label] = qrels_topics(conn, qset.pk, snap.pk)
            topic_names[label] = snapshot_topics(conn, snap.pk)
            rows = conn.execute(select(col(Run.id), col(Run.tag), col(Run.group_name),
                                       col(System.id), col(System.group_name), col(System.name))
                                .join(System, col(System.id) == col(Run.system_id))
                                .where(col(Run.snapshot_id) == snap.id)
                                .order_by(col(Run.tag))).all()
            by_system: dict[int, list[tuple[int, str]]] = {}
            for run_id, tag, run_group, system_id, system_group, system in rows:
                sid = stored_id(system_id)
                by_system.setdefault(sid, []).append((stored_id(run_id), tag))
                systems_seen[sid] = (system_group, system)
                if run_group:
                    run_groups.setdefault(sid, {}).setdefault(run_group, set()).add(label)
            by_id[label] = by_system
            run_ids = [run_id for found in by_system.values() for run_id, _ in found]
            done[label] = evaluations(conn, qset.pk, run_ids, list(mids.values()))
            got: dict[tuple[int, int], dict[int, float]] = {}
            for run_id, mid, topic_id, value in score_rows(conn, qset.pk, run_ids,
                                                           list(mids.values())):
                got.setdefault((run_id, mid), {})[topic_id] = value
            # NumRel, NumQ: an unanswered judged topic as trec_eval -c gives it
            values[label] = with_unanswered(conn, qset.pk, names, mids, judged[label],
                                            done[label], got)
        chosen_topics = topic_lists(session, collection, judged, topics)

    label_of = system_labels(systems_seen)
    runs = {label: {label_of[sid]: found for sid, found in by_system.items()}
            for label, by_system in by_id.items()}
    data = PersistenceScores(collection, labels, qrels_names, topics, chosen_topics, topic_names)
    for sid, groups in sorted(run_groups.items(), key=lambda item: label_of[item[0]]):
        if len(groups) > 1:
            said = "; ".join(f"{g} in {', '.join(sorted(s))}" for g, s in sorted(groups.items()))
            data.warnings.append(f"the runs of system {label_of[sid]!r} name different groups "
                                 f"({said}): are they one system?")
    where = f"snapshots {', '.join(labels)} of {collection!r}"
    followed = choose_systems(sorted({s for label in labels for s in runs[label]}), systems,
                              keep, where)
    for name in names:
        mid = mids.get(name, -1)
        rows_out: list[tuple[str, str, int, float]] = []
        data.runs[name] = {}
        data.skipped[name] = []
        for system in followed:
            reason = kind = None
            chosen: dict[str, tuple[int, str]] = {}
            for label in labels:
                found = runs[label].get(system, [])
                if not found:
                    reason, kind = f"no run in snapshot {label!r}", NO_RUN
                elif len(found) > 1:
                    tags = some(t for _, t in found)
                    reason = f"{len(found)} runs in snapshot {label!r} ({tags})"
                    kind = SEVERAL_RUNS
                elif (found[0][0], mid) not in done[label]:
                    reason = (f"run {found[0][1]!r} of snapshot {label!r} has no {name} scores "
                              f"on qrels {qrels_names[label]!r}")
                    kind = NO_SCORES
                if reason:
                    break
                chosen[label] = found[0]
            if reason and kind:
                data.skipped[name].append({"system": system, "reason": reason, "kind": kind})
                continue
            data.runs[name][system] = {label: tag for label, (_, tag) in chosen.items()}
            for label in labels:
                by_topic = values[label].get((chosen[label][0], mid), {})
                rows_out.extend((system, label, t, by_topic.get(t, 0.0))
                                for t in chosen_topics[label])
        data.frames[name] = pd.DataFrame(rows_out, columns=["system", "snapshot", "topic",
                                                            "value"])
    return data


def check_pivot(data: PersistenceScores, pivot: str) -> None:
    """The pivot must be comparable for every measure; say why it is not."""
    for name, skipped in data.skipped.items():
        for entry in skipped:
            if entry["system"] == pivot:
                error = ConflictError if entry["kind"] == SEVERAL_RUNS else NotFoundError
                raise error(f"pivot system {pivot!r}: {entry['reason']}")
        if pivot not in data.runs[name]:
            known = sorted(data.runs[name]) or ["none"]
            raise NotFoundError(f"no system {pivot!r} with runs in snapshots "
                                f"{', '.join(data.snapshots)} of {data.collection!r} "
                                f"(systems: {some(known)})")


