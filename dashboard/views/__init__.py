"""The dashboard's pages: Streamlit scripts that `tcdb.dashboard.app` runs by path."""
