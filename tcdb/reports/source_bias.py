"""Source bias per run (Cocktail): human-written against LLM-generated documents, Relative Δ.

Each run's ranking of the mixed corpus, unchanged, is scored with ir_measures three times: against
the judgments of the human-written documents only, of the LLM-generated ones only (each rewrite
carrying its original's judgment when it has none of its own), and of both (`mixed`: the run's
effectiveness) — `tcdb.judging.by_source`. Per run and measure: the two means over the same topics
(every topic the mixed set judges, unanswered ones 0 as `trec_eval -c`), Relative Δ with a
percentile bootstrap CI over topics, the per-topic Δ and paired tests (`tcdb.analysis.source_bias`).
Across runs: the averages, and Pearson's r between effectiveness and Relative Δ (Cocktail Fig. 1).
A run whose first-stage run is recorded (`run import --first-stage TAG`) is set beside it: the
bias the re-ranker carried or changed (Cocktail Table 4).

A report reads: the per-source qrels and scores live in memory. With `save` the three sets are
stored as `derived` qrels sets (`<save>-human`, `<save>-llm`, `<save>-mixed`) and the runs are
evaluated on them (stored scores, computed once), so a second report reads instead of scoring.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from tcdb.errors import OptionError
from tcdb.judging.by_source import HUMAN, LLM, MIXED
from tcdb.storage.db import session_scope

Scores = dict[tuple[int, str, str], dict[int, float]]  # (run, source, measure) → topic → value


def source_bias_report(
    collection: str,
    snapshot: str,
    measures: Sequence[str],
    runs: Sequence[str] | None = None,
    *,
    qrels: str | None = None,
    human: str = HUMAN,
    llm: str = LLM,
    copy_twins: bool = True,
    topics: str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    save: str | None = None,
) -> dict[str, Any]:
    """The source-bias report of a snapshot's runs; see the module docstring.

    Returns `{collection, snapshot, qrels, human, llm, copy_twins, topic_set, n_topics,
    bootstrap, saved, documents: {label: n}, sets: {source: {name, n_judgments, n_copied}},
    measures: {name: {runs: [{run, first_stage, effectiveness, human, llm, relative_delta,
    ci_low, ci_high, p_t, p_wilcoxon, per_topic: [{topic, human, llm, delta}]}],
    average: {n_runs, effectiveness, human, llm, relative_delta}, correlation: {r, p, n_runs},
    first_stage: [{run, first_stage, delta_first_stage, delta, change}]}}, seconds}`.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.by_source import derive_source_qrels, parent_name, store_source_qrels
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import documents_per_source
    from tcdb.reports.common import select_topics
    from tcdb.runs import get_runs
    from tcdb.scoring.measures import parse_measures

    started = time.perf_counter()
    if bootstrap < 0:
        raise OptionError("--bootstrap", f"a number of samples, not {bootstrap}")
    names = parse_measures(measures)
    sources = (human, llm)
    stored_as: dict[str, str] | None = None
    with session_scope() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        parent = get_qrels_set(session, snap, parent_name(snap, qrels))
        run_list = [r for r in get_runs(session, snap, runs) if r.n_entries + r.n_unresolved]
        derived = derive_source_qrels(conn, snap, parent, sources, copy_twins)
        judged = sorted(set(derived[MIXED].frame["topic"].tolist()))
        topic_names = select_topics(session, collection, snap.pk, judged, topics)
        documents = documents_per_source(conn, snap.pk)
        if save is None:
            scores = _score_in_memory(conn, snap.pk, [r.pk for r in run_list], names, derived,
                                      topic_names)
        else:
            stored_as = store_source_qrels(session, snap, parent, save, derived, copy_twins)
        parent_label = parent.name
    if stored_as is not None:
        scores = _score_stored(collection, snapshot, run_list, names, stored_as)
    tags = {r.pk: r.tag for r in run_list}
    first_stage = {r.tag: r.first_stage for r in run_list}
    result: dict[str, Any] = {
        "collection": collection, "snapshot": snapshot, "qrels": parent_label, "human": human,
        "llm": llm, "copy_twins": copy_twins, "topic_set": topics,
        "n_topics": len(topic_names), "bootstrap": bootstrap, "saved": save,
        "documents": documents,
        "sets": {s: {"name": stored_as[s] if stored_as else None,
                     "n_judgments": q.n_judgments, "n_copied": q.n_copied}
                 for s, q in derived.items()},
        "measures": {name: _measure_figures(name, scores, tags, first_stage, topic_names,
                                            sources, bootstrap, seed) for name in names},
    }
    result["seconds"] = time.perf_counter() - started
    return result


