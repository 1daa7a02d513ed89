"""The Streamlit dashboard, page by page, through `streamlit.testing.v1.AppTest`.

Every page runs on an empty database (it must say how to fill it, not fail) and on a seeded one:
a three-snapshot collection with known churn, runs, evaluated scores, a pool whose judgments
expand the original qrels, built through the core's own write paths. The assertions read the
numbers in the tables and the data behind the charts and compare them with the construction or
with the core report the page claims to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tcdb.operations import Database
from tests.builders import COLLECTION, MEASURES, PAGES, Seeded
from tests.dashboard_pages import chart_with, charts, clear_cache, downloads, open_page, table_with

# ------------------------------------------------------------------------------- fixtures


@pytest.fixture
def seeded(seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch) -> Seeded:
    url, info = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    clear_cache()
    return info


# ---------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("page", list(PAGES))
def test_empty_database_says_how_to_fill_it(db: str, page: str) -> None:
    clear_cache()
    at = open_page(page)
    assert at.title[0].value == PAGES[page]
    text = " ".join(i.value for i in at.info)
    assert "The database is empty" in text and "make demo" in text
    assert [c.value for c in at.code] == ["make demo"]


def test_pool_show_reads_in_a_read_only_transaction(db: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The Pools page's detail (`show_pool`) under the dashboard's read-only database role, in
    every tie order: the file-rank bounds are a CTE, not a temporary table."""
    from tcdb.api import pool_build, pool_show, run_import
    from tcdb.dashboard.launch import read_only_url
    from tcdb.storage.db import dispose_engine
    from tests.builders import build_snapshot, write_run_file

    docs = {f"d{i}": f"document {i}" for i in range(8)}
    build_snapshot(tmp_path, "c", "s1", docs, {"1": "a query", "2": "another"},
                   [("1", "d1", 1), ("2", "d5", 2)])
    for tag, rows in {"A": [("1", "d1", 1, 3.0), ("1", "d2", 2, 4.0), ("2", "d5", 1, 1.0)],
                      "B": [("1", "d3", 1, 5.0), ("1", "d7", 2, 1.0), ("2", "d6", 1, 2.0)]}.items():
        run_import("c", "s1", [write_run_file(tmp_path / "runs", tag, rows)])
    orders = ["trec_eval", "docid-asc", "file-rank"]
    for order in orders:
        pool_build("c", "s1", order, depth=1, all_runs=True, tie_order=order)
    writable = {order: pool_show(order) for order in orders}
    read_only = read_only_url(db)
    monkeypatch.setenv("TCDB_DATABASE_URL", read_only)
    try:
        for order in orders:
            assert pool_show(order) == writable[order]
    finally:
        dispose_engine(read_only)
    assert [r.model_dump() for r in writable["file-rank"].runs] == [
        {"run": "A", "n_pooled": 2, "unique": 2, "contributed": False},
        {"run": "B", "n_pooled": 2, "unique": 2, "contributed": False}]


def test_every_chart_has_a_csv_download(seeded: Seeded) -> None:
    """(small multiples share one: each chart names its download in the spec's `usermeta`) …
    and every table shows a missing value as a dash, never "None" or "nan"."""
    for page in PAGES:
        at = open_page(page)
        named = [spec.get("usermeta", {}).get("download") for spec, _ in charts(at)]
        csv = [label for label in downloads(at) if label.endswith(".csv")]
        assert named and set(named) == set(csv) and len(set(csv)) == len(csv), (page, named)
        assert {t.proto.placeholder for t in at.dataframe} <= {"–"}, page


def test_overview_counts_and_timeline(seeded: Seeded) -> None:
    from tcdb.runs import list_runs

    at = open_page("overview")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Collections"] == "1"
    assert metrics["Snapshots"] == str(len(seeded.labels))
    assert metrics["Runs"] == str(len(seeded.systems) * len(seeded.labels))
    assert metrics["Runs"] == str(len(list_runs(Database())))
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
    # Above zero the later snapshot (unchanged + changed + added = its size); below zero, the
    # removed documents, which are not part of it.
    later = {f"{a} → {b}": b for a, b in zip(seeded.labels, seeded.labels[1:], strict=False)}
    above = bars[bars["_signed"] > 0].groupby("transition")["_signed"].sum()
    assert {t: int(n) for t, n in above.items()} == {
        t: seeded.n_documents[later[t]] for t in above.index}
    removed = bars[bars["kind"] == "removed"]
    assert (removed["_signed"] == -removed["documents"]).all()
    spec = next(s for s, fs in charts(at) if {"kind", "documents"} <= set(fs[0].columns))
    layer = spec["layer"][0]
    assert layer["mark"]["type"] == "bar" and layer["encoding"]["y"]["stack"] == "zero"
    assert layer["encoding"]["x"]["axis"]["labelAngle"] == 0
    topics = table_with(at, "transition", "kept", "added", "removed")
    assert topics["added"].tolist() == [1] * (len(seeded.labels) - 1)
    assert topics["removed"].tolist() == [1] * (len(seeded.labels) - 1)
    metrics = {m.label: m.value for m in at.metric}
    core = set.intersection(*(set(t) for t in seeded.topics.values()))
    assert metrics["Core topics"] == str(len(core))


