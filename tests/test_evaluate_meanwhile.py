"""`evaluate` shows the means of the runs it evaluated. A run imported by another process while
it scored (the race `tests/reliability/test_concurrency.py` runs for real) has no scores yet:
it is not among the means, and nothing fails on its missing values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import build_snapshot, write_run_file

DOCS = {f"d{i}": f"text {i}" for i in range(6)}
TOPICS = {"1": "one", "2": "two"}
QRELS = [("1", "d0", 1), ("1", "d1", 0), ("2", "d2", 1)]


def test_a_run_imported_while_evaluating_is_not_among_the_means(
        db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ir_measures

    import tcdb.scoring.evaluate as scoring
    from tcdb import api
    from tcdb.api import run_import

    build_snapshot(tmp_path, "c", "s1", DOCS, TOPICS, QRELS)
    rows = [("1", "d0", 2.0), ("1", "d1", 1.0), ("2", "d3", 2.0), ("2", "d2", 1.0)]
    run_import("c", "s1", [write_run_file(tmp_path / "runs", "a", rows)])
    late = write_run_file(tmp_path / "runs", "late", rows[::-1])
    store = scoring.evaluate

    def then_an_import(*args: Any, **kwargs: Any) -> Any:
        report = store(*args, **kwargs)
        run_import("c", "s1", [late])  # another process, between scoring and reading the means
        return report

    monkeypatch.setattr(scoring, "evaluate", then_an_import)
    result = api.evaluate("c", "s1", measures=["AP"])
    assert [(m.run, m.measure, m.source) for m in result.means] == [("a", "AP", "ir_measures")]
    qrels = [ir_measures.Qrel(t, d, g) for t, d, g in QRELS]
    run = [ir_measures.ScoredDoc(t, d, s) for t, d, s in rows]
    assert result.means[0].value == pytest.approx(ir_measures.calc_aggregate(
        [ir_measures.AP], qrels, run)[ir_measures.AP])
