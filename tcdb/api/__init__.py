"""The Python API: pandas DataFrames for notebooks, no SQL needed.

    import tcdb
    tcdb.api.scores("longeval-web", "2023-01", measures=["nDCG@10", "AP"])

Every function opens its own read transaction on the default database (`TCDB_DATABASE_URL`)
and returns readable columns: collection, snapshot, run, system, topic (external id), measure,
value. Scores that are missing are computed and stored first (pass `compute=False` to only read).

A parameter that takes several snapshots, measures, runs or systems takes one label as a string
(`"2022-06"` is one snapshot, never its characters) or any iterable of labels. Errors name the
parameters of these functions (`snapshots: …`), not the CLI's options (`--snapshots: …`).

The functions live by concern in this package's private modules (`_tables`, `_over_time`,
`_judging`, `_source_bias`, `_literature`, `_subsets`, `_significance`) and are all exported
here.
"""

from __future__ import annotations

from tcdb.api._judging import assessor_agreement, pool_simulation, reusability
from tcdb.api._literature import literature, literature_report
from tcdb.api._over_time import per_topic_deltas, persistence, ranking_agreement, topic_deltas
from tcdb.api._significance import compare, leaderboard
from tcdb.api._source_bias import documents_by_source, source_bias
from tcdb.api._subsets import subset_ci
from tcdb.api._tables import evaluate, per_topic_scores, qrels, qrels_sets, runs, scores

__all__ = [
    "assessor_agreement", "compare", "documents_by_source", "evaluate", "leaderboard",
    "literature", "literature_report", "per_topic_deltas",
    "per_topic_scores", "persistence", "pool_simulation", "qrels", "qrels_sets",
    "ranking_agreement", "reusability", "runs", "scores", "source_bias", "subset_ci",
    "topic_deltas",
]