def test_drift_judgments_per_topic_equal_the_qrels(seeded: Seeded) -> None:
    from tcdb.api import qrels

    last = seeded.labels[-1]
    at = open_page("drift", collection=COLLECTION, snapshot=last, qrels="expanded")
    frame = chart_with(at, "topic", "judged", "relevant")
    expected = qrels(COLLECTION, last, "expanded").to_frame()
    counts = expected.groupby("topic")["doc"].size()
    assert dict(zip(frame["topic"], frame["judged"], strict=True)) == counts.to_dict()
    relevant = (expected["grade"] > 0).groupby(expected["topic"]).sum()
    assert dict(zip(frame["topic"], frame["relevant"], strict=True)) == relevant.to_dict()


def test_reusability_scatter_and_taus(seeded: Seeded) -> None:
    from scipy import stats

    from tcdb import api
    from tcdb.scoring.scores import score_table

    last = seeded.labels[-1]
    at = open_page("reusability", collection=COLLECTION, snapshot=last, measure="AP")
    a = score_table(Database(),
                    COLLECTION, last, "original", ["AP"], compute=False).set_index("run")
    b = score_table(Database(),
                    COLLECTION, last, "expanded", ["AP"], compute=False).set_index("run")
    runs = chart_with(at, "run", "score_a", "score_b")
    assert set(runs["run"]) == set(seeded.systems)
    for row in runs.itertuples(index=False):
        assert row.score_a == pytest.approx(a.loc[row.run, "value"])
        assert row.score_b == pytest.approx(b.loc[row.run, "value"])
    metrics = {m.label: m.value for m in at.metric}
    tau_b = stats.kendalltau(a["value"], b.loc[a.index, "value"]).statistic
    assert metrics["τ-b"] == f"{tau_b:.3f}"
    topic_tau = chart_with(at, "topic", "tau", "n_runs")
    assert set(topic_tau["topic"]) == set(seeded.topics[last])
    counts = chart_with(at, "run", "unjudged_top_k", "new_relevant_top_k")
    report = api.reusability(COLLECTION, last, qrels="original", vs="expanded", measures=["AP"],
                             depth=100, compute=False).measures["AP"]
    want = {r.run: (r.unjudged_top_k, r.new_relevant_top_k) for r in report.runs}
    got = {r.run: (r.unjudged_top_k, r.new_relevant_top_k) for r in counts.itertuples()}
    assert got == want
    assert (counts["new_relevant_top_k"] <= counts["unjudged_top_k"]).all()
    assert counts["new_relevant_top_k"].sum() > 0  # the pool found relevant documents


def test_reusability_leave_out(seeded: Seeded) -> None:
    """The page shows `tcdb report leave-out` as the report computes it, group by group."""
    report = seeded.extra["leave_out"]
    at = open_page("reusability", collection=COLLECTION, snapshot=seeded.labels[-1],
                   measure="AP", qrels="original", leave_out="1", by="group",
                   pool_depth=str(report.depth))
    tables = {frozenset(t.value["run"]): t.value for t in at.dataframe
              if "score_full" in t.value.columns}
    text = " ".join(m.value for m in at.markdown)
    for group in report.measures["AP"].groups:
        want = {r.run: (r.score_full, r.score_reduced) for r in group.runs}
        shown = tables[frozenset(want)]
        for row in shown.itertuples(index=False):
            assert (row.score_full, row.score_reduced) == pytest.approx(want[row.run])
        assert f"τ-b = {group.tau_b:.3f}" in text


