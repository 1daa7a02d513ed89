"""Importing per-topic scores computed elsewhere: `trec_eval -q` output, ir_measures TSV, or a
tidy table (`run, topic, measure, value`) of several runs.

Scores without qrels. Published scores were computed on judgments the researcher often does
not have (the organisers kept them). tcdb models that as what it is: a qrels set of kind
`published` — the official judgments, known only through the scores computed with them. It
has no judgment rows (none is invented) and records where the scores came from (`source`,
`method`); its topics — the `trec_eval -c` denominator every mean divides by — are the topics
its scores name (`tcdb.queries.qrels_topics`), as trec_eval reports exactly the topics its
qrels judge. Every reader of scores keys on a qrels set as before, so persistence, compare,
subset and topic deltas read published scores unchanged; `evaluate` computes nothing on a
published set (no judgments to compute with). Real qrels imported later are a set of their
own beside it, and runs whose files arrive later are evaluated on those.

Into a judged set (`qrels` naming one) the rules stay: every topic must be judged in it.
"""

from __future__ import annotations

import datetime as dt
import math
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete
from sqlmodel import Session, col, select

from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError
from tcdb.limits import shown
from tcdb.operations.database import Database
from tcdb.schema import Collection, Evaluation, QrelsKind, QrelsSet, Run, Score, Snapshot
from tcdb.scoring.measures import value_range
from tcdb.scoring.published_means import PublishedMean, contradiction_said, published_mean
from tcdb.storage.bulk import bulk_insert

if TYPE_CHECKING:
    pass

PUBLISHED = "published"  # the name of the published set when none is given


@dataclass
class RunImport:
    """What was stored for one run."""

    run: str
    status: str  # imported | unchanged | replaced
    measures: list[str] = field(default_factory=list)
    n_scores: int = 0


@dataclass
class ScoresImportReport:
    """What `import_scores` stored: per run, and in sum (`status`: replaced if any run's
    values were replaced, imported if any were new, else unchanged)."""

    collection: str
    snapshot: str
    qrels: str
    run: str | None  # the run, when the file held one
    status: str  # "imported" | "unchanged" | "replaced"
    measures: list[str] = field(default_factory=list)
    n_scores: int = 0
    skipped: list[str] = field(default_factory=list)  # measures of the file not imported
    qrels_kind: str = "original"
    source: str | None = None  # where published scores came from
    runs: list[RunImport] = field(default_factory=list)
    topics_added: list[str] = field(default_factory=list)  # ids a scores-only snapshot gained
    # the file's `all` lines held against its per-topic lines (trec_eval output)
    published_means: list[PublishedMean] = field(default_factory=list)
    topics_normalised: list[str] = field(default_factory=list)  # ids as given, put in NFC
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _RunScores:
    """One run's per-topic rows as a file gave them, and where to point at a bad one."""

    per_topic: list[tuple[str, str, float]]
    line_of: Any  # (measure, topic) → line number or None
    published: list[PublishedMean] = field(default_factory=list)


def import_scores(
    db: Database,
    collection: str,
    snapshot: str,
    path: Path | str,
    *,
    qrels: str | None = None,
    run: str | None = None,
    system: str | None = None,
    source: str | None = None,
    replace: bool = False,
) -> ScoresImportReport:
    """Store per-topic scores for runs whose files are gone (or never were ours).

    `qrels` None: the snapshot's published set (`published`, made on first use, recording
    `source` or the file). A snapshot registered from the ids its scores name
    (`topics_from_scores`) gains the topics a file names; any other snapshot must have them.
    A trec_eval file is one run (`run`, else its `runid` line); a tidy table may hold several
    (`run` picks one). The same values again are a no-op; different values for a stored
    measure are refused unless `replace`. Runs get no entries; each measure an `imported`
    evaluation.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.collections.runs.trec import checksum_file

    path = Path(path)
    if not path.exists():  # a directory, a pipe: files.check_input says which
        raise NotFoundError(f"scores file not found: {path}")
    runs, skipped = _read(path, run)
    normalised = _in_nfc(path, runs)
    if system is not None and len(runs) > 1:
        raise FieldError("system", f"the file holds {len(runs)} runs; a system names one "
                         "(each run's system is its tag)")
    with db.write_session(f"runs\x00{collection}", immediate=False,
                       waiting=f"waiting for another process writing runs or scores of "
                       f"{collection!r} to finish …") as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = _qrels_set(session, snap, qrels, source or str(path.resolve()))
        added = _topics_from_scores(session, snap, path, runs)
        values = {tag: _values(session, snap, qset, path, scores) for tag, scores in runs.items()}
        report = ScoresImportReport(collection, snapshot, qset.name,
                                    next(iter(runs)) if len(runs) == 1 else None, "unchanged",
                                    skipped=sorted(skipped), qrels_kind=qset.kind.value,
                                    source=qset.source if qset.kind == QrelsKind.published
                                    else None, topics_added=added,
                                    topics_normalised=normalised)
        for scores in runs.values():
            report.published_means.extend(scores.published)
        report.warnings = [contradiction_said(path, p) for p in report.published_means
                           if p.semantics == "contradicts"]
        checksum = checksum_file(path)
        for tag, by_measure in values.items():
            done = _store_run(session, snap, qset, tag, by_measure, path, checksum,
                              system, replace)
            report.runs.append(done)
            report.n_scores += done.n_scores
        report.measures = sorted({m for r in report.runs for m in r.measures})
        states = {r.status for r in report.runs}
        report.status = next((s for s in ("replaced", "imported") if s in states), "unchanged")
        return report


def _read(path: Path, run: str | None) -> tuple[dict[str, _RunScores], set[str]]:
    """run tag → its rows, and the file's measures not imported."""
    from tcdb.collections.scores.tidy import is_tidy, read_tidy_scores
    from tcdb.collections.scores.trec_eval import read_trec_eval

    if is_tidy(path):
        tidy = read_tidy_scores(path)
        if run is not None:
            if run not in tidy:
                raise FieldError("run", f"{path} has no rows of run {run!r} (runs: "
                                 f"{', '.join(sorted(tidy))})")
            tidy = {run: tidy[run]}
        return {tag: _RunScores(s.per_topic, s.lines.get) for tag, s in tidy.items()
                if s.per_topic}, set()
    output = read_trec_eval(path)
    if not output.per_topic:
        raise InputError(path, None, "no per-topic scores of a known measure (was the file "
                         "written with trec_eval -q?)")
    tag = run or _runid(path)
    if tag is None:
        raise FieldError("run", f"{path} names no run (no `runid all TAG` line): give the "
                         "run's tag")
    published = [published_mean(output, measure) for measure in output.aggregate]
    return ({tag: _RunScores(output.per_topic, output.lines.get, published)},
            set(output.skipped) - {"runid", "num_q"})


