"""Are these runs' differences on one snapshot significant? Pairwise tests and outcome breakdown.

The per-topic scores of the chosen runs (one measure, one qrels set; every topic the qrels set
judges, unanswered ones 0 as `trec_eval -c`) go to `tcdb.analysis.significance.compare_runs`:
paired t-test, Wilcoxon signed-rank, Wilcoxon rank-sum and sign test per pair, corrected across
the pairs. When the qrels set has exactly one relevant document (grade > 0) per topic — MS MARCO
style — the rank of that document in each run, in trec_eval's order (score descending, then
document id descending, unresolved entries included), feeds
`tcdb.analysis.outcomes.outcome_breakdown` for every pair, cut at the top k.

The report (`compare_report`) is a dict::

    {collection, snapshot, qrels, measure, correction, n_topics,
     runs: [{run, system, mean}],
     pairs: [compare_runs row…],
     outcomes: {applicable, reason, k, pairs: [{run_a, run_b, **outcome_breakdown}]}}
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from sqlalchemy import Connection, and_, func, select

from tcdb.db import session_scope
from tcdb.errors import InputError, NotFoundError

CORRECTIONS = ("bonferroni", "holm", "none")


def relevant_documents(conn: Connection, qrels_set_id: int, snapshot_id: int
                       ) -> dict[int, list[tuple[int, str]]]:
    """topic.id → [(document.id, external doc id)] of the relevant (grade > 0) judgments."""
    from tcdb.schema import Judgment, SnapshotDocument

    query = (
        select(Judgment.topic_id, Judgment.document_id, SnapshotDocument.external_id)
        .join(SnapshotDocument, (SnapshotDocument.document_id == Judgment.document_id)
              & (SnapshotDocument.snapshot_id == snapshot_id))
        .where(Judgment.qrels_set_id == qrels_set_id, Judgment.grade > 0)
    )
    found: dict[int, list[tuple[int, str]]] = {}
    for topic_id, doc_id, external in conn.execute(query):
        found.setdefault(topic_id, []).append((doc_id, external))
    return found


def relevant_ranks(conn: Connection, run_id: int, qrels_set_id: int) -> dict[int, int]:
    """topic.id → 1-based rank of the run's relevant document, for topics where it retrieved one.

    The rank is trec_eval's, not the file's rank column: the stored `eval_rank` (score
    descending, ties broken by document id descending, the entries of documents the snapshot
    lacks counted too). With several relevant documents for a topic, the best-placed one counts.
    """
    from tcdb.schema import Judgment, RunEntry

    query = (
        select(RunEntry.topic_id, func.min(RunEntry.eval_rank))
        .join(Judgment, and_(Judgment.qrels_set_id == qrels_set_id,
                             Judgment.topic_id == RunEntry.topic_id,
                             Judgment.document_id == RunEntry.document_id, Judgment.grade > 0))
        .where(RunEntry.run_id == run_id)
        .group_by(RunEntry.topic_id)
    )
    return {int(topic_id): int(rank) for topic_id, rank in conn.execute(query)}


def compare_report(
    collection: str,
    snapshot: str,
    qrels: str,
    runs: Sequence[str],
    measure: str,
    correction: str = "holm",
    k: int = 10,
    *,
    compute: bool = True,
) -> dict[str, Any]:
    """Pairwise significance tests between runs on one snapshot, and the outcome breakdown.

    Why: a difference in means is only worth reporting with its p-values, corrected for the
    number of pairs; with one relevant document per topic, where each run finds it says more.
    """
    import pandas as pd

    from tcdb.analysis.outcomes import outcome_breakdown
    from tcdb.analysis.significance import compare_runs
    from tcdb.catalog import get_snapshot
    from tcdb.evaluation import evaluate, parse_measures
    from tcdb.qrels import get_qrels_set
    from tcdb.queries import evaluations, measure_ids, qrels_topics, score_rows
    from tcdb.runs import get_runs
    from tcdb.schema import System

    tags = list(dict.fromkeys(runs))
    if len(tags) < 2:
        raise InputError("--run", None, "compare needs at least two different runs")
    if correction not in CORRECTIONS:
        raise InputError("--correction", None, f"unknown correction {correction!r}; use "
                         f"{', '.join(CORRECTIONS)}")
    if k < 1:
        raise InputError("--k", None, "k must be at least 1")
    name = parse_measures([measure])[0]
    if compute:
        evaluate(collection, snapshot, qrels, [name], tags)
    with session_scope() as session:
        snap = get_snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        run_list = get_runs(session, snap, tags)
        conn = session.connection()
        snap_id, qset_id = snap.id or 0, qset.id or 0
        mid = measure_ids(conn, [name]).get(name, -1)
        run_ids = [r.id or 0 for r in run_list]
        done = evaluations(conn, qset_id, run_ids, [mid])
        for run in run_list:
            if (run.id, mid) not in done:
                raise NotFoundError(f"run {run.tag!r} of {snapshot!r} has no {name} scores on "
                                    f"qrels {qrels!r} (no stored entries to compute them from; "
                                    "import them with `tcdb scores import`)")
        systems = dict(conn.execute(select(System.id, System.name).where(
            System.id.in_([r.system_id for r in run_list]))).tuples().all())
        judged = qrels_topics(conn, qset_id, snap_id)
        if not judged:
            raise InputError(qrels, None, f"qrels set {qrels!r} judges no topics")
        got: dict[int, dict[int, float]] = {}
        for run_id, _, topic_id, value in score_rows(conn, qset_id, run_ids, [mid]):
            got.setdefault(run_id, {})[topic_id] = value
        topic_order = sorted(judged, key=lambda t: judged[t])
        wide = pd.DataFrame(
            {run.tag: [got.get(run.id or 0, {}).get(t, 0.0) for t in topic_order]
             for run in run_list},
            index=pd.Index([judged[t] for t in topic_order], name="topic"))
        relevant = relevant_documents(conn, qset_id, snap_id)
        reason = _outcome_reason(judged, relevant, run_list)
        ranks: dict[str, dict[str, int | None]] = {}
        if reason is None:
            for run in run_list:
                found = relevant_ranks(conn, run.id or 0, qset_id)
                ranks[run.tag] = {judged[t]: found.get(t) for t in topic_order}
    table = compare_runs(wide, list(combinations(tags, 2)), correction=correction)  # type: ignore[arg-type]
    pairs = table.astype(object).where(table.notna(), None).to_dict(orient="records")
    outcomes: dict[str, Any] = {"applicable": reason is None, "reason": reason, "k": k,
                                "pairs": []}
    if reason is None:
        for a, b in combinations(tags, 2):
            outcomes["pairs"].append({"run_a": a, "run_b": b,
                                      **outcome_breakdown(ranks[a], ranks[b], k)})
    return {
        "collection": collection,
        "snapshot": snapshot,
        "qrels": qrels,
        "measure": name,
        "correction": correction,
        "n_topics": len(topic_order),
        "runs": [{"run": run.tag, "system": systems.get(run.system_id),
                  "mean": float(wide[run.tag].mean())} for run in run_list],
        "pairs": pairs,
        "outcomes": outcomes,
    }


def _outcome_reason(judged: dict[int, str], relevant: dict[int, list[tuple[int, str]]],
                    run_list: Sequence[Any]) -> str | None:
    """Why the outcome breakdown does not apply (None when it does)."""
    several = sum(1 for t in judged if len(relevant.get(t, [])) > 1)
    none = sum(1 for t in judged if not relevant.get(t))
    if several or none:
        parts = []
        if several:
            parts.append(f"{several} topic(s) have more than one relevant document")
        if none:
            parts.append(f"{none} topic(s) have none")
        return "the qrels set is not one-relevant-per-topic: " + ", ".join(parts)
    without = [r.tag for r in run_list if r.n_entries + r.n_unresolved == 0]
    if without:
        return f"run(s) {', '.join(without)} have no stored entries to rank the relevant document"
    return None
