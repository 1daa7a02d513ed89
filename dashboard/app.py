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
    ("judges", "Judge agreement", ":material/gavel:"),
    ("pools", "Pools", ":material/inventory_2:"),
    ("compare", "Compare runs", ":material/compare_arrows:"),
    ("diff_runs", "Diff runs", ":material/splitscreen:"),
    ("source_bias", "Source bias", ":material/smart_toy:"),
    ("literature", "Literature", ":material/menu_book:"),
]

SIDEBAR_PX = 250  # room for the pickers; the rest of a 1000 px window goes to the figures
# Streamlit pads its wide layout by 5rem a side: a 1000 px window would keep 580 px for tables.
NARROW_MARGINS = """<style>
[data-testid="stMainBlockContainer"] { padding: 3rem 1.5rem 4rem 1.5rem; }
</style>"""

st.set_page_config(page_title="tcdb", page_icon=":material/database:", layout="wide",
                   initial_sidebar_state=SIDEBAR_PX)
# The default page (Overview) lives at / — Streamlit gives a default page no path of its own,
# so /overview is "Page not found": link the overview as /, never as /overview.
page = st.navigation([
    st.Page(HERE / "views" / f"{name}.py", title=title, icon=icon,
            url_path=None if name == "overview" else name, default=name == "overview")
    for name, title, icon in PAGES
])
st.set_page_config(page_title=f"{page.title} · tcdb")
st.html(NARROW_MARGINS)
with st.sidebar:
    if st.button("Refresh", icon=":material/refresh:", help="Read the database again now "
                 f"(figures are otherwise kept for {data.TTL} s)."):
        data.clear()
    st.caption(widgets.plain(widgets.describe_database(data.database_url())))
page.run()