def test_pools_sizes_and_export(seeded: Seeded) -> None:
    from tcdb.api import pool_show
    from tcdb.pools import pool_documents

    at = open_page("pools", collection=COLLECTION)
    pools = table_with(at, "name", "status", "n_documents")
    assert pools["name"].tolist() == [seeded.pool]
    assert pools.loc[0, "n_documents"] == seeded.extra["pool_size"]
    per_topic = chart_with(at, "topic", "n_documents", "n_judged")
    expected = {t: len(d) for t, d in pool_documents(Database(), seeded.pool).items()}
    assert dict(zip(per_topic["topic"], per_topic["n_documents"], strict=True)) == expected
    assert (per_topic["n_judged"] == per_topic["n_documents"]).all()  # every batch judged
    assert pools["judged_fraction"].tolist() == [1.0]
    # The runs the pool was built from, with whether each contributed to the original qrels.
    from tcdb.runs import list_runs

    pooled = table_with(at, "run", "n_pooled", "unique", "contributed")
    flags = {r["run"]: bool(r["contributed"]) for r in list_runs(Database(),
                                                                 COLLECTION, seeded.labels[-1])}
    detail = pool_show(seeded.pool)
    assert pooled["run"].tolist() == [r.run for r in detail.runs]
    assert {r.run: bool(r.contributed) for r in pooled.itertuples()} == {
        r.run: flags[r.run] for r in detail.runs}
    assert "⬇ Blind pool (qrels template: topic 0 docid)" in downloads(at)


def test_pool_export_is_blind(seeded: Seeded) -> None:
    from tcdb.dashboard import data
    from tcdb.pools import pool_documents

    text = data.pool_export(data.database_url(), seeded.pool)
    lines = [line.split() for line in text.splitlines()]
    assert all(len(parts) == 3 and parts[1] == "0" for parts in lines)  # a qrels template
    expected = {(t, d) for t, docs in pool_documents(Database(), seeded.pool).items() for d in docs}
    assert {(p[0], p[2]) for p in lines} == expected
    assert not any(s in text for s in seeded.systems)


def test_compare_significance_equals_the_report(seeded: Seeded) -> None:
    from tcdb import api

    label = seeded.labels[0]
    runs = seeded.systems[:3]
    at = open_page("compare", collection=COLLECTION, snapshot=label, measure="P@10",
                   runs=",".join(runs), correction="bonferroni")
    report = api.compare(COLLECTION, label, qrels="original", runs=runs, measure="P@10",
                         correction="bonferroni", compute=False)
    pairs = table_with(at, "run_a", "run_b", "p_t")
    assert len(pairs) == 3
    for got, want in zip(pairs.to_dict("records"), report.pairs, strict=True):
        assert (got["run_a"], got["run_b"]) == (want.run_a, want.run_b)
        assert got["mean_diff"] == pytest.approx(want.mean_diff)
        for key in ("p_t", "p_t_corrected", "p_sign"):
            if getattr(want, key) is None:
                assert pd.isna(got[key])
            else:
                assert got[key] == pytest.approx(getattr(want, key))
    means = chart_with(at, "run", "mean")
    assert dict(zip(means["run"], means["mean"], strict=True)) == pytest.approx(
        {r.run: r.mean for r in report.runs})
    captions = " ".join(c.value for c in at.caption)
    assert "Not applicable" in captions  # graded qrels: several relevant per topic


def test_compare_intervals_effect_sizes_and_heat_map(seeded: Seeded) -> None:
    """Means with the report's bootstrap intervals, each pair's effect size (Cohen's d_z from
    the per-topic scores), and the significance matrix: both orders of every pair."""
    from tcdb import api
    from tcdb.api import per_topic_scores
    from tcdb.dashboard.data import BOOTSTRAP

    label, runs = seeded.labels[0], seeded.systems[:4]
    at = open_page("compare", collection=COLLECTION, snapshot=label, measure="AP",
                   runs=",".join(runs), correction="holm")
    report = api.compare(COLLECTION, label, qrels="original", runs=runs, measure="AP",
                         correction="holm", compute=False, bootstrap=BOOTSTRAP)
    means = chart_with(at, "run", "mean", "ci_low", "ci_high").set_index("run")
    for run in report.runs:
        row = means.loc[run.run]
        assert (row.ci_low, row.ci_high) == pytest.approx((run.ci_low, run.ci_high))
        assert row.ci_low <= run.mean <= row.ci_high
    scores = per_topic_scores(COLLECTION, label, qrels="original", measure="AP", runs=runs,
                              compute=False).to_frame()
    wide = scores.pivot_table(index="topic", columns="run", values="value").reindex(
        columns=runs).fillna(0.0)
    pairs = table_with(at, "run_a", "run_b", "effect_size", "diff_ci_low")
    for pair in pairs.itertuples(index=False):
        diff = wide[pair.run_a] - wide[pair.run_b]
        assert pair.effect_size == pytest.approx(diff.mean() / diff.std(ddof=1))
        assert pair.diff_ci_low <= pair.mean_diff <= pair.diff_ci_high
    matrix = chart_with(at, "row", "column", "difference", "significance")
    assert len(matrix) == 2 * len(report.pairs)
    for want in report.pairs:
        cells = matrix.set_index(["row", "column"])
        ab, ba = cells.loc[(want.run_a, want.run_b)], cells.loc[(want.run_b, want.run_a)]
        assert ab["difference"] == pytest.approx(want.mean_diff) == -ba["difference"]
        p = want.p_t_corrected
        assert ab["significance"] == ("p ≥ 0.05" if p is None or p >= 0.05 else
                                      "p < 0.001" if p < 1e-3 else
                                      "p < 0.01" if p < 1e-2 else "p < 0.05")


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


