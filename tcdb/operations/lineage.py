"""Lineage: what a report's figures were computed from, so a number in a paper can be traced.

Every report result carries `lineage: Lineage | None`, filled by `lineage_of(...)`: the runs
(tag, the version used and the sha256 of the file it was imported from), the qrels sets (name,
kind, a checksum of their judgments, and the stored sha256 of the file they came from), the
topic selection (and a checksum of a named topic set's members), the measures with the
ir_measures provider that computes each and what is known to differ between trec_eval
versions, the versions of tcdb, ir_measures and pytrec_eval, and the database's schema
revision (Alembic).

Checksums are plain sha256 hex digests so anyone can recompute them without tcdb:
* a qrels set: of its judgments as `qrels export` writes them, one line `topic<TAB>doc<TAB>grade`
  per judgment (external ids of the snapshot; documents it lacks by their collection key), the
  lines sorted as bytes, each ending in a newline (iterations left out: evaluation ignores them);
* a topic set: of its members' topic keys (identity across snapshots), sorted, one per line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tcdb.operations.circularity import CircularRun, circular_runs
from tcdb.operations.database import Database

if TYPE_CHECKING:
    from sqlmodel import Session

    from tcdb.schema import QrelsSet, Run, RunVersion

# trec_eval 10 rounds `iprec_at_recall` cutoffs differently; pytrec_eval embeds trec_eval 9.0.x.
IPREC_NOTE = ("trec_eval 10 changed how iprec_at_recall cutoffs are rounded; these values follow "
              "trec_eval 9.0.x (as embedded in pytrec_eval), as ir_measures computes them")


class RunLineage(BaseModel):
    """One run a figure was computed from."""

    snapshot: str
    run: str
    checksum: str | None  # sha256 of the run file as imported (None: not imported from a file)
    version: str | None = None  # the run's version used (`tcdb.runs.versions`)


class QrelsLineage(BaseModel):
    """One qrels set a figure was computed from."""

    snapshot: str
    name: str
    kind: str
    n_judgments: int
    checksum: str  # sha256 of the sorted `topic\tdoc\tgrade` lines (module docstring)
    file_checksum: str | None  # sha256 of the file it was imported from, as stored
    judge_kind: str = "unknown"  # who judged: human, llm, clicks, … (`qrels_set.judge_kind`)
    model: str | None = None  # an LLM judge's model (@revision), from `qrels_provenance`
    prompt_sha256: str | None = None  # and the sha256 of its prompt template


class TopicsLineage(BaseModel):
    """The topics averaged over: all, core, or a named topic set (then its members' checksum)."""

    selection: str | None
    n_members: int | None = None
    checksum: str | None = None


class MeasureLineage(BaseModel):
    """A measure, who computes it, and what a reader must know when comparing with trec_eval."""

    name: str
    provider: str | None  # the ir_measures provider (pytrec_eval: trec_eval's own code)
    note: str | None = None


class Lineage(BaseModel):
    """What a report's figures were computed from (module docstring)."""

    collection: str
    runs: list[RunLineage]
    qrels: list[QrelsLineage]
    topics: TopicsLineage
    measures: list[MeasureLineage]
    versions: dict[str, str | None]  # tcdb, ir_measures, pytrec_eval, trec_eval semantics
    schema_revision: str | None  # the database's Alembic revision
    publications: list[str] = []  # literature figures: the reported results' publications
    # runs ranked under qrels an LLM of their own model family judged (`.circularity`)
    circular: list[CircularRun] = []

    def notes(self) -> list[str]:
        """The measure notes, one line each (`IPrec@0.1: …`), for captions and footnotes."""
        return [f"{m.name}: {m.note}" for m in self.measures if m.note]

    def lines(self) -> list[str]:
        """The lineage as short lines for a table's footnote or a LaTeX comment block."""
        v = self.versions
        out = [f"collection {self.collection}; schema revision {self.schema_revision}",
               f"tcdb {v.get('tcdb')}, ir_measures {v.get('ir_measures')}, pytrec_eval "
               f"{v.get('pytrec_eval')} (trec_eval {v.get('trec_eval')})"]
        topics = self.topics
        out.append(f"topics {topics.selection or 'all'}" + (
            f" ({topics.n_members} members, sha256 {topics.checksum})" if topics.checksum
            else ""))
        out += [f"qrels {q.snapshot}/{q.name} ({q.kind}, {q.n_judgments} judgments) sha256 "
                f"{q.checksum}" + (f", file sha256 {q.file_checksum}" if q.file_checksum else "")
                for q in self.qrels]
        out += [f"run {r.snapshot}/{r.run}" + (f" version {r.version}" if r.version else "")
                + f" sha256 {r.checksum or 'unknown'}" for r in self.runs]
        out += [f"measure {m.name} by {m.provider}" + (f": {m.note}" if m.note else "")
                for m in self.measures]
        out += [f"publication {p}" for p in self.publications]
        out += [c.line() for c in self.circular]
        return out


def lineage_of(db: Database, collection: str, *, runs: Iterable[tuple[str, str]] = (),
               qrels: Iterable[tuple[str, str]] = (), topics: str | None = None,
               measures: Iterable[str] = (), session: Session | None = None,
               publications: Iterable[str] = ()) -> Lineage:
    """The lineage of figures computed from `runs` and `qrels` ((snapshot, name) pairs) of
    `collection`, over `topics`, with `measures` (and reported results of `publications`).
    Opens a session of the operation's database unless given one. An operation that holds the
    rows already builds it with `lineage_from_rows`."""
    if session is None:
        with db.session() as own:
            return lineage_of(db, collection, runs=runs, qrels=qrels, topics=topics,
                              measures=measures, session=own, publications=publications)
    run_pairs = list(dict.fromkeys(runs))
    qrels_pairs = list(dict.fromkeys(qrels))
    return _lineage(session, collection, _runs(session, collection, run_pairs),
                    [_qrels(session, collection, snapshot, name)
                     for snapshot, name in qrels_pairs], topics, measures, publications)


def lineage_from_rows(session: Session, collection: str, *, runs: Iterable[tuple[str, Run]],
                      qrels: Iterable[tuple[str, str, QrelsSet]], topics: str | None = None,
                      measures: Iterable[str] = (),
                      earlier: Mapping[int, RunVersion | None] | None = None) -> Lineage:
    """`lineage_of` for an operation that resolved its names already: the runs as rows with
    their snapshot's label, the qrels sets as (snapshot label, name asked for, row);
    `earlier`: run id → the earlier version used instead of the run's current one."""
    chosen = earlier or {}

    def of(label: str, run: Run) -> RunLineage:
        version = chosen.get(run.pk)
        if version is not None:
            return RunLineage(snapshot=label, run=run.tag, checksum=version.checksum,
                              version=version.version)
        return RunLineage(snapshot=label, run=run.tag, checksum=run.checksum,
                          version=run.version)

    run_lineages = {(label, run.tag): of(label, run) for label, run in runs}
    qrels_lineages = {(label, name): _qrels_lineage(session, label, name, qset)
                      for label, name, qset in qrels}
    return _lineage(session, collection, list(run_lineages.values()),
                    list(qrels_lineages.values()), topics, measures, ())


def _lineage(session: Session, collection: str, runs: list[RunLineage],
             qrels: list[QrelsLineage], topics: str | None, measures: Iterable[str],
             publications: Iterable[str]) -> Lineage:
    return Lineage(
        collection=collection, runs=runs, qrels=qrels, topics=_topics(session, collection, topics),
        measures=[measure_lineage(m) for m in dict.fromkeys(measures)],
        versions=versions(), schema_revision=schema_revision(session),
        publications=list(dict.fromkeys(publications)),
        circular=circular_runs(session, collection, [(r.snapshot, r.run) for r in runs],
                               [(f"{q.snapshot}/{q.name}", q.model) for q in qrels
                                if q.judge_kind == "llm" and q.model]))


def qrels_pair(snapshot: str, name: str) -> tuple[str, str]:
    """`NAME` (of `snapshot`) or `SNAPSHOT/NAME` as (snapshot, name): a residual's qrels."""
    other, _, own = name.rpartition("/")
    return (other or snapshot, own)


def measure_lineage(name: str) -> MeasureLineage:
    """The provider of a measure and its trec_eval-version note (IPrec: 9.0.x vs 10)."""
    import ir_measures

    from tcdb.scoring.measures import provider_of

    try:
        parsed = ir_measures.parse_measure(name)
    except (ValueError, NameError, TypeError, SyntaxError):
        return MeasureLineage(name=name, provider=None)
    provider = provider_of(parsed)
    note = IPREC_NOTE if name.startswith("IPrec") else None
    return MeasureLineage(name=name, provider=provider, note=note)


@cache
def versions() -> dict[str, str | None]:
    """Versions of tcdb, ir_measures and pytrec_eval (the evaluator backend), and which
    trec_eval's semantics pytrec_eval follows."""
    from importlib.metadata import PackageNotFoundError, version

    def of(*names: str) -> str | None:
        for name in names:
            try:
                return version(name)
            except PackageNotFoundError:
                continue
        return None

    return {"tcdb": of("tcdb"), "ir_measures": of("ir_measures", "ir-measures"),
            "pytrec_eval": of("pytrec-eval-terrier", "pytrec_eval"),
            "trec_eval": "9.0.x, as embedded in pytrec_eval"}


def schema_revision(session: Session) -> str | None:
    """The database's Alembic revision (`alembic_version`), None when it has none."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(session.connection()).get_current_revision()


def _runs(session: Session, collection: str, pairs: list[tuple[str, str]]) -> list[RunLineage]:
    from sqlmodel import col, select

    from tcdb.schema import Collection, Run, Snapshot

    if not pairs:
        return []
    query = (select(col(Snapshot.label), col(Run.tag), col(Run.checksum), col(Run.version))
             .join(Snapshot, col(Snapshot.id) == col(Run.snapshot_id))
             .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
             .where(col(Collection.name) == collection,
                    col(Snapshot.label).in_({s for s, _ in pairs}),
                    col(Run.tag).in_({t for _, t in pairs})))
    found = {(s, t): (c, v) for s, t, c, v in session.exec(query)}
    return [RunLineage(snapshot=s, run=t, checksum=found.get((s, t), (None, None))[0],
                       version=found.get((s, t), (None, None))[1]) for s, t in pairs]


def _qrels(session: Session, collection: str, snapshot: str, name: str) -> QrelsLineage:
    from sqlmodel import col, select

    from tcdb.schema import Collection, QrelsSet, Snapshot

    row = session.exec(
        select(QrelsSet, col(Snapshot.id))
        .join(Snapshot, col(Snapshot.id) == col(QrelsSet.snapshot_id))
        .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
        .where(col(Collection.name) == collection, col(Snapshot.label) == snapshot,
               col(QrelsSet.name) == name)).first()
    if row is None and name == "original":  # the designated original (`get_qrels_set`)
        row = session.exec(
            select(QrelsSet, col(Snapshot.id))
            .join(Snapshot, col(Snapshot.id) == col(QrelsSet.snapshot_id))
            .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
            .where(col(Collection.name) == collection, col(Snapshot.label) == snapshot,
                   col(QrelsSet.name) == col(Snapshot.original_qrels))).first()
    return _qrels_lineage(session, snapshot, name, None if row is None else row[0])


def _qrels_lineage(session: Session, snapshot: str, name: str,
                   qset: QrelsSet | None) -> QrelsLineage:
    """A qrels set's lineage under the name it was asked by (`original` stays `original`)."""
    if qset is None:
        return QrelsLineage(snapshot=snapshot, name=name, kind="unknown", n_judgments=0,
                            checksum="", file_checksum=None)
    checksum = qset.judgments_checksum
    if checksum is None:  # a set no report has read since it was written: hash it, keep it
        checksum, _ = qrels_checksum(session, qset.pk, qset.snapshot_id)
        _remember(session, qset.pk, checksum)
    from tcdb.schema import QrelsProvenance

    judge = session.get(QrelsProvenance, qset.pk)
    model = judge.model if judge is not None else None
    if model and judge is not None and judge.model_revision:
        model = f"{model}@{judge.model_revision}"
    return QrelsLineage(snapshot=snapshot, name=name, kind=str(getattr(qset.kind, "value",
                                                                         qset.kind)),
                        n_judgments=qset.n_judgments, checksum=checksum,
                        file_checksum=qset.checksum,
                        judge_kind=str(getattr(qset.judge_kind, "value", qset.judge_kind)),
                        model=model,
                        prompt_sha256=judge.prompt_sha256 if judge is not None else None)


def qrels_checksum(session: Session, qrels_set_id: int, snapshot_id: int) -> tuple[str, int]:
    """(sha256 of the sorted `topic\\tdoc\\tgrade` lines, number of judgments).

    Reads every judgment: a qrels set keeps the result (`qrels_set.judgments_checksum`, written
    by the first report's lineage after the set was created or, a pooled set, grew).
    """
    from tcdb.queries.qrels import qrels_records

    lines = sorted(f"{r.topic_id}\t{r.doc_id}\t{r.grade}\n".encode()
                   for r in qrels_records(session, qrels_set_id, snapshot_id))
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line)
    return digest.hexdigest(), len(lines)


