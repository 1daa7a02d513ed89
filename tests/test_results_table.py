"""Results tables (issue 33, item 2): a LongEval-shaped table (team × run × snapshot, one column
per ir_measures aggregate) imported into the stored results, its bad rows refused with
file:line:reason and nothing written, its figures listed and followed over snapshots, and the
system rankings across snapshots computed from it — τ-b and τ-c checked against
`scipy.stats.kendalltau` run by this test on the raw table, not through tcdb.
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tcdb import api
from tcdb.errors import ConflictError, FieldError, InputError, NotFoundError
from tests.builders import build_snapshot

COLLECTION = "longeval-web"
SNAPSHOTS = ["2023-03", "2023-04", "2023-05"]
FORMULA = "=HYPERLINK(\"http://127.0.0.1:9\")"
HTML = "<img src=x onerror=alert(1)>"
# Two groups each with a run1: two systems. Hostile team and run names are data.
RUNS = [("CIR", "run1"), ("CIR", "run2"), ("FADERIC", "run1"), ("FADERIC", "bm25"),
        (FORMULA, "run1"), ("OWS", HTML), ("OWS", "@SUM(1+1)"), ("SEUPD", "monoT5")]
# The table's own spellings: trec_eval's P_10, lower-case map and ndcg_cut_10's sibling.
HEADER = ["team", "run", "snapshot", "nDCG@10", "P_10", "map", "ndcg", "Judged@10", "NumRet"]
CANONICAL = {"nDCG@10": "nDCG@10", "P_10": "P@10", "map": "AP", "ndcg": "nDCG",
             "Judged@10": "Judged@10", "NumRet": "NumRet"}


def _snapshots(tmp_path: Path) -> None:
    for label in SNAPSHOTS:
        build_snapshot(tmp_path, COLLECTION, label, {"d1": "a document"}, {"q1": "a query"})


def _table(tmp_path: Path, name: str = "results.csv", delimiter: str = ",", seed: int = 5
           ) -> Path:
    """A LongEval-shaped results table: one row per team × run × snapshot."""
    rng = np.random.default_rng(seed)
    rows = []
    for snapshot in SNAPSHOTS:
        for k, (team, run) in enumerate(RUNS):
            values = [round(float(v), 4) for v in rng.uniform(0.05, 0.6, size=5)]
            if k in (1, 2):  # a tie in every snapshot: equal means must tie
                values[0] = 0.25
            rows.append([team, run, snapshot, *values, int(rng.integers(100, 1000))])
    path = tmp_path / name
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, delimiter=delimiter)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _raw(path: Path, column: str) -> dict[str, dict[tuple[str, str], float]]:
    """snapshot → (team, run) → the column's value, read with the csv module alone."""
    out: dict[str, dict[tuple[str, str], float]] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["snapshot"], {})[(row["team"], row["run"])] = float(row[column])
    return out


def test_longeval_table_imports_and_its_rankings_match_scipy(db: str, tmp_path: Path) -> None:
    """Into snapshots registered without documents: a results table needs no corpus."""
    api.collection_add(COLLECTION)
    for label in SNAPSHOTS:
        api.snapshot_register(COLLECTION, label)
    path = _table(tmp_path)
    result = api.results_import(COLLECTION, path)
    assert (result.status, result.n_rows, result.n_added) == ("added", 24, 24 * 6)
    assert result.measures == [CANONICAL[h] for h in HEADER[3:]]
    assert result.snapshots == SNAPSHOTS and result.n_new_systems == len(RUNS)
    again = api.results_import(COLLECTION, path)
    assert (again.status, again.n_added, again.n_unchanged) == ("unchanged", 0, 144)

    listed = api.results(COLLECTION, measures=["ndcg@10"])
    assert len(listed.figures) == 24 and listed.tables[0].checksum == result.checksum
    by_name = {(f.team, f.run, f.snapshot): f for f in listed.figures}
    # two groups' run1 are two systems, named group/name where the name is ambiguous
    assert by_name[("CIR", "run1", SNAPSHOTS[0])].system == "CIR/run1"
    assert by_name[("FADERIC", "run1", SNAPSHOTS[0])].system == "FADERIC/run1"
    assert by_name[(FORMULA, "run1", SNAPSHOTS[0])].system == f"{FORMULA}/run1"

    raw = _raw(path, "nDCG@10")
    report = api.ranking_across_snapshots(COLLECTION, measures=["nDCG@10"], source="results")
    figures = report.measures["nDCG@10"]
    assert report.snapshots == SNAPSHOTS
    assert [(p.earlier, p.later) for p in figures.pairs] == list(
        itertools.combinations(SNAPSHOTS, 2))
    for pair in figures.pairs:
        x = [raw[pair.earlier][key] for key in RUNS]
        y = [raw[pair.later][key] for key in RUNS]
        tau_b = stats.kendalltau(x, y, variant="b")
        tau_c = stats.kendalltau(x, y, variant="c")
        assert pair.n_systems == len(RUNS) and pair.n_topics is None
        assert pair.tau_b == pytest.approx(tau_b.statistic, abs=1e-12)
        assert pair.p_tau_b == pytest.approx(tau_b.pvalue, abs=1e-12)
        assert pair.tau_c == pytest.approx(tau_c.statistic, abs=1e-12)
        assert pair.against_first == (pair.earlier == SNAPSHOTS[0])
    # the systems that moved most, with ranks as the raw table gives them (1 = best, ties min)
    first, last = SNAPSHOTS[0], SNAPSHOTS[-1]
    pair = next(p for p in figures.pairs if (p.earlier, p.later) == (first, last))
    label = {("CIR", "run1"): "CIR/run1", ("FADERIC", "run1"): "FADERIC/run1",
             (FORMULA, "run1"): f"{FORMULA}/run1"}
    rank = {s: {k: 1 + sum(v > raw[s][k] for v in raw[s].values()) for k in RUNS}
            for s in (first, last)}
    expected = sorted(((rank[first][k] - rank[last][k], k) for k in RUNS), key=lambda c: (
        -abs(c[0]), rank[last][c[1]], label.get(c[1], c[1][1])))
    moved = [(c.rank_change, c.system) for c in pair.largest_changes]
    assert moved == [(change, label.get(k, k[1])) for change, k in expected if change][:5]
    assert rank[first][("CIR", "run2")] == rank[first][("FADERIC", "run1")]  # 0.25 ties
    frame = report.to_frame()
    assert list(frame["earlier"]) == [p.earlier for p in figures.pairs]
    assert report.to_data()["source"] == "results"


