"""Cached loaders of the Literature page: the `literature` and `literature_report` operations.

Kept apart from `tcdb.dashboard.data` (at its size limit), in the style of `bias_data`: each
loader calls an operation, never SQL of its own, and keeps its result for `data.TTL` seconds.
The page's reference is a value typed in the sidebar, never a run to be scored: the dashboard
computes and stores nothing.
"""

from __future__ import annotations

import streamlit as st

from tcdb.dashboard.data import TTL
from tcdb.literature.results import LiteratureReport, LiteratureResult


@st.cache_data(ttl=TTL, show_spinner=False)
def reported(url: str, collection: str) -> LiteratureResult:
    """Every reported result of the collection and its metric usage (`tcdb literature list`)."""
    from tcdb.operations import Database, get_operation

    result: LiteratureResult = get_operation("literature").run(Database(url),
                                                                collection=collection)
    return result


def collections_with_literature(url: str) -> list[str]:
    """The collections with reported results: the page opens on one of them."""
    from tcdb.dashboard.data import collections

    return [c["name"] for c in collections(url) if reported(url, c["name"]).results]


@st.cache_data(ttl=TTL, show_spinner=False)
def report(url: str, collection: str, metric: str, reference_value: float | None,
           reference_name: str | None) -> LiteratureReport:
    """`tcdb literature report` for one metric, over a named reference value (or none)."""
    from tcdb.operations import Database, get_operation

    result: LiteratureReport = get_operation("literature_report").run(
        Database(url), collection=collection, metric=metric, reference_value=reference_value,
        reference_name=reference_name)
    return result
