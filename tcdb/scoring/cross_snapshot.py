"""An old run on a newer snapshot's qrels: "would last year's system still score this today?"

`evaluate_from` scores runs submitted for snapshot A against a qrels set of snapshot B without
re-running them. Each ranking is carried over by identity:

* topics by the collection's topic identity (`topic.id`): a topic of A that B lacks cannot be
  scored and is reported as gone; a judged topic of B that A lacks was never asked of A's runs
  and is left out of the means (listed as new);
* documents by the collection's document identity (`document_id`, kept by id or URL): each is
  named as B's qrels name it (B's external id, or its key when B no longer holds it, since
  B's qrels may still judge it). Documents B lacks stay in place and are counted as gone;
  entries A itself could not resolve stay in place under their own id, unjudged.

The ranking is the one evaluated in A — trec_eval's order, the stored `eval_rank` — handed to
ir_measures with scores that keep it exactly (renaming must not re-break ties). Scores are
stored under (run of A, qrels set of B, measure, topic): a key of their own, since the run's
own scores are under A's qrels sets, and they are computed once like every score; their
evaluation rows say `MAPPED_SCORES_SOURCE`, so `tcdb db check` tells them from misplaced ones.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence

from pydantic import BaseModel, Field
from sqlalchemy import Connection, text

from tcdb.errors import FieldError
from tcdb.operations.database import Database
from tcdb.scoring.evaluate import EVALUATION_COLUMNS, SCORE_COLUMNS, EvaluationReport
from tcdb.scoring.measures import check_providers, parse_measures, provider_failed
from tcdb.sorting import natural_key
from tcdb.storage.bulk import bulk_insert
from tcdb.vocabulary import MAPPED_SCORES_SOURCE

UNRESOLVED = "unresolved:"  # names A's unresolved entries: they match no document of B


class UnmappedRun(BaseModel):
    """What of a run of A snapshot B no longer has."""

    topics_gone: list[str]  # A's ids of the topics B lacks
    n_entries: int
    entries_gone: int  # entries of documents B lacks (kept in place, unjudged)
    entries_unresolved: int  # entries A itself could not resolve
    n_topics_scored: int
    # B's judged topics that A lacks (B's ids): never asked of A's runs, left out of the means
    topics_new: list[str] = Field(default_factory=list)


class CrossMean(BaseModel):
    """A run's mean on B's judged topics that A has too (trec_eval -c over those)."""

    run: str
    measure: str
    mean: float
    n_topics: int  # averaged over: B's judged topics that A has (mapped)
    n_judged: int  # B's judged topics


class CrossSnapshotReport(EvaluationReport):
    """An evaluation's report (`snapshot`: B, whose qrels) with the runs' snapshot A, what
    could not be mapped, and the means on B's qrels topics."""

    run_from: str  # A: whose runs
    unmapped: dict[str, UnmappedRun] = Field(default_factory=dict)  # by run tag
    means: list[CrossMean] = Field(default_factory=list)


def evaluate_from(db: Database, collection: str, snapshot: str, qrels: str, measures: Sequence[str],
                  run_from: str, runs: Sequence[str] | None = None) -> CrossSnapshotReport:
    """Score runs of snapshot `run_from` (A) on qrels set `qrels` of `snapshot` (B); store the
    missing scores under their own key and return the means over B's judged topics that A has
    (a topic A lacks was never asked of its runs: as a 0 it would be a drop no run caused)."""
    from tcdb.analysis.means import aggregate
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations, qrels_of, qrels_topics, stored_scores
    from tcdb.runs import get_runs
    from tcdb.scoring.measures import measure_id
    from tcdb.scoring.scores import unanswered_values

    started = time.perf_counter()
    if run_from == snapshot:
        raise FieldError("run_from", f"the runs are already of snapshot {snapshot!r}: "
                         "evaluate them without run_from")
    names = parse_measures(measures)
    with db.write_session(f"runs\x00{collection}", immediate=False,
                       waiting=f"waiting for another process writing runs or scores of "
                       f"{collection!r} to finish …") as session:
        snap_b = get_snapshot(session, collection, snapshot)
        snap_a = get_snapshot(session, collection, run_from)
        qset = get_qrels_set(session, snap_b, qrels)
        run_list = get_runs(session, snap_a, runs)
        report = CrossSnapshotReport(collection=collection, snapshot=snapshot,
                                     run_from=run_from, qrels=qrels, measures=names,
                                     runs=[r.tag for r in run_list])
        ids = {name: measure_id(session, name) for name in names}
        conn = session.connection()
        done = evaluations(conn, qset.pk, [r.pk for r in run_list], list(ids.values()))
        topics_b = _topic_names(conn, snap_b.pk)
        topics_a = _topic_names(conn, snap_a.pk)
        qrels_by_name = qrels_of(conn, qset.pk)
        check_providers(names, lambda: (list(topics_b.values()), max(
            (g for judged in qrels_by_name.values() for g in judged.values()), default=None)))
        now = dt.datetime.now(dt.UTC)
        for run in run_list:
            ranking, unmapped = mapped_run(conn, run.pk, snap_b.pk, topics_a, topics_b)
            report.unmapped[run.tag] = unmapped
            missing = [n for n in names if (run.pk, ids[n]) not in done]
            report.n_cached += len(names) - len(missing)
            if not missing:
                continue
            values = _score(ranking, missing, qrels_by_name)
            topic_id = {ext: t for t, ext in topics_b.items()}
            scores = [(run.pk, qset.pk, 0, ids[n], topic_id[t], v)
                      for n in missing for t, v in values[n].items()]
            marks = [(run.pk, qset.pk, 0, ids[n], MAPPED_SCORES_SOURCE, len(values[n]), now)
                     for n in missing]
            report.n_scores += bulk_insert(conn, "score", SCORE_COLUMNS, scores)
            report.n_computed += bulk_insert(conn, "evaluation", EVALUATION_COLUMNS, marks)
        _mark_mapped(conn, qset.pk, [r.pk for r in run_list])
        judged = qrels_topics(conn, qset.pk, snap_b.pk)
        stored = stored_scores(conn, qset.pk, [r.pk for r in run_list], list(ids.values()))
        fills = {n: unanswered_values(conn, qset.pk, n, judged) for n in names}  # NumRel…
    mapped = [t for t in judged if t in topics_a]
    new = sorted((judged[t] for t in judged if t not in topics_a), key=natural_key)
    for run in run_list:
        report.unmapped[run.tag].topics_new = new
        for name in names:
            by_topic = stored.get((run.pk, ids[name]), {})
            report.means.append(CrossMean(
                run=run.tag, measure=name, n_topics=len(mapped), n_judged=len(judged),
                mean=aggregate(name, [by_topic.get(t, fills[name].get(t, 0.0))
                                      for t in mapped], len(mapped))))
    report.seconds = time.perf_counter() - started
    return report