def test_over_time_gives_arp_result_delta_and_longeval_change(db: str, tmp_path: Path) -> None:
    _snapshots(tmp_path)
    path = _table(tmp_path, "results.tsv", delimiter="\t")
    api.results_import(COLLECTION, path)
    raw = _raw_tsv(path, "map")
    report = api.results_over_time(COLLECTION, measures=["AP"])
    first = SNAPSHOTS[0]
    systems = {(r.team, r.run): r for r in report.measures["AP"].systems}
    assert len(systems) == len(RUNS)
    for key, record in systems.items():
        for later in SNAPSHOTS[1:]:
            a, b = raw[first][key], raw[later][key]
            assert record.arp[later] == pytest.approx(b, abs=1e-12)
            assert record.result_delta[later] == pytest.approx(a - b, abs=1e-12)
            assert record.relative_drop[later] == pytest.approx((a - b) / a, abs=1e-12)
            assert record.longeval_change[later] == pytest.approx((b - a) / a, abs=1e-12)
    assert len(report.to_frame()) == len(RUNS) * 2


def _raw_tsv(path: Path, column: str) -> dict[str, dict[tuple[str, str], float]]:
    out: dict[str, dict[tuple[str, str], float]] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out.setdefault(row["snapshot"], {})[(row["team"], row["run"])] = float(row[column])
    return out


BAD = [
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,0.3\nCIR,run1,2023-03,0.4\n", 3,
     "already on line 2"),
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,high\n", 2, "is not a number"),
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,1.5\n", 2, "between 0 and 1"),
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,inf\n", 2, "not a finite number"),
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03\n", 2, "3 fields, the header has 4"),
    ("team,run,snapshot,nDCG@10,notes\nCIR,run1,2023-03,0.3,x\n", 1,
     "column 'notes' is not team, run, snapshot, version nor a measure"),
    ("team,run,snapshot,map,AP\nCIR,run1,2023-03,0.3,0.3\n", 1, "are both AP"),
    ("team,run,nDCG@10\nCIR,run1,0.3\n", 1, "no snapshot column"),
    ("team,run,snapshot,nDCG@10\nCIR,,2023-03,0.3\n", 2, "run ''"),
    ("team,run,snapshot,nDCG@10\nCIR,\x1b[31mrun1,2023-03,0.3\n", 2, "U+001B"),
    ("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,0.3\nCIR,run2,2099-01,0.3\n", 3,
     "snapshot '2099-01' is not a complete snapshot of 'longeval-web' (complete: 2023-03, "
     "2023-04, 2023-05); register the table's snapshots on the way with "
     "--register-snapshots, or first, one by one, with `tcdb snapshot register "
     "longeval-web 2099-01`"),
]


@pytest.mark.parametrize(("text", "line", "reason"), BAD)
def test_bad_rows_name_file_and_line_and_write_nothing(db: str, tmp_path: Path, text: str,
                                                       line: int, reason: str) -> None:
    _snapshots(tmp_path)
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        api.results_import(COLLECTION, path)
    assert caught.value.file == str(path) and caught.value.line == line
    assert reason in caught.value.reason
    assert "\n" not in str(caught.value)
    with pytest.raises(NotFoundError, match="no published results"):
        api.results(COLLECTION)


