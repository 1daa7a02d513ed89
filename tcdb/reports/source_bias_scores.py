"""The source-bias report's per-topic scores: each run against each source's qrels.

In memory (ir_measures on the derived per-source judgments, nothing stored) or, when the
per-source sets are saved, as stored scores (evaluated where missing, then read). Kept beside
`tcdb.reports.source_bias`, which turns them into the report's figures.
"""

from __future__ import annotations

from typing import Any

from tcdb.operations.database import Database

Scores = dict[tuple[int, str, str], dict[int, float]]  # (run, source, measure) → topic → value


def score_in_memory(conn: Any, snapshot_id: int, run_ids: list[int], names: list[str],
                     derived: dict[str, Any], topics: dict[int, str]) -> Scores:
    """Every run, read once, scored by ir_measures against each source's qrels."""
    import ir_measures

    from tcdb.judging.by_source import as_ir_measures
    from tcdb.queries import document_names, read_runs
    from tcdb.scoring.measures import ranking_depth

    docs = {int(d) for q in derived.values() for d in q.frame["doc"].tolist()}
    doc_names = document_names(conn, snapshot_id, docs)
    topic_of = {ext: t for t, ext in topics.items()}
    parsed = {name: ir_measures.parse_measure(name) for name in names}
    name_of = {measure: name for name, measure in parsed.items()}
    evaluators = {source: ir_measures.evaluator(list(parsed.values()),
                                                as_ir_measures(q, topics, doc_names))
                  for source, q in derived.items()}
    out: Scores = {}
    for run_id, run in read_runs(conn, snapshot_id, run_ids, ranking_depth(names)):
        run = {t: docs_ for t, docs_ in run.items() if t in topic_of}
        for source, evaluator in evaluators.items():
            for name in names:
                out[(run_id, source, name)] = {}
            for metric in evaluator.iter_calc(run):
                if metric.query_id in run:
                    out[(run_id, source, name_of[metric.measure])][
                        topic_of[metric.query_id]] = float(metric.value)
    return out


def score_stored(db: Database, collection: str, snapshot: str, run_list: list[Any],
                 names: list[str], stored_as: dict[str, str]) -> Scores:
    """Scores under the stored per-source sets: evaluated where missing, then read."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import measure_ids, stored_scores
    from tcdb.scoring.evaluate import evaluate

    tags = [r.tag for r in run_list]
    if tags:
        for name in stored_as.values():
            evaluate(db, collection, snapshot, name, names, tags)
    out: Scores = {}
    with db.session() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        mids = measure_ids(conn, names)
        run_ids = [r.pk for r in run_list]
        for source, name in stored_as.items():
            qset = get_qrels_set(session, snap, name)
            got = stored_scores(conn, qset.pk, run_ids, list(mids.values()))
            for run_id in run_ids:
                for measure in names:
                    out[(run_id, source, measure)] = got.get((run_id, mids.get(measure, -1)), {})
    return out
