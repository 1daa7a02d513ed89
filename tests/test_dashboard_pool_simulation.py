"""The Pools page's simulation (`tcdb pool simulate` on demand), through AppTest on the seeded
collection: nothing runs until asked; then the chart and the table show exactly the report's
rows, also as the read-only role on PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import COLLECTION, Seeded
from tests.dashboard_pages import chart_with, clear_cache, open_page, table_with


@pytest.fixture
def seeded(seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch) -> Seeded:
    url, info = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    clear_cache()
    return info


def _simulate(at: Any) -> Any:
    at.text_input(key="sim_budgets").set_value("20,40")
    at.multiselect(key="sim_strategies").set_value(["depth", "mtf"])
    submit = next(b for b in at.button if b.proto.label == "Simulate")
    submit.click().run()
    assert not at.exception, at.exception
    return at


def test_simulation_shows_the_report(seeded: Seeded) -> None:
    from tcdb import api
    from tcdb.api import pool_show

    at = open_page("pools", collection=COLLECTION)
    assert not [t for t in at.dataframe if "relevant_found" in t.value.columns]
    at = _simulate(at)
    snapshot = pool_show(seeded.pool).snapshot
    qrels = at.selectbox(key="sim_qrels").value
    assert qrels == "original"  # offered first
    report = api.pool_simulation(COLLECTION, snapshot, qrels=qrels, budgets=[20, 40],
                                 strategies=["depth", "mtf"])
    rows = [r.model_dump() for r in report.rows]
    table = table_with(at, "strategy", "budget", "relevant_found", "tau_b")
    assert table[["strategy", "budget", "relevant_found"]].to_dict("records") == [
        {k: r[k] for k in ("strategy", "budget", "relevant_found")} for r in rows]
    chart = chart_with(at, "strategy", "budget", "tau")
    solid = chart[chart["figure"] == "τ-b, all runs pooled"]
    assert sorted(zip(solid["strategy"], solid["budget"], solid["tau"], strict=True)) == sorted(
        (r["strategy"], r["budget"], r["tau_b"]) for r in rows
        if r["tau_b"] is not None)


def test_simulation_as_the_read_only_role(seeded: Seeded, seeded_url: tuple[str, Seeded],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.databases import read_only_role

    if not (url := seeded_url[0]).startswith("postgresql"):
        pytest.skip("roles are PostgreSQL's; the dashboard opens a SQLite file read-only")
    owner = table_with(_simulate(open_page("pools", collection=COLLECTION)),
                       "strategy", "relevant_found")
    with read_only_role(url) as reader:
        monkeypatch.setenv("TCDB_DATABASE_URL", reader)
        clear_cache()
        at = _simulate(open_page("pools", collection=COLLECTION))
        assert not at.warning and not at.error
        got = table_with(at, "strategy", "relevant_found")
        assert got.to_dict("records") == owner.to_dict("records")
