"""Deleting what hangs off runs, qrels sets and snapshots, explicitly.

`run_entry`, `score`, `pool_entry` and `snapshot_document` carry no FOREIGN KEY constraints
(bulk-write speed, see schema/runs.py), so no cascade will ever remove their rows: every code
path that deletes or replaces a run, a qrels set or a snapshot must come through here, in the
caller's transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, select
from sqlmodel import Session, col

from tcdb.schema import (
    Evaluation,
    Pool,
    PoolEntry,
    QrelsSet,
    Run,
    RunEntry,
    RunVersion,
    RunVersionEntry,
    RunVersionUnresolved,
    Score,
    Snapshot,
    SnapshotDocument,
    UnresolvedRunEntry,
)
from tcdb.storage.db import connection_of


def clear_run(bind: Session | Connection, run_id: int) -> None:
    """Remove a run's entries, unresolved entries, scores and evaluations; keep the run row.

    Used by `run import --replace`, so the run keeps its id (and its place in pools).
    """
    conn = connection_of(bind)
    conn.execute(delete(RunEntry).where(col(RunEntry.run_id) == run_id))
    conn.execute(delete(UnresolvedRunEntry).where(col(UnresolvedRunEntry.run_id) == run_id))
    clear_run_scores(conn, run_id)


def clear_run_scores(bind: Session | Connection, run_id: int) -> None:
    """Remove a run's scores and evaluation markers (its entries stay)."""
    conn = connection_of(bind)
    conn.execute(delete(Score).where(col(Score.run_id) == run_id))
    conn.execute(delete(Evaluation).where(col(Evaluation.run_id) == run_id))


def delete_run(bind: Session | Connection, run_id: int) -> None:
    """Delete a run and everything that refers to it, its earlier versions too."""
    conn = connection_of(bind)
    clear_run(conn, run_id)
    delete_run_versions(conn, [run_id])
    conn.execute(delete(Run).where(col(Run.id) == run_id))


def delete_run_versions(bind: Session | Connection, run_ids: Any) -> None:
    """Delete the earlier versions of these runs (ids, or a subquery of them) with their
    entries (`run_version_entry` has no FOREIGN KEY to cascade)."""
    conn = connection_of(bind)
    versions = select(col(RunVersion.id)).where(col(RunVersion.run_id).in_(run_ids))
    conn.execute(delete(RunVersionEntry).where(
        col(RunVersionEntry.version_id).in_(versions.scalar_subquery())))
    conn.execute(delete(RunVersionUnresolved).where(
        col(RunVersionUnresolved.version_id).in_(versions.scalar_subquery())))
    conn.execute(delete(RunVersion).where(col(RunVersion.run_id).in_(run_ids)))


def delete_qrels_scores(bind: Session | Connection, qrels_set_id: int) -> None:
    """Remove every score and evaluation computed against a qrels set."""
    conn = connection_of(bind)
    conn.execute(delete(Score).where(col(Score.qrels_set_id) == qrels_set_id))
    conn.execute(delete(Evaluation).where(col(Evaluation.qrels_set_id) == qrels_set_id))


def delete_snapshot_dependents(
    bind: Session | Connection, snapshot_id: int, *, keep_runs: bool = False
) -> None:
    """Remove a snapshot's runs (entries, scores, evaluations) and all scores on its qrels sets.

    Called when a snapshot is replaced: its run entries point at the old documents and topics.
    With `keep_runs` the run rows stay (entries and scores go). Qrels sets and judgments are left
    to the caller (their foreign keys cascade with the snapshot).
    """
    conn = connection_of(bind)
    run_ids = select(col(Run.id)).where(col(Run.snapshot_id) == snapshot_id).scalar_subquery()
    qrels_ids = select(col(QrelsSet.id)).where(
        col(QrelsSet.snapshot_id) == snapshot_id).scalar_subquery()
    conn.execute(delete(RunEntry).where(col(RunEntry.run_id).in_(run_ids)))
    conn.execute(delete(UnresolvedRunEntry).where(col(UnresolvedRunEntry.run_id).in_(run_ids)))
    delete_run_versions(conn, run_ids)  # their entries name the old documents too
    conn.execute(delete(Score).where(col(Score.run_id).in_(run_ids)))
    conn.execute(delete(Score).where(col(Score.qrels_set_id).in_(qrels_ids)))
    conn.execute(delete(Evaluation).where(col(Evaluation.run_id).in_(run_ids)))
    conn.execute(delete(Evaluation).where(col(Evaluation.qrels_set_id).in_(qrels_ids)))
    pool_ids = select(col(Pool.id)).where(col(Pool.snapshot_id) == snapshot_id).scalar_subquery()
    conn.execute(delete(PoolEntry).where(col(PoolEntry.pool_id).in_(pool_ids)))
    if not keep_runs:
        conn.execute(delete(Run).where(col(Run.snapshot_id) == snapshot_id))


def delete_snapshot(bind: Session | Connection, snapshot_id: int) -> None:
    """Delete a snapshot with its runs, scores, pools and document memberships; qrels sets,
    judgments and topic memberships go by their foreign keys' cascade."""
    conn = connection_of(bind)
    delete_snapshot_dependents(conn, snapshot_id)
    conn.execute(delete(SnapshotDocument).where(col(SnapshotDocument.snapshot_id) == snapshot_id))
    conn.execute(delete(Snapshot).where(col(Snapshot.id) == snapshot_id))
