"""The Streamlit dashboard, page by page, through `streamlit.testing.v1.AppTest`.

Every page runs on an empty database (it must say how to fill it, not fail) and on a seeded one:
a three-snapshot collection with known churn, runs, evaluated scores, a pool whose judgments
expand the original qrels, built through the core's own write paths. The assertions read the
numbers in the tables and the data behind the charts and compare them with the construction or
with the core report the page claims to show.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
COLLECTION = "dash"
MEASURES = ["nDCG@10", "AP", "P@10"]
PAGES = {
    "overview": "Overview",
    "drift": "Snapshot drift",
    "persistence": "Persistence over time",
    "reusability": "Reusability",
    "pools": "Assessment pools",
    "compare": "Compare runs",
}


# --------------------------------------------------------------------------------- seeding


@dataclass
class Seeded:
    """What `seed_collection` built, with the numbers the pages must show."""

    collection: str
    labels: list[str]
    systems: list[str]
    contributing: list[str]
    n_documents: dict[str, int]
    churn: dict[str, dict[str, int]]  # "a → b" → added/removed/changed/unchanged
    topics: dict[str, list[str]]
    pool: str
    pool_snapshot: str
    extra: dict[str, Any] = field(default_factory=dict)


def seed_collection(
    tmp_path: Path,
    *,
    n_runs: int = 8,
    n_topics: int = 6,
    n_documents: int = 40,
    n_snapshots: int = 3,
    depth: int = 20,
    pool_depth: int = 5,
    seed: int = 7,
    progress: bool = False,
) -> Seeded:
    """Write and ingest a small longitudinal collection, import and evaluate runs, build a pool.

    Snapshot j drops the two oldest documents of j-1, adds two new ones and rewrites one; its
    topics are j+1 … j+n_topics (one dropped, one added each time). Runs score documents by a
    hidden truth plus seeded noise; the first half (two groups, `lab-a` and `lab-b`) contributed
    to the original qrels (their
    top `pool_depth`, judged by the truth); a depth-10 pool over all runs of the last snapshot,
    judged by the truth too, expands them into `expanded`.
    """
    from tcdb.catalog import add_collection
    from tcdb.collections.sources import LocalSource
    from tcdb.evaluation import evaluate
    from tcdb.ingest import ingest_snapshot
    from tcdb.judgments import import_judgments
    from tcdb.pools import build_pool, show_pool
    from tcdb.runs import import_runs

    rng = np.random.default_rng(seed)
    n_universe = n_documents + 2 * n_snapshots
    universe = [f"d{i:05d}" for i in range(n_universe)]
    position = {d: i for i, d in enumerate(universe)}
    all_topics = [str(t) for t in range(1, n_topics + n_snapshots + 1)]
    grades = rng.choice([0, 0, 0, 1, 2], size=(len(all_topics), n_universe))
    truth = {t: dict(zip(universe, grades[i].tolist(), strict=True))
             for i, t in enumerate(all_topics)}
    systems = ["bm25"] + [f"sys{i:03d}" for i in range(1, n_runs)]
    strength = {s: 0.6 + rng.random() for s in systems}
    noise = {s: rng.standard_normal((len(all_topics), n_universe)) for s in systems}
    contributing = systems[: max(1, n_runs // 2)]
    labels = [f"2024-{m:02d}" for m in range(1, n_snapshots + 1)]
    add_collection(COLLECTION, "doc_id", "query_id", grade_min=0, grade_max=2)

    present = list(universe[:n_documents])
    version = dict.fromkeys(universe, 0)
    churn: dict[str, dict[str, int]] = {}
    n_docs: dict[str, int] = {}
    topics: dict[str, list[str]] = {}
    for j, label in enumerate(labels):
        if j:
            removed, present = present[:2], present[2:]
            added = universe[n_documents + 2 * (j - 1): n_documents + 2 * j]
            present += added
            rewritten = present[len(present) // 2]
            version[rewritten] += 1
            churn[f"{labels[j - 1]} → {label}"] = {
                "added": len(added), "removed": len(removed), "changed": 1,
                "unchanged": len(present) - len(added) - 1}
        n_docs[label] = len(present)
        snap_topics = all_topics[j: j + n_topics]
        topics[label] = snap_topics
        folder = tmp_path / "seed" / label
        docs = write_documents(folder / "docs.trec", {
            d: f"document {d} version {version[d]} words {d[-2:]}" for d in present})
        topic_file = write_topics(folder / "topics.tsv", {t: f"query {t}" for t in snap_topics})
        runs_dir = folder / "runs"
        rankings: dict[str, dict[str, list[str]]] = {}
        paths = {}
        columns = np.array([position[d] for d in present])
        rows_of = np.array([all_topics.index(t) for t in snap_topics])
        for s in systems:
            scores = strength[s] * grades[np.ix_(rows_of, columns)] + \
                noise[s][np.ix_(rows_of, columns)]
            top = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
            rows = []
            rankings[s] = {}
            for i, t in enumerate(snap_topics):
                rankings[s][t] = [present[c] for c in top[i]]
                rows += [(t, present[c], round(float(scores[i, c]), 6)) for c in top[i]]
            paths[s] = write_run_file(runs_dir, s, rows)
        judged = {(t, d) for s in contributing for t in snap_topics
                  for d in rankings[s][t][:pool_depth]}
        qrels = write_qrels_file(folder / "qrels.txt", sorted(
            (t, d, truth[t][d]) for t, d in judged))
        ingest_snapshot(COLLECTION, label, LocalSource(docs, topic_file, qrels),
                        date=dt.date(2024, j + 1, 1), progress=progress)
        half = (len(contributing) + 1) // 2
        for group, members in (("lab-a", contributing[:half]), ("lab-b", contributing[half:])):
            if members:
                import_runs(COLLECTION, label, [paths[s] for s in members], group=group,
                            contributed=True, progress=progress)
        others = [paths[s] for s in systems if s not in contributing]
        if others:
            import_runs(COLLECTION, label, others, progress=progress)
        evaluate(COLLECTION, label, "original", MEASURES, progress=progress)

    last = labels[-1]
    pool = f"{last}-depth10"
    build_pool(COLLECTION, last, pool, 10, all_runs=True, exclude_judged="original")
    pooled = show_pool(pool)
    from tcdb.pools import pool_documents

    judgments = sorted((t, d, truth[t][d]) for t, ds in pool_documents(pool).items()
                       for d in ds)
    path = write_qrels_file(tmp_path / "seed" / "judgments.txt", judgments)
    import_judgments(pool, path, expand="original", expanded_name="expanded")
    evaluate(COLLECTION, last, "expanded", MEASURES, progress=progress)
    from tcdb.reports.leave_out import leave_out_report

    leave_out = leave_out_report(COLLECTION, last, "original", pool_depth, by="group",
                                 measures=["AP"]) if len(contributing) > 1 else None
    return Seeded(COLLECTION, labels, systems, contributing, n_docs, churn, topics, pool, last,
                  {"pool_size": pooled["n_documents"], "leave_out": leave_out})


# ------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def seeded_url(database_url: str, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[tuple[str, Seeded]]:
    """One seeded database per backend for the whole module (pages only read)."""
    import os

    from tcdb.db import truncate_all
    from tcdb.settings import get_settings

    truncate_all(database_url)
    previous = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = database_url
    get_settings.cache_clear()
    try:
        seeded = seed_collection(tmp_path_factory.mktemp("seed"))
    finally:
        if previous is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = previous
        get_settings.cache_clear()
    yield database_url, seeded


@pytest.fixture
def seeded(seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch) -> Seeded:
    from tcdb.settings import get_settings

    url, info = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    get_settings.cache_clear()
    _clear_cache()
    return info


def _clear_cache() -> None:
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


# ---------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("page", list(PAGES))
def test_empty_database_says_how_to_fill_it(db: str, page: str) -> None:
    _clear_cache()
    at = open_page(page)
    assert at.title[0].value == PAGES[page]
    text = " ".join(i.value for i in at.info)
    assert "The database is empty" in text and "make demo" in text
    assert [c.value for c in at.code] == ["make demo"]


def test_every_chart_has_a_csv_download(seeded: Seeded) -> None:
    for page in PAGES:
        at = open_page(page)
        n_charts = len(charts(at))
        csv = [label for label in downloads(at) if label.endswith(".csv")]
        assert n_charts >= 1, page
        assert len(csv) == n_charts, (page, csv)


def test_overview_counts_and_timeline(seeded: Seeded) -> None:
    from tcdb.runs import list_runs

    at = open_page("overview")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Collections"] == "1"
    assert metrics["Complete snapshots"] == str(len(seeded.labels))
    assert metrics["Runs"] == str(len(seeded.systems) * len(seeded.labels))
    assert metrics["Runs"] == str(len(list_runs()))
    summary = table_with(at, "collection", "snapshots", "runs")
    assert summary.loc[0, "collection"] == COLLECTION
    assert summary.loc[0, "snapshots"] == len(seeded.labels)
    timeline = chart_with(at, "label", "when", "documents")
    assert dict(zip(timeline["label"], timeline["documents"], strict=True)) == \
        seeded.n_documents
    assert set(timeline["status"]) == {"complete"}


def test_drift_stacked_bars_match_the_construction(seeded: Seeded) -> None:
    at = open_page("drift", collection=COLLECTION)
    bars = chart_with(at, "transition", "kind", "documents")
    got = {(r.transition, r.kind): r.documents for r in bars.itertuples()}
    expected = {(t, k): n for t, counts in seeded.churn.items() for k, n in counts.items()}
    assert got == expected
    spec = next(s for s, fs in charts(at) if {"kind", "documents"} <= set(fs[0].columns))
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["y"]["stack"] == "zero"
    topics = table_with(at, "transition", "kept", "added", "removed")
    assert topics["added"].tolist() == [1] * (len(seeded.labels) - 1)
    assert topics["removed"].tolist() == [1] * (len(seeded.labels) - 1)
    metrics = {m.label: m.value for m in at.metric}
    core = set.intersection(*(set(t) for t in seeded.topics.values()))
    assert metrics["Core topics (in every snapshot)"] == str(len(core))


def test_drift_judgments_per_topic_equal_the_qrels(seeded: Seeded) -> None:
    from tcdb.api import qrels

    last = seeded.labels[-1]
    at = open_page("drift", collection=COLLECTION, snapshot=last, qrels="expanded")
    frame = chart_with(at, "topic", "judged", "relevant")
    expected = qrels(COLLECTION, last, "expanded")
    counts = expected.groupby("topic")["doc"].size()
    assert dict(zip(frame["topic"], frame["judged"], strict=True)) == counts.to_dict()
    relevant = (expected["grade"] > 0).groupby(expected["topic"]).sum()
    assert dict(zip(frame["topic"], frame["relevant"], strict=True)) == relevant.to_dict()


def test_persistence_table_equals_the_report(seeded: Seeded) -> None:
    from tcdb.reports.persistence import persistence_report

    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="nDCG@10",
                   snapshots=",".join(seeded.labels))
    report = persistence_report(COLLECTION, seeded.labels, "bm25", ["nDCG@10"], compute=False)
    records = {r["system"]: r for r in report["measures"]["nDCG@10"]["systems"]}
    table = table_with(at, "system", "ER", "ΔRI", "p")
    assert set(table["system"]) == set(seeded.systems)
    for row in table.itertuples(index=False):
        record = records[row.system]
        later = row.to
        assert pytest.approx(record["result_delta"][later]) == row.RΔ
        if record["er"][later] is not None:
            assert pytest.approx(record["er"][later]) == row.ER
        assert pytest.approx(record["delta_ri"][later]) == row.ΔRI
    arp = chart_with(at, "system", "snapshot", "arp")
    for row in arp.itertuples(index=False):
        assert row.arp == pytest.approx(records[row.system]["arp"][row.snapshot])
    points = chart_with(at, "system", "to", "ER", "ΔRI")
    assert set(points["system"]) == set(seeded.systems) - {"bm25"}  # the pivot is not plotted
    for row in points.itertuples(index=False):
        assert pytest.approx(records[row.system]["er"][row.to]) == row.ER
    ideal = chart_with(at, "ER", "ΔRI", "label")
    assert ideal.to_dict("records") == [{"ER": 1.0, "ΔRI": 0.0, "label": "ideal (1, 0)"}]
    spec = next(s for s, fs in charts(at) if any("label" in f.columns for f in fs))
    assert any(layer["mark"].get("shape") == "cross" for layer in spec["layer"])


def test_persistence_per_topic_deltas(seeded: Seeded) -> None:
    from tcdb.reports.persistence import per_topic_deltas_frame

    system = seeded.systems[1]
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="AP",
                   system=system)
    deltas = chart_with(at, "topic_key", "delta", "pivot_score")
    expected = per_topic_deltas_frame(COLLECTION, seeded.labels, "bm25", ["AP"], compute=False)
    expected = expected[expected["system"] == system]
    assert len(deltas) == len(expected)
    merged = deltas.merge(expected, on=["snapshot", "topic"], suffixes=("", "_core"))
    assert np.allclose(merged["delta"], merged["delta_core"])


def test_reusability_scatter_and_taus(seeded: Seeded) -> None:
    from scipy import stats

    from tcdb.reports.reusability import reusability_report
    from tcdb.scores import score_table

    last = seeded.labels[-1]
    at = open_page("reusability", collection=COLLECTION, snapshot=last, measure="AP")
    a = score_table(COLLECTION, last, "original", ["AP"], compute=False).set_index("run")
    b = score_table(COLLECTION, last, "expanded", ["AP"], compute=False).set_index("run")
    runs = chart_with(at, "tag", "score_a", "score_b")
    assert set(runs["tag"]) == set(seeded.systems)
    for row in runs.itertuples(index=False):
        assert row.score_a == pytest.approx(a.loc[row.tag, "value"])
        assert row.score_b == pytest.approx(b.loc[row.tag, "value"])
    metrics = {m.label: m.value for m in at.metric}
    tau_b = stats.kendalltau(a["value"], b.loc[a.index, "value"]).statistic
    assert metrics["τ-b"] == f"{tau_b:.3f}"
    topic_tau = chart_with(at, "topic", "tau", "n_runs")
    assert set(topic_tau["topic"]) == set(seeded.topics[last])
    counts = chart_with(at, "tag", "unjudged_top_k", "new_relevant_top_k")
    report = reusability_report(COLLECTION, last, "original", "expanded", ["AP"], depth=100,
                                compute=False)["measures"]["AP"]
    want = {r["tag"]: (r["unjudged_top_k"], r["new_relevant_top_k"]) for r in report["runs"]}
    got = {r.tag: (r.unjudged_top_k, r.new_relevant_top_k) for r in counts.itertuples()}
    assert got == want
    assert (counts["new_relevant_top_k"] <= counts["unjudged_top_k"]).all()
    assert counts["new_relevant_top_k"].sum() > 0  # the pool found relevant documents


def test_reusability_leave_out(seeded: Seeded) -> None:
    group = seeded.extra["leave_out"]["measures"]["AP"]["groups"][0]
    at = open_page("reusability", collection=COLLECTION, snapshot=seeded.labels[-1],
                   measure="AP", derived=group["qrels"])
    assert {s.label: s.value for s in at.selectbox}["Derived qrels set"] == group["qrels"]
    shown = at.dataframe[-1].value
    want = {r["tag"]: (r["score_full"], r["score_reduced"]) for r in group["runs"]}
    assert set(shown["tag"]) == set(want)
    for row in shown.itertuples(index=False):
        assert (row.score_a, row.score_b) == pytest.approx(want[row.tag])
    text = " ".join(m.value for m in at.markdown)
    assert f"τ-b = {group['tau_b']:.3f}" in text


def test_pools_sizes_and_export(seeded: Seeded) -> None:
    from tcdb.pools import pool_documents

    at = open_page("pools", collection=COLLECTION)
    pools = table_with(at, "name", "status", "n_documents")
    assert pools["name"].tolist() == [seeded.pool]
    assert pools.loc[0, "n_documents"] == seeded.extra["pool_size"]
    per_topic = chart_with(at, "topic", "n_documents", "n_judged")
    expected = {t: len(d) for t, d in pool_documents(seeded.pool).items()}
    assert dict(zip(per_topic["topic"], per_topic["n_documents"], strict=True)) == expected
    assert (per_topic["n_judged"] == per_topic["n_documents"]).all()  # every batch judged
    fraction = chart_with(at, "name", "judged_fraction")
    assert fraction["judged_fraction"].tolist() == [1.0]
    assert "⬇ Blind pool (topic Q0 docid)" in downloads(at)


def test_pool_export_is_blind(seeded: Seeded) -> None:
    from tcdb.dashboard import data
    from tcdb.pools import pool_documents

    text = data.pool_export(data.database_url(), seeded.pool)
    lines = [line.split() for line in text.splitlines()]
    assert all(len(parts) == 3 and parts[1] == "Q0" for parts in lines)
    expected = {(t, d) for t, docs in pool_documents(seeded.pool).items() for d in docs}
    assert {(p[0], p[2]) for p in lines} == expected
    assert not any(s in text for s in seeded.systems)


def test_compare_significance_equals_the_report(seeded: Seeded) -> None:
    from tcdb.reports.compare import compare_report

    label = seeded.labels[0]
    runs = seeded.systems[:3]
    at = open_page("compare", collection=COLLECTION, snapshot=label, measure="P@10",
                   runs=",".join(runs), correction="bonferroni")
    report = compare_report(COLLECTION, label, "original", runs, "P@10", "bonferroni",
                            compute=False)
    pairs = table_with(at, "run_a", "run_b", "p_t")
    assert len(pairs) == 3
    for got, want in zip(pairs.to_dict("records"), report["pairs"], strict=True):
        assert (got["run_a"], got["run_b"]) == (want["run_a"], want["run_b"])
        assert got["mean_diff"] == pytest.approx(want["mean_diff"])
        for key in ("p_t", "p_t_corrected", "p_sign"):
            if want[key] is None:
                assert pd.isna(got[key])
            else:
                assert got[key] == pytest.approx(want[key])
    means = chart_with(at, "run", "mean")
    assert dict(zip(means["run"], means["mean"], strict=True)) == pytest.approx(
        {r["run"]: r["mean"] for r in report["runs"]})
    captions = " ".join(c.value for c in at.caption)
    assert "Not applicable" in captions  # graded qrels: several relevant per topic


def test_url_keeps_the_picks(seeded: Seeded) -> None:
    label = seeded.labels[1]
    at = open_page("compare", collection=COLLECTION, snapshot=label, measure="AP")
    assert at.query_params["snapshot"] == label and at.query_params["measure"] == "AP"
    picks = {s.label: s.value for s in at.selectbox}
    assert picks["Snapshot"] == label and picks["Measure"] == "AP"


def test_unknown_choice_in_the_url_falls_back(seeded: Seeded) -> None:
    at = open_page("persistence", collection="nope", pivot="nobody", measure="XYZ")
    picks = {s.label: s.value for s in at.selectbox}
    assert picks["Collection"] == COLLECTION
    assert picks["Pivot system"] == "bm25"
    assert picks["Measure"] in MEASURES


def test_dashboard_command_line(database_url: str) -> None:
    from tcdb.dashboard.launch import APP as app_path
    from tcdb.dashboard.launch import dashboard_env, read_only_url, streamlit_command

    command = streamlit_command(8765)
    assert command[1:5] == ["-P", "-m", "streamlit", "run"] and command[5] == str(app_path)
    assert command[command.index("--server.port") + 1] == "8765"
    assert command[command.index("--server.headless") + 1] == "true"
    env = dashboard_env(database_url)
    if database_url.startswith("postgresql"):
        assert "default_transaction_read_only" in env["TCDB_DATABASE_URL"]
        from sqlalchemy import create_engine, text
        from sqlalchemy.exc import DBAPIError

        engine = create_engine(read_only_url(database_url))
        with engine.connect() as conn, pytest.raises(DBAPIError, match="read-only"):
            conn.execute(text("CREATE TABLE dashboard_probe (x int)"))
        engine.dispose()
    else:
        assert env["TCDB_DATABASE_URL"] == database_url
