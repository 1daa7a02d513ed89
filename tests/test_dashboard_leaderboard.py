"""The Compare page's leaderboard section: mean by submission date, the SOTA chain as a step
line and its significant steps, drawn from `tcdb report leaderboard` (both databases)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from tcdb.operations import Database
from tests import leaderboard_data
from tests.dashboard_pages import chart_with, charts, clear_cache, open_page


@pytest.fixture
def marco(db: str, tmp_path: Path) -> Path:
    from tcdb.scoring.evaluate import evaluate

    leaderboard_data.build(tmp_path)
    evaluate(Database(), "marco", "dev", "original", ["RR"])  # the dashboard only reads
    clear_cache()
    return tmp_path


def test_leaderboard_chart_equals_the_report(marco: Path) -> None:
    from tcdb import api

    at = open_page("compare", collection="marco", snapshot="dev", measure="RR",
                   runs="bm25,bert", correction="holm")
    report = api.leaderboard("marco", "dev", measure="RR", compute=False)
    frame = chart_with(at, "run", "submitted", "state_of_the_art", "kind")
    assert frame["run"].tolist() == ["bm25", "bert", "t5", "greedy"]
    assert frame["mean"].tolist() == pytest.approx([r.mean for r in report.runs])
    assert frame["kind"].tolist() == ["first SOTA"] + ["new SOTA, significant"] * 3
    assert frame["state_of_the_art"].is_monotonic_increasing
    spec = next(spec for spec, frames in charts(at)
                if any("state_of_the_art" in f.columns for f in frames))
    assert "width" not in spec  # as wide as the page's column: no horizontal scroll
    captions = " ".join(c.value for c in at.caption)
    assert "3 of 3 steps significant" in captions


def test_runs_without_dates_say_so(marco: Path) -> None:
    from tcdb.api import run_import
    from tests.builders import write_run_file

    run_import("marco", "dev", [write_run_file(marco / "runs", "nodate",
                                              [("1", "r1", 2.0), ("2", "n5", 1.0)])])
    from tcdb.scoring.evaluate import evaluate

    evaluate(Database(), "marco", "dev", "original", ["RR"])
    clear_cache()
    at = open_page("compare", collection="marco", snapshot="dev", measure="RR",
                   runs="bm25,bert")
    # as a reader sees them: the page escapes Markdown in names from the data (widgets.plain)
    captions = re.sub(r"\\(.)", r"\1", " ".join(c.value for c in at.caption))
    assert "Not available" in captions and "without a submitted date: nodate" in captions
    assert not any("state_of_the_art" in f.columns for _, frames in charts(at) for f in frames)
    assert isinstance(chart_with(at, "run", "mean"), pd.DataFrame)  # the rest still shows
