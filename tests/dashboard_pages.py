"""Reading the dashboard's pages in tests: run a page through `streamlit.testing.v1.AppTest`
and get at the data behind its charts and tables.

A helper module (not a test module): the dashboard's test modules import from here.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


def clear_cache() -> None:
    import streamlit as st

    st.cache_data.clear()


def open_page(page: str, **params: str) -> Any:
    """Run the app on `page` with these query parameters; fails on any exception shown."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page != "overview":
        for key, value in params.items():
            at.query_params[key] = value
        at.switch_page(f"views/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at: Any) -> list[tuple[dict[str, Any], list[pd.DataFrame]]]:
    """Every Altair chart of the page: its Vega-Lite spec and its datasets as frames."""
    import pyarrow as pa

    found = []
    for element in at.get("vega_lite_chart"):
        proto = element.proto
        frames = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas()
                  for d in proto.datasets]
        found.append((json.loads(proto.spec), frames))
    return found


def chart_with(at: Any, *columns: str) -> pd.DataFrame:
    """The first chart dataset that has all these columns."""
    for _, frames in charts(at):
        for frame in frames:
            if set(columns) <= set(frame.columns):
                return frame
    raise AssertionError(f"no chart with columns {columns}: "
                         f"{[[list(f.columns) for f in fs] for _, fs in charts(at)]}")


def table_with(at: Any, *columns: str) -> pd.DataFrame:
    for element in at.dataframe:
        frame = element.value
        if set(columns) <= set(frame.columns):
            return frame
    raise AssertionError(f"no table with columns {columns}: "
                         f"{[list(e.value.columns) for e in at.dataframe]}")


def downloads(at: Any) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]
