"""A run's ranking as trec_eval sees it: score descending, then document id descending.

Pure numpy; stored as `run_entry.eval_rank`, so every "top k" of a run is a range of its key.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tcdb.runs.id_index import PANDAS_FROM


def trec_eval_order(topics: Sequence[Any], docs: Any, scores: Any) -> tuple[Any, Any]:
    """(row order by topic then trec_eval rank, each row's 1-based trec_eval rank): score
    descending, then document id descending (byte-wise, as trec_eval's strcmp; code-point
    order is the same).

    `docs` are the document ids, or integers in their byte order (one sort, no strings). With
    strings, only rows that tie on (topic, score) are compared by document at all. Topics sort
    by value, so for integer topic ids the order is `run_entry`'s key order.
    """
    import numpy as np

    topic_codes = _codes(np.asarray(topics))
    scores = np.asarray(scores, dtype=np.float64)
    if isinstance(docs, np.ndarray):
        order = np.lexsort((-docs, -scores, topic_codes))
    else:
        order = np.lexsort((-scores, topic_codes))
        tied_with_next = ((topic_codes[order][1:] == topic_codes[order][:-1])
                          & (scores[order][1:] == scores[order][:-1]))
        if tied_with_next.any():
            in_tie = np.zeros(len(order), dtype=bool)
            in_tie[1:] |= tied_with_next
            in_tie[:-1] |= tied_with_next
            tied_rows = order[in_tie]
            tied_docs = np.asarray([docs[i] for i in tied_rows], dtype=object)
            doc_codes = np.zeros(len(order), dtype=np.int64)  # only compared within a tie
            doc_codes[tied_rows[tied_docs.argsort(kind="stable")]] = np.arange(len(tied_rows))
            order = np.lexsort((-doc_codes, -scores, topic_codes))
    sorted_topics = topic_codes[order]
    starts = np.r_[0, np.flatnonzero(sorted_topics[1:] != sorted_topics[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order)) - group_start + 1
    return order, ranks


def _codes(values: Any) -> Any:
    """Each value's place among the distinct values in sorted order: numpy's sort for a small
    run (no pandas to import), pandas' hash-based factorize for a large one (4x faster at 10M
    rows); the same codes (tests/test_id_index.py)."""
    import numpy as np

    if len(values) < PANDAS_FROM:
        return np.unique(values, return_inverse=True)[1].reshape(-1)
    import pandas as pd

    return pd.factorize(values, sort=True)[0]
