"""Cached loaders of the Literature page: reported results and `tcdb literature report`.

Kept apart from `tcdb.dashboard.data` (at its size limit), in the style of `bias_data`: each
loader calls the core's functions, never SQL of its own, and keeps its results for `data.TTL`
seconds. The page's reference is a value typed in the sidebar, never a run to be scored: the
dashboard computes and stores nothing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from tcdb.dashboard.data import TTL


@st.cache_data(ttl=TTL, show_spinner=False)
def reported(url: str, collection: str) -> pd.DataFrame:
    """Every reported result of the collection (`tcdb literature list`)."""
    from tcdb.literature.reported import literature_frame

    return literature_frame(collection)


def collections_with_literature(url: str) -> list[str]:
    """The collections with reported results: the page opens on one of them."""
    from tcdb.dashboard.data import collections

    return [c["name"] for c in collections(url) if len(reported(url, c["name"]))]


@st.cache_data(ttl=TTL, show_spinner=False)
def report(url: str, collection: str, metric: str, reference_value: float | None,
           reference_name: str | None) -> dict[str, Any]:
    """`tcdb literature report` for one metric, over a named reference value (or none)."""
    from tcdb.literature.reported import literature_report

    return literature_report(collection, metric, reference_value=reference_value,
                             reference_name=reference_name)
