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
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st
from sqlmodel import Session

if TYPE_CHECKING:
    from tcdb.reports.results import CompareReport, PersistenceReport

TTL = 60  # seconds: a new snapshot or run shows up within a minute without a refresh

# Measures the pickers offer when the database has scores for them (first: the default).
CANDIDATE_MEASURES = ["nDCG@10", "AP", "P@10", "P@20", "P@5", "nDCG@20", "nDCG@100", "nDCG",
                      "RR", "RR@10", "R@100", "R@1000", "Bpref", "Judged@10", "Rprec"]


def database_url() -> str:
    """The database the dashboard reads (TCDB_DATABASE_URL or the embedded default)."""
    from tcdb.settings import get_settings
    from tcdb.storage.db import normalise_url

    return normalise_url(get_settings().database_url)


@contextmanager
def read_only_session() -> Iterator[Session]:
    """A session on the read-only engine: SQLite `query_only`, PostgreSQL read-only."""
    from tcdb.storage.db import get_engine

    with Session(get_engine(read_only=True)) as session:
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
    """Document, topic and qrels drift between consecutive complete snapshots.

    `documents`: transition, kind (added/removed/changed/unchanged), documents;
    `topics`: transition, added, removed, kept, renumbered; `qrels`: per snapshot the original
    qrels' topics, judgments and per-topic averages; `core`: topics in every snapshot.
    """
    from tcdb.queries import core_topic_ids
    from tcdb.reports.drift import snapshot_diff

    labels = complete_labels(url, collection)
    documents, topics = [], []
    qrels: dict[str, dict[str, Any]] = {}
    for a, b in zip(labels, labels[1:], strict=False):
        diff = snapshot_diff(collection, a, b)
        transition = f"{a} → {b}"
        for kind in ("added", "removed", "changed", "unchanged"):
            documents.append({"transition": transition, "kind": kind,
                              "documents": diff["documents"][kind]})
        topics.append({"transition": transition,
                       **{k: diff["topics"][k] for k in ("added", "removed", "kept",
                                                         "renumbered")}})
        qrels.update(diff["qrels"])
    if len(labels) == 1:
        from tcdb.queries import qrels_summary

        with read_only_session() as session:
            snap = _snapshot(session, collection, labels[0])
            qrels[labels[0]] = qrels_summary(session.connection(), snap.id)
    core = 0
    if labels:
        with read_only_session() as session:
            core = len(core_topic_ids(session, collection, labels))
    qrels_rows = [{"snapshot": label, **qrels[label]} for label in labels if label in qrels]
    return {
        "labels": labels,
        "documents": pd.DataFrame(documents, columns=["transition", "kind", "documents"]),
        "topics": pd.DataFrame(topics, columns=["transition", "added", "removed", "kept",
                                                "renumbered"]),
        "qrels": pd.DataFrame(qrels_rows, columns=["snapshot", "topics", "judgments", "relevant",
                                                   "judgments_per_topic",
                                                   "relevant_per_topic"]),
        "core": core,
    }


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


@st.cache_data(ttl=TTL, show_spinner=False)
def persistence(url: str, collection: str, snapshots: tuple[str, ...], pivot: str,
                measure: str, qrels: str | tuple[str, ...], topics: str) -> PersistenceReport:
    """`tcdb report persistence` on stored scores (nothing is evaluated here); `qrels`: one
    set name for every snapshot, or one per snapshot in order (`--qrels A --qrels B …`)."""
    from tcdb.reports.persistence import persistence_report

    return persistence_report(collection, list(snapshots), pivot, [measure], qrels, topics,
                              compute=False)


@st.cache_data(ttl=TTL, show_spinner=False)
def persistence_deltas(url: str, collection: str, snapshots: tuple[str, ...], pivot: str,
                       measure: str, qrels: str | tuple[str, ...], topics: str) -> pd.DataFrame:
    """Per topic, each system's score minus the pivot's (`per_topic_deltas_frame`)."""
    from tcdb.reports.persistence import per_topic_deltas_frame

    return per_topic_deltas_frame(collection, list(snapshots), pivot, [measure], qrels, topics,
                                  compute=False)


def persistence_frames(report: PersistenceReport, measure: str) -> dict[str, pd.DataFrame]:
    """The report as tables: `arp` (system, snapshot, arp) and `table` (one row per system and
    later snapshot: RΔ, relative change, ER, ΔRI, p; `below_pivot`: the system's ARP in the
    first snapshot is below the pivot's, where ER reads backwards)."""
    result = report["measures"].get(measure)
    records = result["systems"] if result else []
    skipped = result["skipped"] if result else []
    first, later = report["snapshots"][0], report["snapshots"][1:]
    pivot_first = next((r["arp"].get(first) for r in records if r["is_pivot"]), None)
    arp = [{"system": r["system"], "snapshot": s, "order": i, "arp": r["arp"].get(s)}
           for r in records for i, s in enumerate(report["snapshots"])]
    table = [{"system": r["system"], "pivot": bool(r["is_pivot"]), "from": first, "to": s,
              f"ARP {first}": r["arp"].get(first), "ARP": r["arp"].get(s),
              "RΔ": r["result_delta"].get(s), "relative change": r["relative_change"].get(s),
              "ER": r["er"].get(s), "ΔRI": r["delta_ri"].get(s), "p": r["p_value"].get(s),
              "below_pivot": _below(r["arp"].get(first), pivot_first)}
             for r in records for s in later]
    return {"arp": pd.DataFrame(arp, columns=["system", "snapshot", "order", "arp"]),
            "table": pd.DataFrame(table, columns=["system", "pivot", "from", "to",
                                                  f"ARP {first}", "ARP", "RΔ",
                                                  "relative change", "ER", "ΔRI", "p",
                                                  "below_pivot"]),
            "skipped": pd.DataFrame(skipped, columns=["system", "reason"])}