def _remember(session: Session, qrels_set_id: int, checksum: str) -> None:
    """Store a checksum computed for a set that had none, if the database takes the write now.

    In a write transaction (`tcdb.storage.locks.locked_session`: evaluate builds its lineage
    under the runs lock) the checksum is written in that transaction, so whether it is kept
    never depends on whether the operation had other rows to write. Otherwise on its own short
    connection, so a report's reading transaction stays a read: a read-only database or role,
    or another process holding the write lock, only means the next report hashes the set again
    (never that it waits or fails)."""
    from sqlalchemy import update
    from sqlalchemy.exc import SQLAlchemyError
    from sqlmodel import col

    from tcdb.schema import QrelsSet
    from tcdb.storage.locks import WRITES

    statement = (update(QrelsSet).where(col(QrelsSet.id) == qrels_set_id,
                                        col(QrelsSet.judgments_checksum).is_(None))
                 .values(judgments_checksum=checksum))
    if session.info.get(WRITES):
        try:
            with session.begin_nested():  # SQLite may refuse to take its write lock now
                session.connection().execute(statement)
        except SQLAlchemyError:
            pass
        return
    bind = session.get_bind()
    engine = bind.engine  # an Engine's .engine is itself
    try:
        with engine.connect() as conn:
            sqlite = conn.dialect.name == "sqlite"
            if sqlite:  # no waiting for another writer
                conn.exec_driver_sql("PRAGMA busy_timeout = 0")
            else:
                conn.exec_driver_sql("SET LOCAL lock_timeout = '200ms'")
            try:
                conn.execute(statement)
                conn.commit()
            finally:
                if sqlite:  # the pooled connection waits as configured again
                    from tcdb.storage.db import SQLITE_BUSY_TIMEOUT_MS

                    conn.rollback()
                    conn.exec_driver_sql(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    except (SQLAlchemyError, OSError):
        return


def _topics(session: Session, collection: str, selection: str | None) -> TopicsLineage:
    from sqlmodel import col, select

    from tcdb.reports.fields import topic_set_name
    from tcdb.schema import Collection, Topic, TopicSet, TopicSetMember

    name = topic_set_name(selection)  # `set:core` is the topic set named core
    if name is None:
        return TopicsLineage(selection=selection)
    keys = sorted(session.exec(
        select(col(Topic.key))
        .join(TopicSetMember, col(TopicSetMember.topic_id) == col(Topic.id))
        .join(TopicSet, col(TopicSet.id) == col(TopicSetMember.topic_set_id))
        .join(Collection, col(Collection.id) == col(TopicSet.collection_id))
        .where(col(Collection.name) == collection, col(TopicSet.name) == name)).all())
    if not keys:
        return TopicsLineage(selection=selection)
    digest = hashlib.sha256("".join(f"{k}\n" for k in keys).encode())
    return TopicsLineage(selection=selection, n_members=len(keys), checksum=digest.hexdigest())
