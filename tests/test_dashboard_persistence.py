"""The persistence page: its figures equal the report's, it reads as a lab would show it, and
each snapshot can have its own qrels set, as the CLI does (the original judgments of the first
snapshot against the expanded ones of a later snapshot).

Run through `streamlit.testing.v1.AppTest` on the seeded collection (`tests.builders`), whose
last snapshot alone has an `expanded` qrels set, evaluated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.builders import COLLECTION, Seeded
from tests.dashboard_pages import chart_with, charts, open_page, table_with

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


@pytest.fixture
def seeded(seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch) -> Seeded:
    import streamlit as st

    url, info = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    st.cache_data.clear()
    return info


def open_persistence(**params: str) -> Any:
    """The app on the persistence page with these query parameters; fails on any exception."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page("views/persistence.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: Any) -> pd.DataFrame:
    return next(e.value for e in at.dataframe if {"system", "ER", "ΔRI"} <= set(e.value.columns))


def test_each_snapshot_has_its_own_qrels_set(seeded: Seeded) -> None:
    from tcdb.api import persistence

    first, last = seeded.labels[0], seeded.labels[-1]
    at = open_persistence(collection=COLLECTION, pivot="bm25", measure="nDCG@10",
                          snapshots=f"{first},{last}")
    pickers = {s.label: s for s in at.selectbox}
    assert pickers[f"Qrels · {first}"].options == ["original"]
    assert {"original", "expanded"} <= set(pickers[f"Qrels · {last}"].options)
    assert pickers[f"Qrels · {last}"].value == "original"  # the designated original set

    pickers[f"Qrels · {last}"].set_value("expanded")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.query_params[f"qrels_{last}"] == "expanded"
    shown = table(at)
    mixed = persistence(COLLECTION, snapshots=[first, last], pivot="bm25", measures=["nDCG@10"],
                        qrels={first: "original", last: "expanded"}, compute=False)
    plain = persistence(COLLECTION, snapshots=[first, last], pivot="bm25", measures=["nDCG@10"],
                        compute=False)
    records = {r.system: r for r in mixed.measures["nDCG@10"].systems}
    assert set(shown["system"]) == set(records)
    for row in shown.itertuples(index=False):
        assert pytest.approx(records[row.system].arp[last]) == row.ARP
        assert pytest.approx(records[row.system].result_delta[last]) == row.RΔ
    before = {r.system: r.arp[last] for r in plain.measures["nDCG@10"].systems}
    assert any(records[s].arp[last] != pytest.approx(before[s]) for s in records)
    captions = " ".join(c.value for c in at.caption)
    assert f"{first}: `original`, {last}: `expanded`" in captions


def test_a_link_naming_one_qrels_set_applies_it_where_it_exists(seeded: Seeded) -> None:
    first, last = seeded.labels[0], seeded.labels[-1]
    at = open_persistence(collection=COLLECTION, pivot="bm25", measure="AP",
                          snapshots=f"{first},{last}", qrels="expanded")
    picks = {s.label: s.value for s in at.selectbox}
    assert picks[f"Qrels · {first}"] == "original" and picks[f"Qrels · {last}"] == "expanded"
    assert set(table(at)["system"]) == set(seeded.systems)  # the pivot included