def test_a_changed_figure_is_refused_unless_replaced(db: str, tmp_path: Path) -> None:
    _snapshots(tmp_path)
    api.results_import(COLLECTION, _table(tmp_path, seed=1))
    other = _table(tmp_path, "corrected.csv", seed=2)
    with pytest.raises(ConflictError, match=r"corrected\.csv:2: .* pass --replace"):
        api.results_import(COLLECTION, other)
    assert api.results(COLLECTION).tables[0].source == "results.csv"
    replaced = api.results_import(COLLECTION, other, replace=True)
    assert replaced.status == "replaced" and replaced.n_replaced > 0
    raw = _raw(other, "P_10")
    values = {(f.team, f.run, f.snapshot): f.value
              for f in api.results(COLLECTION, measures=["P@10"]).figures}
    assert values == {(t, r, s): v for s, by in raw.items() for (t, r), v in by.items()}


def test_fields_name_what_is_wrong(db: str, tmp_path: Path) -> None:
    _snapshots(tmp_path)
    path = _table(tmp_path)
    with pytest.raises(FieldError) as caught:
        api.results_import(COLLECTION, path, snapshot_column="lag")
    assert caught.value.field == "snapshot_column"
    api.results_import(COLLECTION, path)
    with pytest.raises(FieldError) as caught:
        api.ranking_across_snapshots(COLLECTION, measures=["ERR@20"], source="results")
    assert caught.value.field == "measures"
    with pytest.raises(FieldError) as caught:
        api.ranking_across_snapshots(COLLECTION, source="results", topics="core")
    assert caught.value.field == "topics"


def test_cli_import_list_over_time_and_rankings(db: str, tmp_path: Path, cli) -> None:
    _snapshots(tmp_path)
    path = _table(tmp_path)
    code, out, err = cli("results", "import", COLLECTION, path)
    assert code == 0, err
    assert "added · 144 added" in out
    code, out, err = cli("results", "import", COLLECTION, path, "--json")
    assert code == 0 and json.loads(out)["status"] == "unchanged"
    code, out, err = cli("results", "list", COLLECTION, "-m", "nDCG@10", "--json")
    assert code == 0 and len(json.loads(out)["figures"]) == 24
    code, out, err = cli("results", "over-time", COLLECTION, "-m", "P@10", "--snapshots",
                         SNAPSHOTS[0], SNAPSHOTS[2])
    assert code == 0, err
    assert "LongEval change" in out and HTML in out
    code, out, err = cli("report", "rankings", COLLECTION, "--from", "results", "-m",
                         "nDCG@10", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert len(data["measures"]["nDCG@10"]["pairs"]) == 3 and data["lineage"]
    code, out, err = cli("report", "rankings", COLLECTION, "--from", "results", "-m",
                         "nDCG@10")
    assert code == 0, err
    assert "τ-b" in out and "τ_AP" in out and "largest rank changes" in out
    code, out, err = cli("report", "rankings", COLLECTION, "--from", "results", "--format",
                         "csv")
    assert code == 0, err
    assert "tau_b" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("team,run,snapshot,nDCG@10\nCIR,run1,2023-03,x\n", encoding="utf-8")
    code, out, err = cli("results", "import", COLLECTION, bad)
    assert code != 0 and f"{bad}:2:" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_hostile_names_are_escaped_on_the_terminal(db: str, tmp_path: Path, cli) -> None:
    _snapshots(tmp_path)
    path = tmp_path / "hostile.csv"
    bidi = "run\u202eevil"
    path.write_text(f"team,run,snapshot,nDCG@10\n{FORMULA.replace(chr(34), '')},r,2023-03,0.3\n"
                    f"OWS,{bidi},2023-03,0.2\n", encoding="utf-8")
    code, out, err = cli("results", "import", COLLECTION, path)
    assert code != 0 and f"{path}:3:" in err and "U+202E" in err
    assert "\u202e" not in err


def test_hostile_names_are_data_in_every_output(db: str, tmp_path: Path, cli) -> None:
    """Formula and HTML names import as they are, come back exactly in --json, and are
    neutralised in CSV (a spreadsheet does not evaluate them)."""
    _snapshots(tmp_path)
    api.results_import(COLLECTION, _table(tmp_path))
    code, out, err = cli("results", "list", COLLECTION, "-m", "AP", "--json")
    assert code == 0, err
    teams = {f["team"] for f in json.loads(out)["figures"]}
    runs = {f["run"] for f in json.loads(out)["figures"]}
    assert FORMULA in teams and HTML in runs and "@SUM(1+1)" in runs
    code, out, err = cli("results", "list", COLLECTION, "-m", "AP", "--format", "csv")
    assert code == 0, err
    cells = [cell for row in csv.reader(out.splitlines()) for cell in row]
    assert "'" + FORMULA in cells and "'@SUM(1+1)" in cells
    assert FORMULA not in cells and "@SUM(1+1)" not in cells
    code, out, err = cli("report", "rankings", COLLECTION, "--from", "results", "-m", "AP",
                         "--json")
    assert code == 0, err
    systems = {r["system"] for r in json.loads(out)["measures"]["AP"]["systems"]}
    assert {f"{FORMULA}/run1", HTML, "@SUM(1+1)"} <= systems
