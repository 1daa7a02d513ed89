"""Scores of a run's earlier version (`evaluate --version`): computed when asked, not stored.

The `score` table holds the scores of each run's current version, the one every report reads.
An earlier version (`tcdb.runs.versions`) is scored from its kept entries with the same
ir_measures evaluator (`tcdb.scoring.compute.score_rankings`), and its means come from the one
mean function (`tcdb.scoring.scores.scores_of`), so its figures are what the version scored
before it was replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlmodel import Session

from tcdb.queries import qrels_of, snapshot_topics
from tcdb.runs.versions import version_ranking
from tcdb.scoring.compute import score_rankings
from tcdb.scoring.measures import measure_id

if TYPE_CHECKING:
    from tcdb.schema import QrelsSet, RunVersion, Snapshot

# (run id, measure id) → {topic id: value}, as `scores_of` reads stored scores
TopicValues = dict[tuple[int, int], dict[int, float]]


def score_versions(session: Session, snapshot: Snapshot, qrels_set: QrelsSet,
                   measures: list[str], earlier: Mapping[int, RunVersion]) -> TopicValues:
    """Per-topic values of each run's earlier version (run id → the version), nothing stored
    but the measures' names (`measure`), which every score is keyed by."""
    if not earlier:
        return {}
    ids = {name: measure_id(session, name) for name in measures}
    topic_of = {ext: topic_id for topic_id, (ext, _) in
                snapshot_topics(session.connection(), snapshot.pk).items()}
    rankings = ((run_id, version_ranking(session, snapshot.pk, version.pk))
                for run_id, version in earlier.items())
    values: TopicValues = {}
    qrels = qrels_of(session.connection(), qrels_set.pk)
    for run_id, by_measure in score_rankings(rankings, measures, qrels):
        for name, by_topic in by_measure.items():
            values[(run_id, ids[name])] = {topic_of[ext]: value
                                           for ext, value in by_topic.items()}
    return values
