"""Cached loaders of the dashboard: each calls the core's query and report functions.

No SQL here: every figure comes from the same functions the CLI reports use
(`tcdb.catalog.collections`, `tcdb.drift`, `tcdb.runs`, `tcdb.judging.qrels`, `tcdb.pools`,
`tcdb.reports.*`, `tcdb.scoring.scores`), with `compute=False` so that the dashboard never evaluates
(writes) anything. Functions that take a connection or a session get one from the read-only engine.
Every loader takes the database URL as its first argument so that the cache never mixes two
databases, and keeps its results for a minute (the sidebar's Refresh button clears them at once).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st
from sqlmodel import Session

from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

if TYPE_CHECKING:
    from tcdb.pools.results import PoolExportResult
    from tcdb.reports.compare_result import CompareResult
    from tcdb.reports.persistence import PersistenceResult

TTL = 60  # seconds: a new snapshot or run shows up within a minute without a refresh

# Measures the pickers offer when the database has scores for them (first: the default).
CANDIDATE_MEASURES = ["nDCG@10", "AP", "P@10", "P@20", "P@5", "nDCG@20", "nDCG@100", "nDCG",
                      "RR", "RR@10", "R@100", "R@1000", "Bpref", "Judged@10", "Rprec"]


def database_url() -> str:
    """The database the dashboard reads (TCDB_DATABASE_URL or the embedded default)."""
    from tcdb.settings import get_settings
    from tcdb.storage.urls import normalise_url

    return normalise_url(get_settings().database_url)


@contextmanager
def read_only_session() -> Iterator[Session]:
    """A session on the read-only engine: SQLite `query_only`, PostgreSQL read-only."""
    from tcdb.storage.db import get_engine

    with Session(get_engine(database_url(), read_only=True)) as session:
        try:
            yield session
        finally:
            session.rollback()


def clear() -> None:
    """Forget every cached figure (the Refresh button)."""
    st.cache_data.clear()


# ------------------------------------------------------------------------------ catalogue


@st.cache_data(ttl=TTL, show_spinner=False)
def collections(url: str) -> list[dict[str, Any]]:
    """The `collections` operation's rows (name, identity rules, grades, complete snapshots)."""
    from tcdb.operations import Database, get_operation

    return [c.model_dump() for c in get_operation("collections").run(Database(url)).collections]


@st.cache_data(ttl=TTL, show_spinner=False)
def snapshots(url: str, collection: str | None = None) -> pd.DataFrame:
    """Every snapshot (any status) with its counts and ingest times, in ordinal order (the
    `snapshots` operation)."""
    from tcdb.operations import Database, get_operation

    return get_operation("snapshots").run(Database(url), collection=collection).to_frame()


def latest_collection(url: str, among: Sequence[str] | None = None) -> str | None:
    """The collection that changed last (of `among`, when given): the latest snapshot
    ingested, run imported or qrels set created (None when none has any of these yet)."""
    stamps = [(frame["collection"], pd.to_datetime(frame[column], utc=True, errors="coerce"))
              for frame, column in ((snapshots(url), "completed_at"), (runs(url), "created_at"),
                                    (qrels_sets(url), "created_at"))]
    latest = pd.concat([pd.DataFrame({"collection": c, "when": w}) for c, w in stamps])
    latest = latest.dropna(subset=["when"])
    if among is not None:
        latest = latest[latest["collection"].isin(list(among))]
    if latest.empty:
        return None
    return str(latest.sort_values("when").iloc[-1]["collection"])


def complete_labels(url: str, collection: str) -> list[str]:
    frame = snapshots(url, collection)
    return frame.loc[frame["status"] == "complete", "label"].tolist()


