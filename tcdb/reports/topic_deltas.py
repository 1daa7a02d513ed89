"""`tcdb report topic-deltas`: one system's per-topic change from snapshot A to snapshot B.

LongEval's per-topic Δ figure: for every core topic (judged in both snapshots, matched by the
collection's topic identity) the system's score in B minus its score in A, sorted, with the
pivot's own change beside it when a pivot is named — a system whose topics all drop as much as
the pivot's lost nothing of its own. `topics` (a topic set) keeps only the core topics in it.
Scores are the persistence report's (`load_persistence_scores`, `trec_eval -c`: a topic the
run did not answer counts 0).

The report is a dict::

    {collection, system, pivot, measure, snapshots: [a, b], qrels: {a, b}, runs: {a, b},
     topic_set, n_topics, mean_delta, pivot_mean_delta, improved, declined, unchanged,
     topics: [{topic: {a, b}, topic_key, score_a, score_b, delta,
               pivot_a, pivot_b, pivot_delta}…]}   # sorted by delta, largest gain first

`delta` is rounded to 12 decimals (`tcdb.analysis.means.DECIMALS`) so equal changes tie.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcdb.errors import ConflictError, NotFoundError
from tcdb.reports.persistence import SEVERAL_RUNS, QrelsChoice, load_persistence_scores
from tcdb.reports.ranking_agreement import two_snapshots
from tcdb.sorting import natural_key


def topic_deltas_report(collection: str, system: str, snapshots: Sequence[str],
                        measure: str = "nDCG@10", qrels: QrelsChoice = "original",
                        pivot: str | None = None, *, compute: bool = True,
                        topics: str | None = None) -> dict[str, Any]:
    """Per core topic (in the topic set `topics`, when given), the system's score in B minus A
    (and the pivot's), largest gain first."""
    from tcdb.analysis import json_float
    from tcdb.analysis.means import DECIMALS, exact_mean
    from tcdb.catalog.topic_sets import topic_set_members
    from tcdb.errors import OptionError

    a, b = two_snapshots(snapshots)
    members = topic_set_members(collection, topics) if topics is not None else None
    data = load_persistence_scores(collection, [a, b], [measure], qrels, "core",
                                   compute=compute, systems=[system], keep=pivot)
    name = next(iter(data.frames))
    followed = _resolve(data.runs[name], data.skipped[name], system, "system")
    pivot_label = _resolve(data.runs[name], data.skipped[name], pivot, "pivot") if pivot else None
    frame = data.frames[name]
    values = {(s, snap, t): v for s, snap, t, v in frame.itertuples(index=False)}
    rows: list[dict[str, Any]] = []
    kept = [t for t in data.topics[a] if members is None or t in members]
    if not kept:
        raise OptionError("--topics", f"topic set {topics!r} has none of the {len(data.topics[a])}"
                          f" core topics of {a} and {b}")
    for topic in kept:
        ext_a, key = data.topic_names[a][topic]
        ext_b = data.topic_names[b][topic][0]
        score_a, score_b = values[(followed, a, topic)], values[(followed, b, topic)]
        row: dict[str, Any] = {"topic": {a: ext_a, b: ext_b}, "topic_key": key,
                               "score_a": score_a, "score_b": score_b,
                               "delta": round(score_b - score_a, DECIMALS),
                               "pivot_a": None, "pivot_b": None, "pivot_delta": None}
        if pivot_label is not None:
            pa, pb = values[(pivot_label, a, topic)], values[(pivot_label, b, topic)]
            row.update(pivot_a=pa, pivot_b=pb, pivot_delta=round(pb - pa, DECIMALS))
        rows.append(row)
    rows.sort(key=lambda r: (-r["delta"], natural_key(r["topic"][b])))
    deltas = [r["delta"] for r in rows]
    pivot_deltas = [r["pivot_delta"] for r in rows if r["pivot_delta"] is not None]
    return {
        "collection": collection, "system": followed, "pivot": pivot_label, "measure": name,
        "snapshots": [a, b], "qrels": data.qrels, "runs": data.runs[name][followed],
        "topic_set": topics, "n_topics": len(rows),
        "mean_delta": json_float(round(exact_mean(deltas), DECIMALS)),
        "pivot_mean_delta": (json_float(round(exact_mean(pivot_deltas), DECIMALS))
                             if pivot_deltas else None),
        "improved": sum(1 for d in deltas if d > 0),
        "declined": sum(1 for d in deltas if d < 0),
        "unchanged": sum(1 for d in deltas if d == 0),
        "topics": rows,
        "warnings": data.warnings,
    }


def _resolve(runs: dict[str, dict[str, str]], skipped: list[dict[str, str]], wanted: str,
             what: str) -> str:
    """The followed system's label for a name the user gave; why not, when it was skipped."""
    matches = [s for s in runs if s == wanted or s.endswith(f"/{wanted}")]
    if len(matches) == 1:
        return matches[0]
    for entry in skipped:
        if entry["system"] == wanted or entry["system"].endswith(f"/{wanted}"):
            error = ConflictError if entry["kind"] == SEVERAL_RUNS else NotFoundError
            raise error(f"{what} {wanted!r}: {entry['reason']}")
    if len(matches) > 1:
        raise ConflictError(f"{what} {wanted!r} names several systems ({', '.join(matches)}): "
                            "give group/name")
    raise NotFoundError(f"{what} {wanted!r} has no run in both snapshots")
