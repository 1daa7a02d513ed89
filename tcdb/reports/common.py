"""What several reports assemble the same way: the topics they average over, and per-topic
score frames for `tcdb.analysis` (`trec_eval -c`: every run × topic, 0 where nothing is stored).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import Session

from tcdb.queries import ScoreMap, snapshot_topics
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.schema import Snapshot


def select_topics(session: Session, collection: str, snapshot: Snapshot,
                  judged: Sequence[int], selection: str = "all") -> dict[int, str]:
    """topic id → external id of the topics a report on one snapshot averages over: the
    `judged` ones under the selection (all / core / a topic set name).

    Why persistence's resolution: one meaning of `topics` across reports. On one snapshot
    `core` (topics every compared snapshot has, judged in each) is the judged topics.
    """
    from tcdb.reports.persistence_scores import _topic_lists

    names = snapshot_topics(session.connection(), snapshot.pk)
    chosen = _topic_lists(session, collection, {snapshot.label: dict.fromkeys(judged, "")},
                          selection)[snapshot.label]
    return {t: names[t][0] for t in sorted(chosen, key=lambda t: natural_key(names[t][0]))}


def per_topic_frame(
    stored: ScoreMap, run_ids: Sequence[int], tags: dict[int, str],
    measure_id: int, topics: dict[int, str],
) -> pd.DataFrame:
    """Long `[run, topic, value]` over every run × topic, 0 where nothing is stored (trec_eval -c).

    Why the full grid: the analysis averages over the columns it sees; a run that answered no
    topic must still appear, with zeros.
    """
    import pandas as pd

    rows = []
    for run_id in run_ids:
        got = stored.get((run_id, measure_id), {})
        tag = tags[run_id]
        for topic_id, name in topics.items():
            rows.append((tag, name, got.get(topic_id, 0.0)))
    return pd.DataFrame(rows, columns=["run", "topic", "value"])
