"""Run versions: a resubmitted run keeps what it replaced.

Campaigns take resubmissions (LongEval 2025 lists six runs under a later `version`
timestamp). The `run` row is always the latest version — its id, its place in pools and its
scores are what every report reads — and `run import --replace` of a changed file first moves
the version it replaces, with its entries, to `run_version` (`archive_version`). An earlier
version is read back as a ranking (`version_ranking`) when asked for by label
(`evaluate --version`).

A version's label is the import's (`--version`, or the round's table's `version` column:
LongEval's timestamps), else the next number tcdb counts ("1", "2", …).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, literal
from sqlmodel import Session, col, select

from tcdb.errors import ConflictError, NotFoundError
from tcdb.queries import RunDict, snapshot_topics
from tcdb.schema import (
    RunEntry,
    RunVersion,
    RunVersionEntry,
    RunVersionUnresolved,
    SnapshotDocument,
    UnresolvedRunEntry,
)
from tcdb.sorting import version_key

if TYPE_CHECKING:
    from tcdb.schema import Run

def earlier_versions(session: Session, run_id: int) -> list[RunVersion]:
    """A run's earlier versions, oldest first."""
    return list(session.exec(select(RunVersion).where(col(RunVersion.run_id) == run_id)
                             .order_by(col(RunVersion.superseded_at), col(RunVersion.id))))


def version_labels(session: Session, run: Run) -> list[str]:
    """Every version label of a run, the earlier ones first, the current one last."""
    return [v.version for v in earlier_versions(session, run.pk)] + [run.version]


def next_version(session: Session, run: Run, given: str | None) -> str:
    """The label of the version that replaces `run`'s: `given`, checked to be new, else one
    past the largest number among its labels (labels that are not numbers count by number of
    versions)."""
    labels = version_labels(session, run)
    if given is not None:
        if given in labels:
            raise ConflictError(f"run {run.tag!r} already has a version {given!r} from another "
                                f"file: give the resubmission a new version label")
        return given
    numbers = [int(label) for label in labels if label.isdigit()]
    candidate = max([len(labels), *numbers]) + 1
    while str(candidate) in labels:
        candidate += 1
    return str(candidate)


def archive_version(session: Session, run: Run) -> RunVersion:
    """Move `run`'s current version (its file's facts and its entries) to `run_version`, in the
    caller's transaction; the caller then clears the run and writes the new version into it.

    The entries move in the database (INSERT … SELECT): nothing passes through Python."""
    version = RunVersion(run_id=run.pk, version=run.version, checksum=run.checksum,
                         source=run.source, submitted=run.submitted, meta=run.meta,
                         n_entries=run.n_entries, n_unresolved=run.n_unresolved,
                         n_rejected=run.n_rejected, imported_at=run.created_at)
    session.add(version)
    session.flush()
    conn = session.connection()
    moves: list[tuple[Any, Any, list[str]]] = [
        (RunEntry, RunVersionEntry, ["topic_id", "eval_rank", "document_id", "rank", "score"]),
        (UnresolvedRunEntry, RunVersionUnresolved,
         ["topic_id", "external_doc_id", "rank", "eval_rank", "score"])]
    for source, target, columns in moves:
        conn.execute(insert(target).from_select(
            ["version_id", *columns],
            select(literal(version.pk), *(col(getattr(source, c)) for c in columns))
            .where(col(source.run_id) == run.pk)))
    return version


def find_version(session: Session, run: Run, label: str) -> RunVersion | None:
    """The earlier version of `run` labelled `label`; None when it is the current one.
    NotFoundError names the versions the run has."""
    if label == run.version:
        return None
    found = session.exec(select(RunVersion).where(col(RunVersion.run_id) == run.pk,
                                                  col(RunVersion.version) == label)).first()
    if found is None:
        known = ", ".join(repr(v) for v in sorted(version_labels(session, run), key=version_key))
        raise NotFoundError(f"run {run.tag!r} has no version {label!r} (versions: {known})")
    return found


def version_ranking(session: Session, snapshot_id: int, version_id: int) -> RunDict:
    """An earlier version's entries as ir_measures' dict of dicts, with external ids (resolved
    and unresolved entries, as `tcdb.queries.read_runs` gives a current run)."""
    conn = session.connection()
    topics = {topic: ext for topic, (ext, _) in snapshot_topics(conn, snapshot_id).items()}
    ranking: RunDict = {}
    rows = conn.execute(
        select(col(RunVersionEntry.topic_id), col(SnapshotDocument.external_id),
               col(RunVersionEntry.score))
        .join(SnapshotDocument, (col(SnapshotDocument.document_id)
                                 == col(RunVersionEntry.document_id))
              & (col(SnapshotDocument.snapshot_id) == snapshot_id))
        .where(col(RunVersionEntry.version_id) == version_id))
    for topic_id, doc, score in rows:
        ranking.setdefault(topics[topic_id], {})[doc] = score
    for topic_id, doc, score in conn.execute(
            select(col(RunVersionUnresolved.topic_id), col(RunVersionUnresolved.external_doc_id),
                   col(RunVersionUnresolved.score))
            .where(col(RunVersionUnresolved.version_id) == version_id)):
        ranking.setdefault(topics[topic_id], {})[doc] = score
    return ranking


def versions_of(session: Session, runs: Sequence[Run], label: str
                ) -> dict[int, RunVersion | None]:
    """run id → its earlier version `label` (None: the run's current version is `label`)."""
    return {run.pk: find_version(session, run, label) for run in runs}