def _mark_mapped(conn: Connection, qrels_set_id: int, run_ids: list[int]) -> None:
    """Scores stored before tcdb marked them (source `ir_measures`) get the mark now, so
    `tcdb db check` knows them: runs of A on B's qrels are mapped scores by construction."""
    if run_ids:
        conn.execute(text(
            "UPDATE evaluation SET source = :mapped WHERE qrels_set_id = :q AND residual_of_id "
            f"= 0 AND source = 'ir_measures' AND run_id IN ({', '.join(map(str, run_ids))})"),
            {"mapped": MAPPED_SCORES_SOURCE, "q": qrels_set_id})


def _topic_names(conn: Connection, snapshot_id: int) -> dict[int, str]:
    rows = conn.execute(text("SELECT topic_id, external_id FROM snapshot_topic "
                             "WHERE snapshot_id = :s"), {"s": snapshot_id})
    return {int(t): str(ext) for t, ext in rows}


def mapped_run(conn: Connection, run_id: int, snapshot_b: int, topics_a: dict[int, str],
               topics_b: dict[int, str]) -> tuple[dict[str, dict[str, float]], UnmappedRun]:
    """A run as ir_measures reads it, in snapshot B's names (see the module docstring), and
    what could not be mapped. Scores are −eval_rank, so the evaluated order is kept exactly."""
    rows = conn.execute(text(
        "SELECT e.topic_id, e.eval_rank, COALESCE(sd.external_id, d.key), "
        "CASE WHEN sd.document_id IS NULL THEN 1 ELSE 0 END FROM run_entry e "
        "JOIN document d ON d.id = e.document_id "
        "LEFT JOIN snapshot_document sd ON sd.snapshot_id = :b AND sd.document_id = e.document_id "
        "WHERE e.run_id = :r UNION ALL "
        "SELECT topic_id, eval_rank, :prefix || external_doc_id, 2 FROM run_entry_unresolved "
        "WHERE run_id = :r"), {"b": snapshot_b, "r": run_id, "prefix": UNRESOLVED})
    ranking: dict[str, dict[str, float]] = {}
    gone_topics: set[int] = set()
    n_entries = gone = unresolved = 0
    for topic_id, eval_rank, name, kind in rows:
        n_entries += 1
        gone += kind == 1
        unresolved += kind == 2
        if topic_id not in topics_b:
            gone_topics.add(int(topic_id))
            continue
        ranking.setdefault(topics_b[topic_id], {})[str(name)] = -float(eval_rank)
    return ranking, UnmappedRun(
        topics_gone=sorted((topics_a.get(t, str(t)) for t in gone_topics), key=natural_key),
        n_entries=n_entries, entries_gone=gone, entries_unresolved=unresolved,
        n_topics_scored=len(ranking))


def _score(ranking: dict[str, dict[str, float]], measures: Sequence[str],
           qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """measure → {B's topic id: value} with ir_measures, for the topics the ranking answers."""
    import ir_measures

    parsed = {name: ir_measures.parse_measure(name) for name in measures}
    name_of = {measure: name for name, measure in parsed.items()}
    values: dict[str, dict[str, float]] = {name: {} for name in measures}
    try:
        for metric in ir_measures.evaluator(list(parsed.values()), qrels).iter_calc(ranking):
            if metric.query_id in ranking:
                values[name_of[metric.measure]][metric.query_id] = float(metric.value)
    except Exception as error:  # noqa: BLE001 - a provider's failure is one line, never a trace
        raise provider_failed(measures, error) from None
    return values