def _score_in_memory(conn: Any, snapshot_id: int, run_ids: list[int], names: list[str],
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


def _score_stored(collection: str, snapshot: str, run_list: list[Any], names: list[str],
                  stored_as: dict[str, str]) -> Scores:
    """Scores under the stored per-source sets: evaluated where missing, then read."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import measure_ids, stored_scores
    from tcdb.scoring.evaluate import evaluate

    tags = [r.tag for r in run_list]
    if tags:
        for name in stored_as.values():
            evaluate(collection, snapshot, name, names, tags)
    out: Scores = {}
    with session_scope() as session:
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


def _measure_figures(name: str, scores: Scores, tags: dict[int, str],
                     first_stage: dict[str, str | None], topics: dict[int, str],
                     sources: tuple[str, str], bootstrap: int, seed: int) -> dict[str, Any]:
    """One measure: every run's bias, the averages, the correlation, first stage → re-ranker."""
    from tcdb.analysis import json_float
    from tcdb.analysis.means import trec_eval_mean
    from tcdb.analysis.source_bias import bias_correlation, run_bias

    human, llm = sources
    topic_ids = list(topics)

    def vector(run_id: int, source: str) -> np.ndarray:
        got = scores.get((run_id, source, name), {})
        return np.array([got.get(t, 0.0) for t in topic_ids], dtype=float)

    rows = []
    for run_id, tag in sorted(tags.items(), key=lambda item: item[1]):
        h, m = vector(run_id, human), vector(run_id, llm)
        bias = run_bias(h, m, n_samples=bootstrap, seed=seed)
        per_topic = [{"topic": topics[t], "human": float(a), "llm": float(b), "delta": d}
                     for t, a, b, d in zip(topic_ids, h.tolist(), m.tolist(),
                                           bias.pop("per_topic_delta"), strict=True)]
        mixed = vector(run_id, MIXED)
        rows.append({"run": tag, "first_stage": first_stage.get(tag),
                     "effectiveness": trec_eval_mean(mixed.tolist(), len(mixed)), **bias,
                     "per_topic": per_topic})
    deltas = [r["relative_delta"] for r in rows]
    finite = [d for d in deltas if d is not None]
    average = {
        "n_runs": len(rows),
        "effectiveness": json_float(trec_eval_mean([r["effectiveness"] for r in rows])),
        "human": json_float(trec_eval_mean([r["human"] for r in rows])),
        "llm": json_float(trec_eval_mean([r["llm"] for r in rows])),
        "relative_delta": json_float(trec_eval_mean(finite)),
    }
    by_tag = {r["run"]: r for r in rows}
    carried = [{"run": r["run"], "first_stage": r["first_stage"],
                "delta_first_stage": by_tag[r["first_stage"]]["relative_delta"],
                "delta": r["relative_delta"],
                "change": json_float(r["relative_delta"]
                                     - by_tag[r["first_stage"]]["relative_delta"])
                if r["relative_delta"] is not None
                and by_tag[r["first_stage"]]["relative_delta"] is not None else None}
               for r in rows if r["first_stage"] in by_tag]
    return {"runs": rows, "average": average,
            "correlation": bias_correlation([r["effectiveness"] for r in rows], deltas),
            "first_stage": carried}


FRAME_COLUMNS = ["collection", "snapshot", "measure", "run", "first_stage", "effectiveness",
                 "human", "llm", "relative_delta", "ci_low", "ci_high", "p_t", "p_wilcoxon"]


def source_bias_frame(report: dict[str, Any]) -> Any:
    """A report's runs as one DataFrame row per measure and run (`FRAME_COLUMNS`)."""
    import pandas as pd

    rows = [{"collection": report["collection"], "snapshot": report["snapshot"],
             "measure": measure, **{k: run[k] for k in FRAME_COLUMNS[3:]}}
            for measure, result in report["measures"].items() for run in result["runs"]]
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def across_collections(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Several collections' reports side by side, as Cocktail's Table 3 averages per dataset
    group: per measure, each collection's average over its runs, the mean of those averages,
    and per run tag (the same system on several collections) its mean Relative Δ across them.
    """
    from tcdb.analysis import json_float
    from tcdb.analysis.means import trec_eval_mean

    measures = list(dict.fromkeys(m for r in reports for m in r["measures"]))
    out: dict[str, Any] = {}
    for measure in measures:
        present = [r for r in reports if measure in r["measures"]]
        per_collection = [{"collection": r["collection"], "snapshot": r["snapshot"],
                           **r["measures"][measure]["average"]} for r in present]
        by_run: dict[str, list[float]] = {}
        for r in present:
            for run in r["measures"][measure]["runs"]:
                if run["relative_delta"] is not None:
                    by_run.setdefault(run["run"], []).append(run["relative_delta"])
        deltas = [c["relative_delta"] for c in per_collection if c["relative_delta"] is not None]
        out[measure] = {
            "collections": per_collection,
            "relative_delta": json_float(trec_eval_mean(deltas)),
            "runs": [{"run": tag, "n_collections": len(values),
                      "relative_delta": json_float(trec_eval_mean(values))}
                     for tag, values in sorted(by_run.items())],
        }
    return out


def documents_by_source(collection: str) -> Any:
    """Documents per source label per complete snapshot: `[snapshot, source, documents]`."""
    import pandas as pd
    from sqlmodel import select

    from tcdb.catalog.collections import get_collection
    from tcdb.queries import documents_per_source
    from tcdb.schema import Snapshot, SnapshotStatus

    rows = []
    with session_scope() as session:
        coll = get_collection(session, collection)
        snaps = session.exec(
            select(Snapshot).where(
                Snapshot.collection_id == coll.pk,
                Snapshot.status == SnapshotStatus.complete)).all()
        for snap in sorted(snaps, key=lambda s: s.ordinal):
            for label, n in documents_per_source(session.connection(), snap.pk).items():
                rows.append({"snapshot": snap.label, "source": label, "documents": n})
    return pd.DataFrame(rows, columns=["snapshot", "source", "documents"])
