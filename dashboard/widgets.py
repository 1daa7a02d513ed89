"""Shared pieces of the pages: pickers the URL keeps, charts with a CSV download, empty states.

A picker's value lives in three places: the widget, the URL (`st.query_params`, so a link
reproduces the view) and a plain session-state copy (so it survives moving to another page,
which clears the query string and forgets the widgets of the page left behind).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from tcdb.dashboard import charts, data
from tcdb.dashboard.columns import MISSING, Col, styled
from tcdb.escaping import streamlit_code as code  # noqa: F401 (the pages' name for it)
from tcdb.escaping import streamlit_text as plain  # the pages' name for it

EMPTY_HELP = (
    "Fill it with the demo collection — `make demo` (three LongEval-shaped snapshots, ten "
    "systems, pools and qrels) — or with your own data: `tcdb collection sync SPEC`, "
    "`tcdb snapshot ingest`, `tcdb run import`, `tcdb evaluate`."
)


def _keep(param: str) -> str:
    return f"_kept_{param}"


def select(label: str, options: Sequence[str], param: str, default: str | None = None,
           *, sidebar: bool = True, help: str | None = None) -> str | None:
    """A selectbox whose value the URL keeps under `param`; None when there is nothing to pick."""
    options = list(options)
    if not options:
        st.query_params.pop(param, None)
        return None
    key = f"picker_{param}"
    if st.session_state.get(key) not in options:
        wanted = st.query_params.get(param) or st.session_state.get(_keep(param))
        if wanted not in options:
            wanted = default if default in options else options[0]
        st.session_state[key] = wanted
    where = st.sidebar if sidebar else st
    value = where.selectbox(label, options, key=key, help=help)
    st.query_params[param] = value
    st.session_state[_keep(param)] = value
    return value


def multiselect(label: str, options: Sequence[str], param: str,
                default: Sequence[str] | None = None, *, sidebar: bool = True) -> list[str]:
    """A multiselect kept in the URL as comma-separated values (in the options' order)."""
    options = list(options)
    key = f"picker_{param}"
    current = st.session_state.get(key)
    if current is None or any(v not in options for v in current):
        raw = st.query_params.get(param)
        wanted = raw.split(",") if raw else st.session_state.get(_keep(param))
        if not wanted or any(v not in options for v in wanted):
            wanted = list(default if default is not None else options)
        st.session_state[key] = [v for v in options if v in wanted]
    where = st.sidebar if sidebar else st
    values = where.multiselect(label, options, key=key)
    chosen = [v for v in options if v in values]
    st.query_params[param] = ",".join(chosen)
    st.session_state[_keep(param)] = chosen
    return chosen


def number(label: str, param: str, default: int, *, min_value: int = 1,
           max_value: int = 10_000, sidebar: bool = True) -> int:
    """An integer input kept in the URL."""
    key = f"picker_{param}"
    if key not in st.session_state:
        raw = st.query_params.get(param) or st.session_state.get(_keep(param))
        try:
            value = int(raw) if raw is not None else default
        except ValueError:
            value = default
        st.session_state[key] = min(max(value, min_value), max_value)
    where = st.sidebar if sidebar else st
    value = int(where.number_input(label, min_value=min_value, max_value=max_value, step=1,
                                   key=key))
    st.query_params[param] = str(value)
    st.session_state[_keep(param)] = value
    return value


def toggle(label: str, param: str, default: bool = False, *, sidebar: bool = False) -> bool:
    """An on/off switch kept in the URL (`1` or `0`)."""
    key = f"picker_{param}"
    if key not in st.session_state:
        raw = st.query_params.get(param)
        kept = st.session_state.get(_keep(param))
        st.session_state[key] = raw == "1" if raw is not None else bool(
            default if kept is None else kept)
    where = st.sidebar if sidebar else st
    value = bool(where.toggle(label, key=key))
    st.query_params[param] = "1" if value else "0"
    st.session_state[_keep(param)] = value
    return value


# ---------------------------------------------------------------------------- the pickers


def collection_page(title: str, prefer: Callable[[str], Sequence[str]] | None = None
                    ) -> tuple[str, str]:
    """A page's title and its collection picker, with the database URL; stops the page (after
    showing how to fill the database) when there is no collection yet. `prefer(url)` names
    the collections that have something to show on the page: it opens on one of them."""
    st.title(title)
    collection = pick_collection(prefer)
    if collection is None:
        st.stop()
    return collection, data.database_url()


def pick_collection(prefer: Callable[[str], Sequence[str]] | None = None) -> str | None:
    """The collection picker every page shares; shows how to fill an empty database.

    It opens on the collection named in the URL, else the one the user had picked on another
    page, else the most recently changed one (an empty collection is rarely what one came for)
    of those `prefer` names, if any (the first of them when none changed yet: a collection
    with reported results only).
    """
    url = data.database_url()
    names = [c["name"] for c in data.collections(url)]
    if not names:
        empty_database()
        return None
    preferred = list(prefer(url)) if prefer is not None else []
    default = ((data.latest_collection(url, preferred) or preferred[0]) if preferred
               else None) or data.latest_collection(url)
    return select("Collection", names, "collection", default=default)


def pick_snapshot(collection: str, param: str = "snapshot", label: str = "Snapshot",
                  default_last: bool = True, prefer: Sequence[str] = ()) -> str | None:
    """A complete snapshot of the collection: by default the last one, or the last of `prefer`
    (the snapshots that have something to show on this page) when there are such."""
    labels = data.complete_labels(data.database_url(), collection)
    if not labels:
        st.info(f"Collection **{plain(collection)}** has no complete snapshot yet. Ingest one with "
                "`tcdb snapshot ingest`.")
        return None
    preferred = [label for label in labels if label in prefer]
    default = (preferred or labels)[-1] if default_last else labels[0]
    return select(label, labels, param, default=default)


def pick_qrels(collection: str, snapshots: Sequence[str], param: str = "qrels",
               label: str = "Qrels set", default: str = "original") -> str | None:
    names = data.qrels_names(data.database_url(), collection, snapshots)
    if not names:
        st.info("No qrels set is shared by the chosen snapshot(s).")
        return None
    return select(label, names, param, default=default)


def pick_qrels_per_snapshot(collection: str, labels: Sequence[str]) -> dict[str, str] | None:
    """One qrels picker per snapshot, offering that snapshot's sets; None (after saying so)
    when one has none. The default is the snapshot's designated original set, or the name an
    older link gave for all snapshots (`?qrels=NAME`) where that snapshot has it."""
    url = data.database_url()
    sets = data.qrels_sets(url, collection)
    originals = data.original_qrels(url, collection, tuple(labels))
    shared = st.query_params.get("qrels")
    st.sidebar.caption("Qrels set of each snapshot")
    chosen: dict[str, str] = {}
    for label in labels:
        names = sets.loc[sets["snapshot"] == label, "name"].tolist()
        default = shared if shared in names else originals.get(label)
        picked = select(f"Qrels · {plain(label)}", names, f"qrels_{label}", default=default)
        if picked is None:
            st.info(f"Snapshot **{plain(label)}** has no qrels set yet. Import one with "
                    "`tcdb qrels import`.")
            return None
        chosen[label] = picked
    return chosen


def pick_measure(param: str = "measure") -> str | None:
    measures = data.known_measures(data.database_url())
    if not measures:
        st.info("No scores yet: evaluate the runs with `tcdb evaluate COLLECTION SNAPSHOT`.")
        return None
    return select("Measure", measures, param, default=measures[0])


def empty_database() -> None:
    """What an empty database shows instead of figures."""
    st.info("**The database is empty.** " + EMPTY_HELP, icon=":material/database:")
    st.code("make demo", language="bash")
    st.caption(f"Reading {plain(mask(data.database_url()))}")


def mask(url: str) -> str:
    from tcdb.storage.urls import mask_url

    return mask_url(url)


def describe_database(url: str) -> str:
    """The database in a person's words: `SQLite · /path/file.sqlite`, `PostgreSQL · tcdb on
    host:5432` (no password, no connection options)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"SQLite · {parsed.database or 'in memory'}"
    where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
    read_only = " (read-only)" if "read_only" in str(parsed.query) else ""
    return f"PostgreSQL · {parsed.database} on {where}{read_only}"


# ------------------------------------------------------------------------ charts and tables


def chart(figure: Any, frame: pd.DataFrame, name: str, *, caption: str | None = None) -> None:
    """An Altair chart (or a list of them, one under the other, each as wide as the page), its
    one-line "how to read this", then a CSV download of exactly the data it draws (each
    chart names it in its spec's `usermeta`). Names are data: the label is `plain`, the CSV's
    cells are neutralised for spreadsheets (`tcdb.collections.files.csv_safe`)."""
    from tcdb.collections.files.csv_safe import frame_csv

    label = f"⬇ {plain(name)}.csv"
    for one in figure if isinstance(figure, list) else [figure]:
        st.altair_chart(charts.legible(one).properties(usermeta={"download": label}),
                        width="stretch")
    if caption:
        st.caption(caption)
    st.download_button(
        label, (frame_csv(frame) or "").encode("utf-8"), file_name=f"{slug(name)}.csv",
        mime="text/csv", key=f"csv_{slug(name)}", on_click="ignore")


ROW_PX, MAX_ROWS = 35, 20


def table(frame: pd.DataFrame, columns: dict[str, Any] | None = None, *,
          height: int | None = None) -> None:
    """A sortable table (st.dataframe) without the index, every row in view up to 20 rows.

    `columns` maps column names to `tcdb.dashboard.columns` specs (then only those columns are
    shown, in that order, each with its header and number format) or to st.column_config
    entries (then every column is shown).
    """
    fit = height or ROW_PX * (min(len(frame), MAX_ROWS) + 1) + 3
    if columns and all(isinstance(spec, Col) for spec in columns.values()):
        shown, config, order = styled(frame, columns)
        st.dataframe(shown, hide_index=True, width="stretch", column_config=config,
                     column_order=order, height=fit, placeholder=MISSING)
        return
    st.dataframe(frame, hide_index=True, width="stretch", column_config=columns or None,
                 height=fit, placeholder=MISSING)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-").lower() or "data"


def fmt(value: float | None, digits: int = 3) -> str:
    """A figure for display; None (NaN in JSON) as a dash."""
    return "–" if value is None else f"{value:.{digits}f}"


def show_error(exc: Exception) -> None:
    """A core error (bad choice, nothing stored yet) as a warning, not a traceback; it may
    quote names from the data, so it is shown `plain`."""
    st.warning(plain(str(exc)), icon=":material/warning:")