def _in_nfc(path: Path, runs: dict[str, _RunScores]) -> list[str]:
    """Put every topic id in Unicode normal form C, as names are (`tcdb.names`); the ids
    changed, as given. Two ids of one file that differ only in normalisation are one topic
    given twice: refused naming the line."""
    changed: dict[str, str] = {}
    for scores in runs.values():
        given: dict[tuple[str, str], str] = {}
        rows = []
        for measure, topic, value in scores.per_topic:
            nfc = unicodedata.normalize("NFC", topic)
            first = given.setdefault((measure, nfc), topic)
            if first != topic:
                raise InputError(path, scores.line_of((measure, topic)),
                                 f"topic {ascii(topic)} and topic {ascii(first)} differ only "
                                 f"in Unicode normalisation (both are {ascii(nfc)} in NFC): "
                                 f"{measure} is given twice for one topic")
            if nfc != topic:
                changed[topic] = nfc
            rows.append((measure, nfc, value))
        if changed:
            line_of = scores.line_of
            raw = {(m, nfc): t for (m, nfc), t in given.items()}
            scores.per_topic = rows
            scores.line_of = lambda key, _l=line_of, _r=raw: _l((key[0], _r.get(key, key[1])))
    return sorted(changed)


def _runid(path: Path) -> str | None:
    """The tag of trec_eval's `runid all TAG` line, a name by the rule (`tcdb.names`)."""
    from tcdb.collections.runs.trec import read_text
    from tcdb.names import BadName, check_name

    for number, line in enumerate(read_text(path).split("\n"), start=1):
        parts = line.split()
        if len(parts) == 3 and parts[0] == "runid" and parts[1] == "all":
            try:
                return check_name(parts[2])
            except BadName as exc:
                raise InputError(path, number, f"run tag: {exc}") from None
    return None


def _qrels_set(session: Session, snap: Snapshot, name: str | None, source: str) -> QrelsSet:
    """The named set, or the snapshot's published set (made on first use)."""
    from tcdb.judging.qrels import get_qrels_set

    if name is not None:
        return get_qrels_set(session, snap, name)
    found = session.exec(select(QrelsSet).where(QrelsSet.snapshot_id == snap.pk,
                                                QrelsSet.name == PUBLISHED)).first()
    if found is not None:
        if found.kind != QrelsKind.published:
            raise ConflictError(f"snapshot {snap.label!r} has a {found.kind.value} qrels set "
                                f"named {PUBLISHED!r}: name the set the scores were computed "
                                "on with qrels")
        return found
    qset = QrelsSet(snapshot_id=snap.pk, name=PUBLISHED, kind=QrelsKind.published,
                    method="published scores", source=source, n_judgments=0,
                    description="the official judgments, known only through the per-topic "
                    "scores published with them")
    session.add(qset)
    session.flush()
    return qset


