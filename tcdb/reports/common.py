"""What several reports assemble the same way: the topics they average over, and per-topic
score frames for `tcdb.analysis` (`trec_eval -c`: every run × topic, 0 where nothing is stored).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import Session

from tcdb.errors import OptionError
from tcdb.queries import ScoreMap, snapshot_topics, topic_set_topic_ids
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


def select_topics(session: Session, collection: str, snapshot_id: int, judged: Sequence[int],
                  topic_set: str | None) -> dict[int, str]:
    """topic id → external id of the topics a report averages over: `judged`, ∩ the topic set."""
    names = snapshot_topics(session.connection(), snapshot_id)
    wanted = set(judged)
    if topic_set is not None:
        wanted &= topic_set_topic_ids(session, collection, topic_set)
    if not wanted:
        where = f" in topic set {topic_set!r}" if topic_set else ""
        raise OptionError("--topics" if topic_set else "--qrels",
                          f"no judged topics{where} to report on")
    return {t: names[t][0] for t in sorted(wanted, key=lambda t: natural_key(names[t][0]))}


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
