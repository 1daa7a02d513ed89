"""`tcdb report ranking-agreement`: does a system rank a topic alike in two snapshots?

For a system with one run in each of two snapshots, its rankings of every core topic (present
in both snapshots, matched by the collection's topic identity) are read by document identity
(`tcdb.queries.rankings.ranking_keys`: a document renamed between snapshots but kept by URL is
the same document) and compared with KTU and RBO (`tcdb.analysis.ranking_agreement`, equal to
repro_eval's). No other tool can do this across snapshots: none knows which documents are the
same. `topics` (a topic set) keeps only the core topics in it.

The report is a dict::

    {collection, system, snapshots: [a, b], runs: {a: tag, b: tag}, depth, rbo_p,
     topic_set, n_topics, mean_ktu, mean_rbo, n_ktu, n_rbo,
     topics: [{topic: {a: external id, b: external id}, topic_key, n_first, n_later,
               n_compared, common, ktu, rbo, reason}…]}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcdb.errors import OptionError
from tcdb.sorting import natural_key
from tcdb.storage.db import session_scope


def two_snapshots(snapshots: Sequence[str]) -> tuple[str, str]:
    """Exactly two distinct snapshot labels, first the earlier one as the user gave them."""
    labels = list(snapshots)
    if len(labels) != 2:
        raise OptionError("--snapshots", f"name exactly two snapshots, A then B "
                          f"({len(labels)} given)")
    if labels[0] == labels[1]:
        raise OptionError("--snapshots", f"snapshot {labels[0]!r} named twice")
    return labels[0], labels[1]


def ranking_agreement_report(collection: str, system: str, snapshots: Sequence[str],
                             depth: int = 1000, rbo_p: float = 0.8,
                             topics: str | None = None) -> dict[str, Any]:
    """KTU and RBO per core topic (in the topic set `topics`, when given) between the system's
    runs in snapshots A and B, and means."""
    from tcdb.analysis.ranking_agreement import ranking_agreement
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import core_topic_ids, snapshot_topics, topic_set_topic_ids
    from tcdb.queries.rankings import ranking_keys, system_runs

    a, b = two_snapshots(snapshots)
    if depth < 1:
        raise OptionError("--depth", f"depth must be at least 1, not {depth}")
    if not 0 < rbo_p < 1:
        raise OptionError("--rbo-p", f"p must lie strictly between 0 and 1, not {rbo_p}")
    with session_scope() as session:
        runs = system_runs(session, collection, [a, b], system)
        conn = session.connection()
        names = {label: snapshot_topics(conn, get_snapshot(session, collection, label).pk)
                 for label in (a, b)}
        common = core_topic_ids(session, collection, [a, b])
        if topics is not None:
            common &= topic_set_topic_ids(session, collection, topics)
            if not common:
                raise OptionError("--topics", f"topic set {topics!r} has no topic both "
                                  f"{a} and {b} have")
        core = sorted(common, key=lambda t: natural_key(names[b][t][0]))
        first = ranking_keys(conn, runs[a][0], depth)
        later = ranking_keys(conn, runs[b][0], depth)
    result = ranking_agreement(first, later, core, depth=depth, p=rbo_p)
    for row in result["topics"]:
        topic = row["topic"]
        row["topic"] = {a: names[a][topic][0], b: names[b][topic][0]}
        row["topic_key"] = names[b][topic][1]
    return {"collection": collection, "system": system, "snapshots": [a, b],
            "runs": {label: tag for label, (_, tag) in runs.items()},
            "depth": depth, "rbo_p": rbo_p, "topic_set": topics, "n_topics": len(core),
            "mean_ktu": result["mean_ktu"], "mean_rbo": result["mean_rbo"],
            "n_ktu": result["n_ktu"], "n_rbo": result["n_rbo"], "topics": result["topics"]}