def test_every_page_works_as_the_read_only_role(seeded: Seeded, seeded_url: tuple[str, Seeded],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL the dashboard works as a role that can only SELECT (`tcdb db
    grant-readonly ROLE`): every page shows what it shows the database's owner, no error."""
    from tests.databases import read_only_role

    if not (url := seeded_url[0]).startswith("postgresql"):
        pytest.skip("roles are PostgreSQL's; the dashboard opens a SQLite file read-only")
    visits: dict[str, dict[str, str]] = {
        "overview": {}, "drift": {"collection": COLLECTION}, "pools": {"collection": COLLECTION},
        "persistence": {"collection": COLLECTION, "pivot": "bm25", "measure": "nDCG@10",
                        "system": seeded.systems[1]},
        "reusability": {"collection": COLLECTION, "snapshot": seeded.labels[-1],
                        "measure": "AP", "leave_out": "1"},
        "compare": {"collection": COLLECTION, "snapshot": seeded.labels[0], "measure": "AP",
                    "runs": ",".join(seeded.systems[:3])},
        "judges": {"collection": COLLECTION, "snapshot": seeded.labels[-1], "qrels": "original",
                   "vs": "expanded", "measure": "AP"},
        "source_bias": {"collection": COLLECTION},
        "literature": {"collection": COLLECTION, "metric": "nDCG@10", "reference": "0.45"},
        "diff_runs": {"collection": COLLECTION, "snapshot": seeded.labels[0],
                      "run_a": seeded.systems[0], "run_b": seeded.systems[1],
                      "measure": "AP"},
    }
    assert set(visits) == set(PAGES)

    def shown(at: Any) -> tuple[int, list[list[str]], list[str]]:
        problems = [e.value for e in at.error] + [w.value for w in at.warning]
        return len(charts(at)), [list(t.value.columns) for t in at.dataframe], problems

    owner = {page: shown(open_page(page, **params)) for page, params in visits.items()}
    with read_only_role(url) as reader:
        monkeypatch.setenv("TCDB_DATABASE_URL", reader)
        for page, params in visits.items():
            clear_cache()
            got = shown(open_page(page, **params))
            assert got == owner[page] and got[0] >= 1 and not got[2], (page, got)


def test_compose_serves_the_dashboard_on_every_interface() -> None:
    """… through `tcdb dashboard --address` (a STREAMLIT_SERVER_ADDRESS variable would lose)."""
    import yaml

    from tcdb.dashboard.launch import streamlit_command

    compose = yaml.safe_load((Path(__file__).parents[1] / "docker-compose.yml").read_text())
    service = compose["services"]["dashboard"]
    assert service["command"].split()[:2] == ["tcdb", "dashboard"]
    assert "--address 0.0.0.0" in service["command"]
    assert not any(k.startswith("STREAMLIT_SERVER") for k in service.get("environment", {}))
    command = streamlit_command(8501, "0.0.0.0")
    assert command[command.index("--server.address") + 1] == "0.0.0.0"


def test_dashboard_command_line(database_url: str) -> None:
    from tcdb.dashboard.launch import APP as app_path
    from tcdb.dashboard.launch import dashboard_env, read_only_url, streamlit_command

    command = streamlit_command(8765)
    assert command[1:4] == ["-m", "streamlit", "run"] and command[4] == str(app_path)
    assert command[command.index("--server.port") + 1] == "8765"
    assert command[command.index("--server.headless") + 1] == "true"
    options = dict(zip(command[5::2], command[6::2], strict=True))  # a tool, not an app store
    assert options["--client.toolbarMode"] == "viewer" and options["--client.showErrorLinks"] \
        == "false" and options["--client.showErrorDetails"] == "full"
    assert "type" in streamlit_command(8765, "0.0.0.0")  # other machines see no traceback
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