def _below(arp: float | None, pivot: float | None) -> bool:
    return arp is not None and pivot is not None and arp < pivot


# ------------------------------------------------------------------------------ reusability


@st.cache_data(ttl=TTL, show_spinner=False)
def reusability(url: str, collection: str, snapshot: str, qrels_a: str, qrels_b: str,
                measure: str, depth: int) -> dict[str, Any]:
    """`tcdb report reusability` for one measure, its tables as frames.

    Runs ranked under qrels A and B (τ, τ-b, τ_AP), per topic τ, and per run its top-`depth`
    documents unjudged in A and newly relevant in B (trec_eval's order); runs scored under
    only one of the two sets are named in `missing`.
    """
    from tcdb.reports.reusability import reusability_report

    report = reusability_report(collection, snapshot, qrels_a, qrels_b, [measure], depth=depth,
                                compute=False)
    figures = dict(report["measures"][measure])
    figures["threshold"] = report["threshold"]
    figures["missing"] = figures.get("skipped", [])
    figures["runs"] = pd.DataFrame(figures.get("runs", []))
    figures["per_topic_tau"] = pd.DataFrame(figures.get("tau_per_topic", []),
                                            columns=["topic", "tau", "n_runs"])
    return figures


@st.cache_data(ttl=TTL, show_spinner=False)
def leave_out(url: str, collection: str, snapshot: str, qrels: str, measure: str, depth: int,
              by: str) -> dict[str, Any]:
    """`tcdb report leave-out` for one measure on stored scores (it stores nothing): each
    group's runs re-ranked on qrels without the relevant documents only that group found."""
    from tcdb.reports.leave_out import leave_out_report

    report = leave_out_report(collection, snapshot, qrels, depth, by, [measure], compute=False)
    groups = report["measures"][measure]["groups"]
    for group in groups:
        group["runs"] = pd.DataFrame(group["runs"], columns=[
            "run", "score_full", "score_reduced", "rank_full", "rank_reduced", "rank_change"])
    return {"groups": groups, "n_topics": report["n_topics"]}


# ------------------------------------------------------------------------------------ pools


@st.cache_data(ttl=TTL, show_spinner=False)
def pools(url: str, collection: str) -> pd.DataFrame:
    from tcdb.pools import list_pools

    rows = [{**{k: v for k, v in pool.items() if k != "size"},
             **{f"size_{k}": v for k, v in pool["size"].items()}}
            for pool in list_pools(collection)]
    return pd.DataFrame(rows)


@st.cache_data(ttl=TTL, show_spinner=False)
def pool_detail(url: str, name: str) -> dict[str, Any]:
    from tcdb.pools import show_pool

    detail: dict[str, Any] = dict(show_pool(name))
    detail["per_topic"] = pd.DataFrame(detail["per_topic"],
                                       columns=["topic", "n_documents", "n_judged"])
    detail["runs"] = pd.DataFrame(detail["runs"], columns=["run", "n_pooled", "unique"])
    return detail


@st.cache_data(ttl=TTL, show_spinner=False)
def pool_export(url: str, name: str) -> str:
    """The pool blind, as `topic Q0 docid` lines (no run names, ranks or scores)."""
    from tcdb.collections.assessor_formats import PoolItem, write_pool_trec
    from tcdb.pools import pool_documents

    items = [PoolItem(topic, "", None, doc, "")
             for topic, docs in pool_documents(name).items() for doc in docs]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pool.txt"
        write_pool_trec(path, items)
        return path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------- compare


BOOTSTRAP = 10_000  # samples behind the compare page's confidence intervals


@st.cache_data(ttl=TTL, show_spinner=False)
def compare(url: str, collection: str, snapshot: str, qrels: str, runs: tuple[str, ...],
            measure: str, correction: str, k: int) -> CompareReport:
    """`tcdb report compare` with bootstrap intervals of the means and of their differences."""
    from tcdb.reports.compare import compare_report

    return compare_report(collection, snapshot, qrels, list(runs), measure, correction, k,
                          compute=False, bootstrap=BOOTSTRAP)


def outcome_frame(report: CompareReport) -> pd.DataFrame:
    """The outcome breakdown as pair, outcome, topics, share (one row per pair and outcome)."""
    rows = []
    for pair in report["outcomes"]["pairs"]:
        for outcome, count in pair["counts"].items():
            rows.append({"pair": f"{pair['run_a']} vs {pair['run_b']}", "outcome": outcome,
                         "topics": count, "share": pair["shares"][outcome]})
    return pd.DataFrame(rows, columns=["pair", "outcome", "topics", "share"])
