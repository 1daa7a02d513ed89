"""Source bias (Cocktail): human-written vs LLM-generated documents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tcdb.api._labels import _as_labels, _labels_or_none, _speaks_python

if TYPE_CHECKING:
    import pandas as pd


@_speaks_python()
def source_bias(
    collection: str,
    snapshot: str,
    measures: str | Sequence[str] = ("nDCG@10",),
    runs: str | Sequence[str] | None = None,
    qrels: str | None = None,
    human: str = "human",
    llm: str = "llm",
    copy_twins: bool = True,
    topics: str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Source bias (Cocktail), one row per measure and run: effectiveness (mixed corpus), the
    scores against the human and the LLM documents' judgments, Relative Δ (%, positive: human
    ranked higher) with its bootstrap CI, and paired p-values. See `tcdb report source-bias`."""
    from tcdb.reports.source_bias import source_bias_frame, source_bias_report

    return source_bias_frame(source_bias_report(
        collection, snapshot, _as_labels(measures, "measures"), _labels_or_none(runs, "runs"),
        qrels=qrels, human=human, llm=llm, copy_twins=copy_twins, topics=topics,
        bootstrap=bootstrap, seed=seed))


@_speaks_python()
def documents_by_source(collection: str) -> pd.DataFrame:
    """Documents per source label (human, llm, …, unlabelled) per snapshot."""
    from tcdb.reports.source_bias import documents_by_source as table

    frame: pd.DataFrame = table(collection)
    return frame
