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
