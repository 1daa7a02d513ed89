"""What several reports assemble the same way: per-topic score frames for `tcdb.analysis`
(`trec_eval -c`: every run × topic, 0 where nothing is stored), and a figure's bootstrap
interval. The topics they average over are `tcdb.queries.topic_selection`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tcdb.queries import ScoreMap

if TYPE_CHECKING:
    import pandas as pd



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


class Interval(BaseModel):
    """A figure's percentile bootstrap interval over topics (`tcdb.analysis.bootstrap`):
    `n_nan` resamples left the figure undefined and are left out."""

    estimate: float | None
    low: float | None
    high: float | None
    alpha: float
    n_samples: int
    n_nan: int
