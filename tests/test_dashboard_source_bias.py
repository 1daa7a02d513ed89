"""The Source bias page shows what `tcdb report source-bias` computes, on both databases."""

from __future__ import annotations

from pathlib import Path

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
