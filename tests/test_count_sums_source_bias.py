"""Source bias sums a count measure over topics (trec_eval's `all` line): each run's figure
under the human and the LLM qrels equals ir_measures' `calc_aggregate` on the qrels written out
by hand (`tests.source_bias_corpus`), and Relative Δ is unchanged by the scale."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest

from tests.source_bias_corpus import HUMAN_QRELS, LLM_QRELS, RUNS


def test_source_bias_sums_counts(twins: Path) -> None:
    from tcdb import api

    name = "NumRet(rel=1)"
    report = api.source_bias("cocktail", "s1", measures=[name], bootstrap=0)
    figures = report.measures[name]
    assert figures.aggregate == "sum"
    measure = ir_measures.parse_measure(name)
    for row in figures.runs:
        run = {t: {d: 10.0 - r for r, d in enumerate(docs)}
               for t, docs in RUNS[row.run].items()}
        human = ir_measures.calc_aggregate([measure], HUMAN_QRELS, run)[measure]
        llm = ir_measures.calc_aggregate([measure], LLM_QRELS, run)[measure]
        assert row.human == pytest.approx(human, abs=1e-12)
        assert row.llm == pytest.approx(llm, abs=1e-12)
        if human + llm:
            assert row.relative_delta == pytest.approx(
                (human - llm) / ((human + llm) / 2) * 100, abs=1e-9)


def test_source_bias_numrel_counts_unanswered_topics(twins: Path) -> None:
    """NumRel under `trec_eval -c`: a judged topic the run did not answer adds its relevant
    documents of that source's qrels. Counted by hand from HUMAN_QRELS and LLM_QRELS: 2 human
    (h1, h2) and 3 LLM (l1, 7-llm, l2), whatever the run retrieves."""
    from tcdb import api
    from tests.builders import write_run_file

    one_topic = write_run_file(twins / "runs", "topic-1-only",
                               [("1", "h1", 2.0), ("1", "l1", 1.0)])
    api.run_import("cocktail", "s1", [one_topic])
    report = api.source_bias("cocktail", "s1", measures=["NumRel"], bootstrap=0)
    rows = {row.run: row for row in report.measures["NumRel"].runs}
    assert (rows["topic-1-only"].human, rows["topic-1-only"].llm) == (2, 3)
    assert all((row.human, row.llm) == (2, 3) for row in rows.values())
