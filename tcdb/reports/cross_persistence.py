"""Persistence of the first snapshot's runs, scored on every later snapshot's qrels.

`tcdb report persistence --cross-snapshot`: each system's run of the first snapshot stands in
for its runs of the later ones, scored on their qrels with documents and topics mapped by
identity (`tcdb.scoring.cross_snapshot.evaluate_from`, stored under their own key and computed
once). Nothing about the system changed, so ARP, RΔ, ER and ΔRI then show what the collection's
change alone does to it — "would last year's system still score this today?" — beside the usual
report, where each snapshot's own run is used.

Builds the same `PersistenceScores` as `load_persistence_scores`; a system needs exactly one run
in the first snapshot (skipped otherwise, with the reason), none in the later ones.

Topics: a later snapshot's mean is over the topics of the selection that the first snapshot
has too (the mapped ones). A topic the first snapshot lacks was never asked of its runs:
counting it 0 (`trec_eval -c`) would report a drop of (unmapped / selected) for every system
that the collection never caused. `n_selected` keeps how many the selection had, so every front
end says "mapped of selected".
"""

from __future__ import annotations

from collections.abc import Sequence

from tcdb.errors import FieldError, some
from tcdb.operations.database import Database
from tcdb.queries.topic_selection import topic_lists
from tcdb.reports.persistence_scores import (
    NO_SCORES,
    SEVERAL_RUNS,
    PersistenceScores,
    QrelsChoice,
    _check_snapshots,
    choose_systems,
    resolve_qrels,
)


def cross_snapshot_scores(
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
    """Per-topic scores of the first snapshot's runs on each snapshot's qrels (see above)."""
    import pandas as pd
    from sqlalchemy import select
    from sqlmodel import col

    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import (
        evaluations,
        measure_ids,
        qrels_topics,
        snapshot_topics,
        stored_scores,
    )
    from tcdb.runs.systems import system_labels
    from tcdb.schema import Run, System
    from tcdb.scoring.cross_snapshot import evaluate_from
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.measures import parse_measures
    from tcdb.scoring.scores import with_unanswered

    labels = _check_snapshots(snapshots)
    first = labels[0]
    names = parse_measures(measures)
    qrels_names = resolve_qrels(labels, qrels)
    with db.session() as session:
        get_collection(session, collection)
        snap = get_snapshot(session, collection, first)
        rows = session.execute(select(col(Run.id), col(Run.tag), col(System.id),
                                      col(System.group_name), col(System.name))
                               .join(System, col(System.id) == col(Run.system_id))
                               .where(col(Run.snapshot_id) == snap.pk)
                               .order_by(col(Run.tag))).all()
    label_of = system_labels({int(r[2]): (r[3], r[4]) for r in rows})
    by_system: dict[str, list[tuple[int, str]]] = {}
    for run_id, tag, sid, _, _ in rows:
        by_system.setdefault(label_of[int(sid)], []).append((int(run_id), tag))
    followed = choose_systems(sorted(by_system), systems, keep,
                              f"snapshot {first!r} of {collection!r}")
    data = PersistenceScores(collection, labels, qrels_names, topics, {}, {})
    data.warnings.append(f"--cross-snapshot: every snapshot scores the runs of {first!r}")
    single = {s: by_system[s][0] for s in followed if len(by_system[s]) == 1}
    tags = [tag for _, tag in single.values()]
    if compute and tags:
        evaluate(db, collection, first, qrels_names[first], names, tags)
        for later in labels[1:]:
            evaluate_from(db, collection, later, qrels_names[later], names, first, tags)
    with db.session() as session:
        conn = session.connection()
        mids = measure_ids(conn, names)
        judged: dict[str, dict[int, str]] = {}
        stored, done = {}, {}
        run_ids = [r for r, _ in single.values()]
        for label in labels:
            snap = get_snapshot(session, collection, label)
            qset = get_qrels_set(session, snap, qrels_names[label])
            judged[label] = qrels_topics(conn, qset.pk, snap.pk)
            data.topic_names[label] = snapshot_topics(conn, snap.pk)
            stored[label] = stored_scores(conn, qset.pk, run_ids, list(mids.values()))
            done[label] = evaluations(conn, qset.pk, run_ids, list(mids.values()))
            # NumRel, NumQ: an unanswered judged topic as trec_eval -c gives it
            stored[label] = with_unanswered(conn, qset.pk, names, mids, judged[label],
                                            done[label], stored[label])
        selected = topic_lists(session, collection, judged, topics)
    data.topics, data.n_selected = mapped_topics(selected, set(data.topic_names[first]))
    for name in names:
        mid = mids.get(name, -1)
        out: list[tuple[str, str, int, float]] = []
        data.runs[name], data.skipped[name] = {}, []
        for system in followed:
            if system not in single:
                found = ", ".join(t for _, t in by_system[system])
                data.skipped[name].append({"system": system, "kind": SEVERAL_RUNS, "reason":
                                           f"{len(by_system[system])} runs in snapshot "
                                           f"{first!r} ({found})"})
                continue
            run_id, tag = single[system]
            missing = [label for label in labels if (run_id, mid) not in done[label]]
            if missing:
                data.skipped[name].append({"system": system, "kind": NO_SCORES, "reason":
                                           f"run {tag!r} has no {name} scores on the qrels of "
                                           f"{some(missing)}"})
                continue
            data.runs[name][system] = dict.fromkeys(labels, tag)
            for label in labels:
                values = stored[label].get((run_id, mid), {})
                out.extend((system, label, t, values.get(t, 0.0)) for t in data.topics[label])
        data.frames[name] = pd.DataFrame(out, columns=["system", "snapshot", "topic", "value"])
    return data


def mapped_topics(selected: dict[str, list[int]], first: set[int]
                  ) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Each snapshot's selected topics that the first snapshot has (see the module docstring),
    and how many were selected before; refused when a snapshot keeps none."""
    kept = {label: [t for t in ids if t in first] for label, ids in selected.items()}
    empty = [label for label, ids in kept.items() if not ids]
    if empty:
        raise FieldError("topics", f"no topic of snapshot(s) {some(empty)} exists in the "
                         "first snapshot: its runs cannot be scored there")
    return kept, {label: len(ids) for label, ids in selected.items()}
