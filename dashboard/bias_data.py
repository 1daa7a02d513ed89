"""Cached loaders of the Source bias page: the source-bias report and documents per source.

Kept apart from `tcdb.dashboard.data` (one loader module per page family would be overkill;
`data` is at its size limit). Like every loader, each runs an operation (`source_bias`,
`documents_by_source`) and keeps its result for `data.TTL` seconds; nothing is stored (no
`save`: the per-source qrels live in memory).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from tcdb.dashboard.data import TTL, run_operation
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

if TYPE_CHECKING:
    from tcdb.reports.source_bias import DocumentsBySourceResult, SourceBiasResult

# The intervals of Relative Δ: tcdb's one bootstrap default, as the CLI and the demo use it.
BOOTSTRAP, SEED = BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED


@st.cache_data(ttl=TTL, show_spinner=False)
def documents_by_source(url: str, collection: str) -> DocumentsBySourceResult:
    """Documents per source label per snapshot, and the snapshots with labelled ones."""
    result: DocumentsBySourceResult = run_operation(url, "documents_by_source",
                                                    collection=collection)
    return result


def labelled_collections(url: str) -> list[str]:
    """The collections with documents that say who wrote them: the page opens on one."""
    from tcdb.dashboard.data import collections

    return [c["name"] for c in collections(url)
            if documents_by_source(url, c["name"]).labelled_snapshots]


@st.cache_data(ttl=TTL, show_spinner="Scoring the runs against each source's judgments …")
def source_bias(url: str, collection: str, snapshot: str, measure: str) -> SourceBiasResult:
    """`tcdb report source-bias` for one measure, every run of the snapshot."""
    result: SourceBiasResult = run_operation(url, "source_bias", collection=collection,
                                             snapshot=snapshot, measures=[measure],
                                             bootstrap=BOOTSTRAP, seed=SEED)
    return result
