"""Cached loaders of the Source bias page: the source-bias report and documents per source.

Kept apart from `tcdb.dashboard.data` (one loader module per page family would be overkill;
`data` is at its size limit). Like every loader, each calls the core's report functions, never
SQL of its own, stores nothing (no `--save`: the per-source qrels live in memory), and keeps its
results for `data.TTL` seconds.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tcdb.dashboard.data import TTL

BOOTSTRAP = 2_000  # samples behind the page's intervals of Relative Δ


@st.cache_data(ttl=TTL, show_spinner=False)
def documents_by_source(url: str, collection: str) -> pd.DataFrame:
    """Documents per source label per snapshot (`[snapshot, source, documents]`)."""
    from tcdb.reports.source_bias import documents_by_source as table

    frame: pd.DataFrame = table(collection)
    return frame


def labelled_collections(url: str) -> list[str]:
    """The collections with documents that say who wrote them: the page opens on one."""
    from tcdb.dashboard.data import collections

    return [c["name"] for c in collections(url)
            if (documents_by_source(url, c["name"])["source"] != "unlabelled").any()]


@st.cache_data(ttl=TTL, show_spinner="Scoring the runs against each source's judgments …")
def source_bias(url: str, collection: str, snapshot: str, measure: str) -> dict[str, Any]:
    """`tcdb report source-bias` for one measure, every run of the snapshot."""
    from tcdb.reports.source_bias import source_bias_report

    return source_bias_report(collection, snapshot, [measure], bootstrap=BOOTSTRAP)
