"""Cached loaders of the dashboard: each calls the core's query and report functions.

No SQL here: every figure comes from the same functions the CLI reports use (`tcdb.catalog`,
`tcdb.drift`, `tcdb.runs`, `tcdb.qrels`, `tcdb.pools`, `tcdb.reports.*`, `tcdb.scores`), with
`compute=False` so that the dashboard never evaluates (writes) anything. Functions that take a
connection or a session get one from the read-only engine. Every loader takes the database URL
as its first argument so that the cache never mixes two databases, and keeps its results for a
minute (the sidebar's Refresh button clears them at once).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
from sqlmodel import Session

TTL = 60  # seconds: a new snapshot or run shows up within a minute without a refresh

# Measures the pickers offer when the database has scores for them (first: the default).
CANDIDATE_MEASURES = ["nDCG@10", "AP", "P@10", "P@20", "P@5", "nDCG@20", "nDCG@100", "nDCG",
                      "RR", "RR@10", "R@100", "R@1000", "Bpref", "Judged@10", "Rprec"]


def database_url() -> str:
    """The database the dashboard reads (TCDB_DATABASE_URL or the embedded default)."""
    from tcdb.db import normalise_url
    from tcdb.settings import get_settings

    return normalise_url(get_settings().database_url)


@contextmanager
def read_only_session() -> Iterator[Session]:
    """A session on the read-only engine: SQLite `query_only`, PostgreSQL read-only."""
    from tcdb.db import get_engine

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
    from tcdb.catalog import list_collections

    return list_collections()


@st.cache_data(ttl=TTL, show_spinner=False)
def snapshots(url: str, collection: str | None = None) -> pd.DataFrame:
    """Every snapshot (any status) with its counts and ingest times, in ordinal order."""
    from tcdb.drift import list_snapshots

    columns = ["collection", "label", "date", "status", "source", "documents", "topics",
               "judgments", "with_text", "ordinal", "completed_at", "error"]
    return pd.DataFrame(list_snapshots(collection), columns=columns)


def complete_labels(url: str, collection: str) -> list[str]:
    frame = snapshots(url, collection)
    return frame.loc[frame["status"] == "complete", "label"].tolist()


@st.cache_data(ttl=TTL, show_spinner=False)
def runs(url: str, collection: str | None = None, snapshot: str | None = None) -> pd.DataFrame:
    from tcdb.queries import RUN_COLUMNS
    from tcdb.runs import list_runs

    return pd.DataFrame(list_runs(collection, snapshot), columns=RUN_COLUMNS)


@st.cache_data(ttl=TTL, show_spinner=False)
def qrels_sets(url: str, collection: str | None = None) -> pd.DataFrame:
    from tcdb.qrels import list_qrels

    columns = ["collection", "snapshot", "name", "kind", "n_judgments", "n_topics", "parent",
               "second_parent", "assessor", "method", "description", "created_at"]
    return pd.DataFrame(list_qrels(collection), columns=columns)


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
    from tcdb.drift import snapshot_diff
    from tcdb.topic_sets import core_topic_ids

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
        from tcdb.drift import qrels_summary

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
    from tcdb.catalog import get_snapshot

    return get_snapshot(session, collection, label)


@st.cache_data(ttl=TTL, show_spinner=False)
def judgments_per_topic(url: str, collection: str, snapshot: str, qrels: str) -> pd.DataFrame:
    """Per topic of a qrels set: judged and relevant (grade > 0) documents."""
    from tcdb.qrels import get_qrels_set, qrels_frame

    with read_only_session() as session:
        snap = _snapshot(session, collection, snapshot)
        qset = get_qrels_set(session, snap, qrels)
        frame = qrels_frame(session.connection(), qset.id)
    if frame.empty:
        return pd.DataFrame(columns=["topic", "judged", "relevant"])
    out = (frame.assign(relevant=frame["grade"] > 0).groupby("topic", sort=False)
           .agg(judged=("doc", "size"), relevant=("relevant", "sum")).reset_index())
    out["relevant"] = out["relevant"].astype(int)
    return out.sort_values("topic", key=_natural_key).reset_index(drop=True)


def _natural_key(values: pd.Series) -> pd.Series:
    """Numeric topic ids in numeric order, then the others."""
    return values.map(lambda v: (0, int(v), "") if str(v).isdigit() else (1, 0, str(v)))


# ------------------------------------------------------------------------------ persistence


@st.cache_data(ttl=TTL, show_spinner=False)
def persistence(url: str, collection: str, snapshots: tuple[str, ...], pivot: str,
                measure: str, qrels: str, topics: str) -> dict[str, Any]:
    """`tcdb report persistence` on stored scores (nothing is evaluated here)."""
    from tcdb.reports.persistence import persistence_report

    return persistence_report(collection, list(snapshots), pivot, [measure], qrels, topics,
                              compute=False)


@st.cache_data(ttl=TTL, show_spinner=False)
def persistence_deltas(url: str, collection: str, snapshots: tuple[str, ...], pivot: str,
                       measure: str, qrels: str, topics: str) -> pd.DataFrame:
    from tcdb.reports.persistence import per_topic_deltas_frame

    return per_topic_deltas_frame(collection, list(snapshots), pivot, [measure], qrels, topics,
                                  compute=False)


def persistence_frames(report: dict[str, Any], measure: str) -> dict[str, pd.DataFrame]:
    """The report as tables: `arp` (system, snapshot, arp) and `table` (one row per system and
    later snapshot: RΔ, relative change, ER, ΔRI, p)."""
    records = report["measures"].get(measure, {}).get("systems", [])
    first, later = report["snapshots"][0], report["snapshots"][1:]
    arp = [{"system": r["system"], "snapshot": s, "order": i, "arp": r["arp"].get(s)}
           for r in records for i, s in enumerate(report["snapshots"])]
    table = [{"system": r["system"], "pivot": bool(r["is_pivot"]), "from": first, "to": s,
              f"ARP {first}": r["arp"].get(first), "ARP": r["arp"].get(s),
              "RΔ": r["result_delta"].get(s), "relative change": r["relative_change"].get(s),
              "ER": r["er"].get(s), "ΔRI": r["delta_ri"].get(s), "p": r["p_value"].get(s)}
             for r in records for s in later]
    skipped = report["measures"].get(measure, {}).get("skipped", [])
    return {"arp": pd.DataFrame(arp, columns=["system", "snapshot", "order", "arp"]),
            "table": pd.DataFrame(table, columns=["system", "pivot", "from", "to",
                                                  f"ARP {first}", "ARP", "RΔ",
                                                  "relative change", "ER", "ΔRI", "p"]),
            "skipped": pd.DataFrame(skipped, columns=["system", "reason"])}


# ------------------------------------------------------------------------------ reusability


@st.cache_data(ttl=TTL, show_spinner=False)
def per_topic(url: str, collection: str, snapshot: str, qrels: str, measure: str
              ) -> pd.DataFrame:
    """Stored per-topic scores of every evaluated run (`trec_eval -c` topics): run, topic,
    value."""
    from tcdb.scores import score_table

    frame = score_table(collection, snapshot, qrels, [measure], per_topic=True, compute=False)
    return frame[["run", "topic", "value"]]


@st.cache_data(ttl=TTL, show_spinner=False)
def reusability(url: str, collection: str, snapshot: str, qrels_a: str, qrels_b: str,
                measure: str, depth: int) -> dict[str, Any]:
    """`tcdb report reusability` for one measure, plus the per-topic τ of every topic.

    Runs ranked under qrels A and B (τ, τ-b, τ_AP) and per run its top-`depth` documents
    unjudged in A and newly relevant in B (trec_eval's order). `runs` and `per_topic_tau` come
    back as frames; runs scored under only one of the two sets are named in `missing`.
    """
    from tcdb.analysis.reusability import per_topic_tau
    from tcdb.reports.reusability import reusability_report

    report = reusability_report(collection, snapshot, qrels_a, qrels_b, [measure], depth=depth,
                                compute=False)
    figures = dict(report["measures"][measure])
    figures["missing"] = figures.get("skipped", [])
    if "error" in figures:
        figures["runs"] = pd.DataFrame()
        figures["per_topic_tau"] = pd.DataFrame(columns=["topic", "tau", "n_runs"])
        return figures
    figures["runs"] = pd.DataFrame(figures["runs"])
    tags = set(figures["runs"]["tag"])
    a = per_topic(url, collection, snapshot, qrels_a, measure)
    b = per_topic(url, collection, snapshot, qrels_b, measure)
    a, b = a[a["run"].isin(tags)], b[b["run"].isin(tags)]
    common = [t for t in dict.fromkeys(a["topic"]) if t in set(b["topic"])]
    table, _ = per_topic_tau(a[a["topic"].isin(common)], b[b["topic"].isin(common)],
                             topics=common, threshold=report["threshold"])
    figures["per_topic_tau"] = table.sort_values("topic", key=_natural_key).reset_index(
        drop=True)
    return figures


@st.cache_data(ttl=TTL, show_spinner=False)
def leave_out(url: str, collection: str, snapshot: str, parent: str, derived: str,
              measure: str) -> dict[str, Any]:
    """A stored leave-out (derived) qrels set read back as `tcdb report leave-out` reports it.

    Every run keeps its mean under the parent set except the runs evaluated on the derived set
    (the left-out group), which get their reduced mean; τ compares the full and the reduced
    rankings, and `runs` lists the group's runs with their rank change. Means are over the
    parent's judged topics (`trec_eval -c`). Read-only: the report itself derives and stores
    the sets, so the dashboard only reads what it stored.
    """
    from tcdb.analysis import mean_scores
    from tcdb.analysis.reusability import kendall_tau_omit_ties, rank_changes, tau_ap, tau_b

    full = per_topic(url, collection, snapshot, parent, measure)
    reduced = per_topic(url, collection, snapshot, derived, measure)
    if full.empty or reduced.empty:
        return {"runs": pd.DataFrame(), "kendall_tau": None, "tau_b": None, "tau_ap": None}
    topics = list(dict.fromkeys(full["topic"]))
    mean_full = mean_scores(full, topics=topics)
    mean_reduced = mean_full.copy()
    mean_reduced.update(mean_scores(reduced[reduced["topic"].isin(topics)], topics=topics))
    changes = rank_changes(mean_full, mean_reduced)
    group = changes[changes["run"].isin(set(reduced["run"]))].rename(columns={"run": "tag"})
    return {"runs": group.reset_index(drop=True),
            "kendall_tau": _float(kendall_tau_omit_ties(mean_full, mean_reduced)),
            "tau_b": _float(tau_b(mean_full, mean_reduced)),
            "tau_ap": _float(tau_ap(mean_full, mean_reduced))}


def _float(value: float) -> float | None:
    from tcdb.analysis import json_float

    return json_float(value)


# ------------------------------------------------------------------------------------ pools


@st.cache_data(ttl=TTL, show_spinner=False)
def pools(url: str, collection: str) -> pd.DataFrame:
    from tcdb.pools import list_pools

    rows = list_pools(collection)
    for row in rows:
        size = row.pop("size", {}) or {}
        for key, value in size.items():
            row[f"size_{key}"] = value
    return pd.DataFrame(rows)


@st.cache_data(ttl=TTL, show_spinner=False)
def pool_detail(url: str, name: str) -> dict[str, Any]:
    from tcdb.pools import show_pool

    detail = show_pool(name)
    detail["per_topic"] = pd.DataFrame(detail["per_topic"],
                                       columns=["topic", "n_documents", "n_judged"])
    detail["runs"] = pd.DataFrame(detail["runs"], columns=["tag", "n_pooled", "unique"])
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


@st.cache_data(ttl=TTL, show_spinner=False)
def compare(url: str, collection: str, snapshot: str, qrels: str, runs: tuple[str, ...],
            measure: str, correction: str, k: int) -> dict[str, Any]:
    from tcdb.reports.compare import compare_report

    return compare_report(collection, snapshot, qrels, list(runs), measure, correction, k,
                          compute=False)


def outcome_frame(report: dict[str, Any]) -> pd.DataFrame:
    """The outcome breakdown as pair, outcome, topics, share (one row per pair and outcome)."""
    rows = []
    for pair in report["outcomes"]["pairs"]:
        for outcome, count in pair["counts"].items():
            rows.append({"pair": f"{pair['run_a']} vs {pair['run_b']}", "outcome": outcome,
                         "topics": count, "share": pair["shares"][outcome]})
    return pd.DataFrame(rows, columns=["pair", "outcome", "topics", "share"])
