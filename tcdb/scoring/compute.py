"""Per-topic values of runs with ir_measures (pytrec_eval backend), nothing stored: the work an
evaluation does in this process or in its workers (`tcdb.scoring.parallel`), and leave-out's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from sqlalchemy import Connection

from tcdb.queries import RunDict, qrels_records, read_runs
from tcdb.scoring.measures import provider_failed, ranking_depth

# A run's per-topic values: measure → {external topic id: value}
RunValues = dict[str, dict[str, float]]


def removed_by(conn: Connection, residual_of_id: int, snapshot_id: int
               ) -> dict[str, set[str]] | None:
    """Topic → the documents a residual evaluation removes (those `residual_of_id` judged),
    or None when the evaluation is not residual (0)."""
    if not residual_of_id:
        return None
    removed: dict[str, set[str]] = {}
    for record in qrels_records(conn, residual_of_id, snapshot_id):
        removed.setdefault(record.topic_id, set()).add(record.doc_id)
    return removed


def score_runs(conn: Connection, snapshot_id: int, run_ids: Sequence[int],
               measures: Sequence[str], qrels: dict[str, dict[str, int]], *,
               removed: dict[str, set[str]] | None = None,
               ) -> Iterator[tuple[int, RunValues]]:
    """Per run: measure → {external topic id: value} with ir_measures, nothing stored.

    Only the topics the run answered get a value; a qrels topic it did not answer counts 0 in
    `trec_eval -c` means, which the readers of scores apply. `removed` (topic → documents)
    are taken out of every ranking first: what is left keeps its order, since ir_measures
    ranks by score. Measures that all stop at a cutoff read only that deep into each ranking
    (`tcdb.scoring.measures.ranking_depth`).
    """
    depth = None if removed else ranking_depth(measures)  # removing documents moves ranks up
    yield from score_rankings(read_runs(conn, snapshot_id, run_ids, depth), measures, qrels,
                              removed=removed)


def score_rankings(rankings: Iterable[tuple[int, RunDict]],
                   measures: Sequence[str], qrels: dict[str, dict[str, int]], *,
                   removed: dict[str, set[str]] | None = None,
                   ) -> Iterator[tuple[int, RunValues]]:
    """`score_runs` on rankings already read (a run's earlier version: `tcdb.runs.versions`)."""
    import ir_measures  # here, not at the top: `tcdb evaluate --help` needs none of it

    parsed = {name: ir_measures.parse_measure(name) for name in measures}
    name_of = {measure: name for name, measure in parsed.items()}
    try:
        evaluator = ir_measures.evaluator(list(parsed.values()), qrels)
    except Exception as error:  # noqa: BLE001 - a provider's failure is one line, never a trace
        raise provider_failed(measures, error) from None
    for run_id, run in rankings:
        if removed:
            run = {topic: {doc: score for doc, score in docs.items()
                           if doc not in removed.get(topic, ())}
                   for topic, docs in run.items()}
            run = {topic: docs for topic, docs in run.items() if docs}
        values: dict[str, dict[str, float]] = {name: {} for name in measures}
        try:
            for metric in evaluator.iter_calc(run):
                if metric.query_id in run:
                    values[name_of[metric.measure]][metric.query_id] = float(metric.value)
        except Exception as error:  # noqa: BLE001 - as above: name the measure and provider
            raise provider_failed(measures, error) from None
        yield run_id, values