@st.cache_data(ttl=TTL, show_spinner=False)
def runs(url: str, collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    """The `runs` operation's table."""
    from tcdb.operations import Database, get_operation

    return get_operation("runs").run(Database(url), collection=collection,
                                     snapshot=snapshot).to_frame()


@st.cache_data(ttl=TTL, show_spinner=False)
def qrels_sets(url: str, collection: str | None = None) -> pd.DataFrame:
    """The `qrels_sets` operation's table."""
    from tcdb.operations import Database, get_operation

    return get_operation("qrels_sets").run(Database(url), collection=collection).to_frame()


def qrels_names(url: str, collection: str, labels: Sequence[str]) -> list[str]:
    """Qrels set names every one of the snapshots has (`original` first)."""
    frame = qrels_sets(url, collection)
    common: set[str] | None = None
    for label in labels:
        names = set(frame.loc[frame["snapshot"] == label, "name"])
        common = names if common is None else common & names
    ordered = sorted(common or set())
    return sorted(ordered, key=lambda n: n != "original")


@st.cache_data(ttl=TTL, show_spinner=False)
def known_measures(url: str) -> list[str]:
    """The measures the database has scores for: the familiar ones first (`CANDIDATE_MEASURES`
    order), then any other, alphabetically."""
    from tcdb.queries import measure_names

    with read_only_session() as session:
        known = measure_names(session.connection())
    return ([m for m in CANDIDATE_MEASURES if m in known]
            + [m for m in known if m not in CANDIDATE_MEASURES])


@st.cache_data(ttl=TTL, show_spinner=False)
def flow_runs(url: str, limit: int = 10) -> pd.DataFrame | None:
    """The last Prefect flow runs when a Prefect server is configured; None otherwise."""
    api = os.environ.get("PREFECT_API_URL")
    if not api:
        return None
    try:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.sorting import FlowRunSort

        with get_client(sync_client=True) as client:
            found = client.read_flow_runs(limit=limit, sort=FlowRunSort.START_TIME_DESC)
    except Exception as exc:  # noqa: BLE001 - any failure: say the server did not answer
        return pd.DataFrame({"flow run": [f"Prefect at {api} did not answer: {exc}"]})
    return pd.DataFrame([{
        "flow run": r.name, "state": r.state_name, "start": r.start_time, "end": r.end_time,
        "parameters": ", ".join(f"{k}={v}" for k, v in (r.parameters or {}).items()),
    } for r in found])


# ------------------------------------------------------------------------------------ drift


@st.cache_data(ttl=TTL, show_spinner=False)
def drift(url: str, collection: str) -> dict[str, Any]:
    """The `drift` operation over the complete snapshots, as the page's frames.

    `documents`: transition, kind (added/removed/changed/unchanged), documents;
    `topics`: transition, added, removed, kept, renumbered; `qrels`: per snapshot the original
    qrels' topics, judgments and per-topic averages; `core`: topics in every snapshot.
    """
    from tcdb.reports.drift import DriftResult

    result: DriftResult = run_operation(url, "drift", collection=collection)
    documents, topics = [], []
    for t in result.transitions:
        transition = f"{t.a} → {t.b}"
        documents += [{"transition": transition, "kind": kind,
                       "documents": getattr(t.documents, kind)}
                      for kind in ("added", "removed", "changed", "unchanged")]
        topics.append({"transition": transition,
                       **t.topics.model_dump(include={"added", "removed", "kept", "renumbered"})})
    qrels_rows = [{"snapshot": label, **q.model_dump()} for label, q in result.qrels.items()]
    return {
        "labels": result.snapshots,
        "documents": pd.DataFrame(documents, columns=["transition", "kind", "documents"]),
        "topics": pd.DataFrame(topics, columns=["transition", "added", "removed", "kept",
                                                "renumbered"]),
        "qrels": pd.DataFrame(qrels_rows, columns=["snapshot", "topics", "judgments", "relevant",
                                                   "judgments_per_topic",
                                                   "relevant_per_topic"]),
        "core": result.core_topics,
    }


@st.cache_data(ttl=TTL, show_spinner=False)
def run_operation(url: str, operation: str, /, **fields: Any) -> Any:
    """The one way a page runs a report: `operation` on the dashboard's database with the
    request's `fields`, its result cached per database, operation and fields (Refresh clears
    it). Pages ask for reading operations only, with `compute=False` where the operation
    would evaluate; the database is opened read-only besides."""
    from tcdb.operations import Database, get_operation

    return get_operation(operation).run(Database(url), **fields)


def _snapshot(session: Session, collection: str, label: str) -> Any:
    from tcdb.catalog.collections import get_snapshot

    return get_snapshot(session, collection, label)


@st.cache_data(ttl=TTL, show_spinner=False)
def judgments_per_topic(url: str, collection: str, snapshot: str, qrels: str) -> pd.DataFrame:
    """Per topic of a qrels set: judged and relevant (grade > 0) documents, topics in order."""
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import judgment_counts
    from tcdb.sorting import natural_key

    with read_only_session() as session:
        snap = _snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        rows = judgment_counts(session, qset.pk, snap.pk)
    rows.sort(key=lambda row: natural_key(row[0]))
    return pd.DataFrame(rows, columns=["topic", "judged", "relevant"])


# ------------------------------------------------------------------------------ persistence


@st.cache_data(ttl=TTL, show_spinner=False)
def original_qrels(url: str, collection: str, labels: tuple[str, ...]) -> dict[str, str | None]:
    """snapshot → its designated original qrels set (None when it has none)."""
    from tcdb.catalog.collections import get_snapshot

    with read_only_session() as session:
        return {label: get_snapshot(session, collection, label).original_qrels
                for label in labels}


def persistence_frames(report: PersistenceResult, measure: str) -> dict[str, pd.DataFrame]:
    """The report as tables: `arp` (system, snapshot, arp) and `table` (one row per system and
    later snapshot: RΔ, relative drop, ER, ΔRI, p, and the report's `below_pivot`)."""
    result = report.measures.get(measure)
    records = result.systems if result else []
    skipped = [s.model_dump() for s in result.skipped] if result else []
    first, later = report.snapshots[0], report.snapshots[1:]
    arp = [{"system": r.system, "snapshot": s, "order": i, "arp": r.arp.get(s)}
           for r in records for i, s in enumerate(report.snapshots)]
    table = [{"system": r.system, "pivot": r.is_pivot, "from": first, "to": s,
              f"ARP {first}": r.arp.get(first), "ARP": r.arp.get(s),
              "RΔ": r.result_delta.get(s), "relative drop": r.relative_drop.get(s),
              "ER": r.er.get(s), "ΔRI": r.delta_ri.get(s), "p": r.p_value.get(s),
              "below_pivot": r.below_pivot}
             for r in records for s in later]
    return {"arp": pd.DataFrame(arp, columns=["system", "snapshot", "order", "arp"]),
            "table": pd.DataFrame(table, columns=["system", "pivot", "from", "to",
                                                  f"ARP {first}", "ARP", "RΔ",
                                                  "relative drop", "ER", "ΔRI", "p",
                                                  "below_pivot"]),
            "skipped": pd.DataFrame(skipped, columns=["system", "reason"])}


# ------------------------------------------------------------------------------ reusability


# ------------------------------------------------------------------------------------ pools


@st.cache_data(ttl=TTL, show_spinner=False)
def pool_export(url: str, name: str) -> str:
    """The pool blind, as a qrels template of `topic 0 docid` lines (no run names, ranks or
    scores): `tcdb pool export --format trec` without a file, so nothing is written or
    marked."""
    result: PoolExportResult = run_operation(url, "pool_export", name=name, format="trec")
    return result.trec_text()


# ---------------------------------------------------------------------------------- compare


# The compare page's intervals: tcdb's one bootstrap default, as the CLI uses it.
BOOTSTRAP, SEED = BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED


@st.cache_data(ttl=TTL, show_spinner=False)
def compare(url: str, collection: str, snapshot: str, qrels: str, runs: tuple[str, ...],
            measure: str, correction: str, k: int) -> CompareResult:
    """`tcdb report compare` with bootstrap intervals of the means and of their differences."""
    from tcdb.operations import Database, get_operation

    result: CompareResult = get_operation("compare").run(
        Database(url), collection=collection, snapshot=snapshot, qrels=qrels, runs=list(runs),
        measure=measure, correction=correction, k=k, compute=False, bootstrap=BOOTSTRAP,
        seed=SEED, progress=False)
    return result