def test_persistence_table_equals_the_report(seeded: Seeded) -> None:
    from tcdb.api import persistence

    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="nDCG@10",
                   snapshots=",".join(seeded.labels))
    report = persistence(COLLECTION, snapshots=seeded.labels, pivot="bm25",
                         measures=["nDCG@10"], compute=False)
    records = {r.system: r for r in report.measures["nDCG@10"].systems}
    table = table_with(at, "system", "ER", "ΔRI", "p")
    assert set(table["system"]) == set(seeded.systems)
    for row in table.itertuples(index=False):
        record = records[row.system]
        later = row.to
        assert pytest.approx(record.result_delta[later]) == row.RΔ
        if record.er[later] is not None:
            assert pytest.approx(record.er[later]) == row.ER
        if row.system == "bm25":  # the pivot: ER and ΔRI are 0/0, shown empty
            assert record.er[later] is None and record.delta_ri[later] is None
            assert pd.isna(row.ER) and pd.isna(row.ΔRI)
        else:
            assert pytest.approx(record.delta_ri[later]) == row.ΔRI
    arp = chart_with(at, "system", "snapshot", "arp")
    for row in arp.itertuples(index=False):
        assert row.arp == pytest.approx(records[row.system].arp[row.snapshot])
    points = chart_with(at, "system", "to", "ER", "ΔRI")
    assert set(points["system"]) == set(seeded.systems) - {"bm25"}  # the pivot is not plotted
    for row in points.itertuples(index=False):
        assert pytest.approx(records[row.system].er[row.to]) == row.ER
    ideal = chart_with(at, "_er", "ΔRI", "ideal")
    assert ideal.to_dict("records") == [{"_er": 1.0, "ΔRI": 0.0, "ideal": "pivot bm25"}]
    spec = next(s for s, fs in charts(at) if any("ideal" in f.columns for f in fs))
    shapes = [layer["encoding"]["shape"] for layer in _layers(spec)
              if "shape" in layer.get("encoding", {})]
    assert {"field": "ideal", "type": "nominal"}.items() <= next(
        s for s in shapes if s.get("field") == "ideal").items()  # the pivot's cross: in a legend
    assert any(s.get("field") == "to" for s in shapes)  # snapshots told apart by shape
    # every system named beside its point (at its last snapshot)
    names = set().union(*(set(f["_name"]) for _, fs in charts(at) for f in fs
                          if {"_name", "_label_y", "ER"} <= set(f.columns)))
    assert {n.split(" (ER")[0] for n in names} == set(seeded.systems) - {"bm25"}


def _layers(spec: dict) -> list[dict]:
    """Every unit layer of a (nested) layered Vega-Lite spec."""
    found = []
    for layer in spec.get("layer", []):
        found += _layers(layer) if "layer" in layer else [layer]
    return found


def test_persistence_reads_as_a_lab_would_show_it(seeded: Seeded) -> None:
    """x labels level, lines named at their ends (the pivot says so), and the lines that say
    how to read RΔ (which minus which), p (which test) and an ER below the pivot."""
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="nDCG@10",
                   snapshots=",".join(seeded.labels))
    first = seeded.labels[0]
    text = " ".join(c.value for c in at.caption)
    assert f"**RΔ** = ARP in {first} − ARP in the later snapshot: positive means" in text
    assert "unpaired Student t-test" in text and "scipy.stats.ttest_ind" in text
    assert "ER reads backwards below the pivot" in text
    arp_spec = next(s for s, fs in charts(at) if any("arp" in f.columns for f in fs))
    assert _layers(arp_spec)[0]["encoding"]["x"]["axis"]["labelAngle"] == 0
    ends = next(f for _, fs in charts(at) for f in fs
                if {"_name", "_label_y", "arp"} <= set(f.columns))
    assert "bm25 (pivot)" in set(ends["_name"])


def test_persistence_per_topic_deltas(seeded: Seeded) -> None:
    from tcdb.api import per_topic_deltas

    system = seeded.systems[1]
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="AP",
                   system=system)
    deltas = pd.concat([f for _, fs in charts(at) for f in fs
                        if {"topic_key", "delta", "pivot_score"} <= set(f.columns)])
    assert set(deltas["snapshot"]) == set(seeded.labels)  # one chart per snapshot
    expected = per_topic_deltas(COLLECTION, snapshots=seeded.labels, pivot="bm25",
                                measures=["AP"], compute=False).to_frame()
    expected = expected[expected["system"] == system]
    assert len(deltas) == len(expected)
    merged = deltas.merge(expected, on=["snapshot", "topic"], suffixes=("", "_core"))
    assert np.allclose(merged["delta"], merged["delta_core"])
