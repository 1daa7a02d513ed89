"""Issue 43, build 3: the organisers' ranking correlations from a LongEval-shaped results table.

The table (team, run, snapshot and one column per measure, four snapshots, ties included, one
run name under two teams, a judged-only nDCG column) is written here, read back with the `csv`
module alone, and τ-b and Pearson's r with their p are computed by scipy on its raw figures for
every pair of snapshots; `tcdb results import` then stores it and `tcdb report rankings --from
results --json` must give the same numbers, for every pair (`--pairs all`) and against the first
(`--pairs first`, LongEval's reference snapshot), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from pathlib import Path

import pytest
from scipy import stats

COLLECTION = "longeval-web"
SNAPSHOTS = ["2024-11", "2024-12", "2025-01", "2025-02"]
MEASURES = ["nDCG@10", "nDCG(judged_only=True)@10", "P@10"]
RUNS = [("CIR", "bm25"), ("CIR", "run2"), ("OWS", "bm25"), ("OWS", "colbert"),
        ("SEUPD", "monoT5"), ("SEUPD", "splade"), ("TUW", "rm3"), ("TUW", "dense")]


def _write_table(path: Path) -> None:
    """One row per team × run × snapshot; in every snapshot two runs tie on nDCG@10 and P@10
    (P@10 moves in tenths, so it ties often)."""
    rng = random.Random(43)
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["team", "run", "snapshot", *MEASURES])
        for snapshot in SNAPSHOTS:
            for k, (team, run) in enumerate(RUNS):
                ndcg = 0.3125 if k in (2, 5) else round(rng.uniform(0.1, 0.6), 4)
                judged = round(min(1.0, ndcg + rng.uniform(0.0, 0.2)), 4)
                writer.writerow([team, run, snapshot, ndcg, judged, rng.randint(1, 6) / 10])


def _read_table(path: Path) -> dict[str, dict[str, dict[tuple[str, str], float]]]:
    """measure → snapshot → (team, run) → figure, with the csv module alone."""
    out: dict[str, dict[str, dict[tuple[str, str], float]]] = {m: {} for m in MEASURES}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            for measure in MEASURES:
                out[measure].setdefault(row["snapshot"], {})[(row["team"], row["run"])] = \
                    float(row[measure])
    return out


@pytest.mark.parametrize("which", ["all", "first"])
def test_results_table_rankings_equal_scipy_on_the_csv(db: str, tmp_path: Path, cli,
                                                        which: str) -> None:
    path = tmp_path / "longeval-2025-web.csv"
    _write_table(path)
    raw = _read_table(path)
    assert any(len(set(by.values())) < len(by) for by in raw["nDCG@10"].values())  # ties
    code, _, err = cli("collection", "add", COLLECTION)
    assert code == 0, err
    code, out, err = cli("results", "import", COLLECTION, path, "--register-snapshots",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["n_rows"] == len(RUNS) * len(SNAPSHOTS)

    args = ["report", "rankings", COLLECTION, "--from", "results", "--pairs", which]
    for measure in MEASURES:
        code, out, err = cli(*args, "-m", measure, "--json")
        assert code == 0, err
        body = json.loads(out)
        assert (body["source"], body["snapshots"], body["pairs"]) == ("results", SNAPSHOTS,
                                                                     which)
        figures = body["measures"][measure]
        assert not figures["skipped"]
        expected = (list(itertools.combinations(SNAPSHOTS, 2)) if which == "all" else
                    [(SNAPSHOTS[0], later) for later in SNAPSHOTS[1:]])
        assert [(p["earlier"], p["later"]) for p in figures["pairs"]] == expected
        for pair in figures["pairs"]:
            x = [raw[measure][pair["earlier"]][key] for key in RUNS]
            y = [raw[measure][pair["later"]][key] for key in RUNS]
            tau_b = stats.kendalltau(x, y, variant="b")
            r = stats.pearsonr(x, y)
            assert pair["n_systems"] == len(RUNS) and pair["n_topics"] is None
            assert pair["against_first"] == (pair["earlier"] == SNAPSHOTS[0])
            assert pair["tau_b"] == pytest.approx(tau_b.statistic, abs=1e-12)
            assert pair["p_tau_b"] == pytest.approx(tau_b.pvalue, abs=1e-12)
            assert pair["pearson_r"] == pytest.approx(r.statistic, abs=1e-12)
            assert pair["p_pearson_r"] == pytest.approx(r.pvalue, abs=1e-12)

    code, out, err = cli(*args, "-m", "nDCG@10")  # the table: the same r, said as Pearson r
    assert code == 0, err
    assert "Pearson r" in out and "published results" in out
    rows = [line.split() for line in out.split("largest")[0].splitlines() if line[:4].isdigit()]
    assert len(rows) == (6 if which == "all" else 3)
    for row in rows:
        x = [raw["nDCG@10"][row[0]][key] for key in RUNS]
        y = [raw["nDCG@10"][row[1]][key] for key in RUNS]
        assert float(row[6]) == pytest.approx(stats.pearsonr(x, y).statistic, abs=5e-5)