def _topics_from_scores(session: Session, snap: Snapshot, path: Path,
                        runs: dict[str, _RunScores]) -> list[str]:
    """Add the topics the scores name to a snapshot registered from them (ids, no texts)."""
    if not snap.topics_from_scores:
        return []
    from tcdb.collections.sources.records import TopicRecord
    from tcdb.ingest.report import IngestReport
    from tcdb.ingest.topics import write_topics
    from tcdb.queries import topic_ids

    have = topic_ids(session, snap.pk)
    named = dict.fromkeys(t for r in runs.values() for _, t, _ in r.per_topic if t not in have)
    if not named:
        return []
    coll = session.get(Collection, snap.collection_id)
    assert coll is not None
    ids = write_topics(session, coll, snap, [TopicRecord(t, "") for t in named],
                       IngestReport(coll.name, snap.label, "ingested", str(path)))
    snap.n_topics = len(ids)
    session.add(snap)
    session.flush()
    return list(named)


def _values(session: Session, snap: Snapshot, qset: QrelsSet, path: Path,
            scores: _RunScores) -> dict[str, dict[int, float]]:
    """measure → {topic.id: value}; a topic the snapshot lacks, or (in a judged set) one
    without judgments, is an InputError naming its line."""
    from tcdb.queries import qrels_topics, topic_ids

    topics = topic_ids(session, snap.pk)
    for stored, stored_id in list(topics.items()):  # a snapshot's id stored as given, not NFC
        topics.setdefault(unicodedata.normalize("NFC", stored), stored_id)
    judged = None if qset.kind == QrelsKind.published else qrels_topics(session, qset.pk,
                                                                        snap.pk)
    values: dict[str, dict[int, float]] = {}
    for measure, topic, value in scores.per_topic:
        topic_id = topics.get(topic)
        if topic_id is None:
            raise InputError(path, scores.line_of((measure, topic)),
                             f"topic {topic!r} is not in snapshot {snap.label!r}")
        if judged is not None and topic_id not in judged:
            raise InputError(path, scores.line_of((measure, topic)),
                             f"topic {topic!r} has no judgments in qrels set {qset.name!r}")
        if math.isnan(value):
            raise InputError(path, scores.line_of((measure, topic)),
                             f"{measure} for topic {topic!r} is NaN")
        bounds = value_range(measure)
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            shown_range = f"{bounds[0]:g} to {bounds[1]:g}".replace("inf", "∞")
            raise InputError(path, scores.line_of((measure, topic)),
                             f"{measure} {value:g} for topic {shown(topic)} is outside its "
                             f"range, {shown_range}")
        values.setdefault(measure, {})[topic_id] = value
    return values


def _store_run(session: Session, snap: Snapshot, qset: QrelsSet, tag: str,
               values: dict[str, dict[int, float]], path: Path, checksum: str,
               system: str | None, replace: bool) -> RunImport:
    """Create the run (no entries) if new, and write its scores and evaluation rows."""
    from tcdb.runs import get_system
    from tcdb.scoring.measures import measure_id

    run = session.exec(select(Run).where(Run.snapshot_id == snap.pk, Run.tag == tag)).first()
    if run is not None and run.n_entries + run.n_unresolved > 0 \
            and qset.kind != QrelsKind.published:
        raise ConflictError(f"run {tag!r} of {snap.label!r} has its entries stored: "
                            "`tcdb evaluate` computes its scores")
    if run is None:
        system_row = get_system(session, snap.collection_id, system or tag,
                                explicit=system is not None)
        run = Run(snapshot_id=snap.pk, system_id=system_row.pk, tag=tag, checksum=checksum,
                  source=str(path.resolve()),
                  description="per-topic scores imported from evaluation output")
        session.add(run)
        session.flush()
    assert run.id is not None and qset.id is not None
    mids = {name: measure_id(session, name) for name in values}
    done = RunImport(tag, "imported", sorted(values))
    stored = _stored(session, run.id, qset.id, list(mids.values()))
    different = sorted(m for m in values if mids[m] in stored and stored[mids[m]] != values[m])
    fresh = [m for m in values if mids[m] not in stored]
    if different and not replace:
        raise ConflictError(f"run {tag!r} already has different {qset.name!r} scores for "
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
        done.status = "unchanged"
        return done
    if different:
        done.status = "replaced"
    now = dt.datetime.now(dt.UTC)
    done.n_scores = bulk_insert(
        session, "score", ["run_id", "qrels_set_id", "measure_id", "topic_id", "value"],
        [(run.id, qset.id, mids[m], t, v) for m, by_topic in write.items()
         for t, v in by_topic.items()])
    bulk_insert(session, "evaluation", ["run_id", "qrels_set_id", "measure_id", "source",
                                        "n_topics", "computed_at"],
                [(run.id, qset.id, mids[m], "imported", len(v), now) for m, v in write.items()])
    return done


def _stored(session: Session, run_id: int, qrels_set_id: int, mids: list[int]
            ) -> dict[int, dict[int, float]]:
    """measure id → {topic id: value} already stored for the run and qrels set."""
    from tcdb.queries import evaluations, score_rows

    stored: dict[int, dict[int, float]] = {
        mid: {} for _, mid in evaluations(session, qrels_set_id, [run_id], mids)}
    for _, mid, topic_id, value in score_rows(session, qrels_set_id, [run_id], mids):
        stored.setdefault(mid, {})[topic_id] = value
    return stored
