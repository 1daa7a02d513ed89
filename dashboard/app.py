"""The tcdb dashboard: `tcdb dashboard` (or `streamlit run dashboard/app.py`).

The entry page sets up navigation; every page reads through `tcdb.dashboard.data`, which calls
the core's query and report functions, never SQL of its own.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from tcdb.dashboard import data, widgets

HERE = Path(__file__).parent

PAGES = [
    ("overview", "Overview", ":material/dashboard:"),
    ("drift", "Drift", ":material/difference:"),
    ("persistence", "Persistence", ":material/timeline:"),
    ("reusability", "Reusability", ":material/recycling:"),
    ("pools", "Pools", ":material/inventory_2:"),
    ("compare", "Compare runs", ":material/compare_arrows:"),
]

st.set_page_config(page_title="tcdb", page_icon=":material/database:", layout="wide")
page = st.navigation([
    st.Page(HERE / "views" / f"{name}.py", title=title, icon=icon, url_path=name,
            default=name == "overview")
    for name, title, icon in PAGES
])
with st.sidebar:
    if st.button("Refresh", icon=":material/refresh:", help="Read the database again now "
                 f"(figures are otherwise kept for {data.TTL} s)."):
        data.clear()
    st.caption(f"Database: {widgets.mask(data.database_url())}")
page.run()
