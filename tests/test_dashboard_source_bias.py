"""The Source bias page shows what `tcdb report source-bias` computes, on both databases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.dashboard_pages import chart_with, clear_cache, open_page


def test_the_page_draws_the_report(twins: Path) -> None:  # noqa: F811
    from tcdb import api

    clear_cache()
    at = open_page("source_bias", collection="cocktail", snapshot="s1", measure="nDCG@1")
    assert at.title[0].value == "Source bias"
    scatter = chart_with(at, "run", "effectiveness", "relative_delta")
    report = api.source_bias("cocktail", "s1", measures=["nDCG@1"], bootstrap=0)
    expected = {r.run: (r.effectiveness, r.relative_delta)
                for r in report.measures["nDCG@1"].runs}
    assert {r.run: (r.effectiveness, r.relative_delta)
            for r in scatter.itertuples(index=False)} == expected
    assert dict(zip(scatter["run"], scatter["relative_delta"], strict=True)) == {
        "human-first": 200.0, "indifferent": 0.0, "llm-first": -200.0}
    documents = chart_with(at, "snapshot", "source", "documents")
    assert documents.to_dict("records") == [
        {"snapshot": "s1", "source": "human", "documents": 3},
        {"snapshot": "s1", "source": "llm", "documents": 3}]
    first_stage = [t.value for t in at.dataframe if "first_stage" in t.value.columns
                   and "delta_first_stage" in t.value.columns]
    assert first_stage and first_stage[0]["change"].tolist() == [200.0]


def test_a_collection_without_labels_says_how_to_label(db: str, tmp_path: Path) -> None:
    from tests.builders import build_snapshot

    build_snapshot(tmp_path, "plain", "s", {"d1": "text"}, {"1": "query"}, [("1", "d1", 1)])
    clear_cache()
    at = open_page("source_bias", collection="plain")
    assert any("--source-labels" in i.value for i in at.info)


def test_the_table_says_what_the_cli_says(twins: Path, cli: Any) -> None:  # noqa: F811
    """The page's table has the CLI's column names (`effectiveness`, `Relative Δ %`, `CI low`,
    `CI high`, `p (t)`), its p-values as the CLI prints them, and the CLI's legend line — the
    p-value's test in words — as a visible caption, not only in a column's hover help."""
    from tcdb import api
    from tcdb.vocabulary import format_p

    clear_cache()
    at = open_page("source_bias", collection="cocktail", snapshot="s1", measure="nDCG@1")
    code, out, err = cli("report", "source-bias", "cocktail", "s1", "-m", "nDCG@1")
    assert code == 0, err
    header = next(line for line in out.splitlines() if "effectiveness" in line)
    table = next(t for t in at.dataframe if "p_t" in t.value.columns)
    labels = {key: spec["label"] for key, spec in json.loads(table.proto.columns).items()
              if "label" in spec}
    assert labels == {"run": "run", "effectiveness": "effectiveness", "human": "nDCG@1 human",
                      "llm": "nDCG@1 llm", "relative_delta": "Relative Δ %",
                      "ci_low": "CI low", "ci_high": "CI high", "p_t": "p (t)"}
    for label in labels.values():
        assert label in header, (label, header)
    legend = next(line for line in out.splitlines() if line.startswith("CI low / CI high:"))
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert legend in captions, (legend, captions)  # the same line, with the test's name
    assert any("p (t): paired t-test" in c for c in captions)
    report = api.source_bias("cocktail", "s1", measures=["nDCG@1"])
    for run in report.measures["nDCG@1"].runs:
        assert format_p(run.p_t) in out  # the CLI prints the one p-value rule
