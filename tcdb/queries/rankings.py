"""One system followed across snapshots: its run in each, and its rankings by document identity.

Why by identity: a document keeps its key (its id, or its URL) across snapshots while its
external id may change, so two snapshots' rankings can only be compared, or an old run scored
on new qrels, through `document.key` / `document_id`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection, get_snapshot
from tcdb.errors import ConflictError, NotFoundError, some
from tcdb.schema import Run, System


def system_runs(session: Session, collection: str, labels: Sequence[str], system: str
                ) -> dict[str, tuple[int, str]]:
    """snapshot label → (run id, tag) of the system's one run there.

    `system` is a system's name or `group/name`. No such system, no run in a snapshot, or
    several runs there: an error that says which, listing the runs found.
    """
    from tcdb.runs.systems import system_labels

    coll = get_collection(session, collection)
    rows = session.execute(select(col(System.id), col(System.group_name), col(System.name))
                           .where(col(System.collection_id) == coll.id)).all()
    names = {int(sid): (group, name) for sid, group, name in rows}
    label_of = system_labels(names)
    found = [sid for sid, (group, name) in names.items()
             if system in (label_of[sid], name, f"{group}/{name}")]
    if not found:
        known = some(sorted(label_of.values())) or "none"
        raise NotFoundError(f"no system {system!r} in {collection!r} (systems: {known})")
    if len(found) > 1:
        raise ConflictError(f"{system!r} names several systems of {collection!r} "
                            f"({', '.join(sorted(label_of[s] for s in found))}): "
                            "give group/name")
    out: dict[str, tuple[int, str]] = {}
    for label in labels:
        snap = get_snapshot(session, collection, label)
        runs = session.execute(select(col(Run.id), col(Run.tag))
                               .where(col(Run.snapshot_id) == snap.id,
                                      col(Run.system_id) == found[0])
                               .order_by(col(Run.tag))).all()
        if not runs:
            raise NotFoundError(f"system {system!r} has no run in snapshot {label!r}")
        if len(runs) > 1:
            raise ConflictError(f"system {system!r} has {len(runs)} runs in snapshot {label!r} "
                                f"({some(t for _, t in runs)})")
        out[label] = (int(runs[0][0]), str(runs[0][1]))
    return out


def ranking_keys(conn: Connection, run_id: int, depth: int | None = None
                 ) -> dict[int, list[str]]:
    """topic.id → the run's documents by identity key, in trec_eval's order (`eval_rank`).

    Entries for documents the run's snapshot lacks (unresolved) keep their place under their
    external id: they have no identity, so they match nothing in another snapshot.
    """
    limit = "" if depth is None else f" AND eval_rank <= {int(depth)}"
    rows = conn.execute(text(
        "SELECT e.topic_id, e.eval_rank, d.key FROM run_entry e "
        f"JOIN document d ON d.id = e.document_id WHERE e.run_id = :r{limit} "
        "UNION ALL SELECT topic_id, eval_rank, external_doc_id FROM run_entry_unresolved "
        f"WHERE run_id = :r{limit} ORDER BY 1, 2"), {"r": int(run_id)})
    out: dict[int, list[str]] = {}
    for topic_id, _, key in rows:
        out.setdefault(int(topic_id), []).append(str(key))
    return out
