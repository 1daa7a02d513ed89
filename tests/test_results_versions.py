"""Results tables as LongEval 2025 publishes them (issue 43, Build 2): a `version` column beside
the snapshot column (each resubmission's timestamp), run names as published (`run_id`), and
snapshots the collection does not have yet, registered on the way when asked. Every version
is stored; the listing and the rankings take each run's latest, and say which. Expected
values come from the CSV read with the `csv` module and from scipy, never from tcdb.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tcdb import api
from tcdb.errors import InputError, NotFoundError

COLLECTION = "longeval-web"
SNAPSHOTS = ["2023-03", "2023-04", "2023-05"]
HEADER = ["team", "run_id", "version", "snapshot", "nDCG@10", "nDCG(judged_only=True)@10", "P@10"]
TEAMS = ["racoon", "racoon", "owl", "owl", "fox", "fox", "lynx"]
RUNS = ["run1", "run2", "run1", "bm25", "run3", "qrels-boost", "run1"]
RESUBMITTED = {1, 4}  # indices of the runs that come in two versions


def _table(tmp_path: Path, seed: int = 3) -> Path:
    """One row per team × run × version × snapshot; two runs resubmitted with other values."""
    rng = np.random.default_rng(seed)
    rows = []
    for k, (team, run) in enumerate(zip(TEAMS, RUNS, strict=True)):
        versions = ["2025-05-20-23-07-55", "2025-05-21-11-05-01"] if k in RESUBMITTED \
            else ["2025-05-19-09-00-00"]
        for version in versions:
            for snapshot in SNAPSHOTS:
                values = [round(float(v), 6) for v in rng.uniform(0.1, 0.6, size=3)]
                rows.append([team, run, version, snapshot, *values])
    path = tmp_path / "longeval-2025-web-test-results.csv"
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _latest(path: Path, column: str) -> dict[str, dict[tuple[str, str], tuple[str, float]]]:
    """snapshot → (team, run) → (version, value) of its latest version, by the csv module."""
    out: dict[str, dict[tuple[str, str], tuple[str, float]]] = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            key = (row["team"], row["run_id"])
            seen = out.setdefault(row["snapshot"], {}).get(key)
            if seen is None or row["version"] > seen[0]:  # timestamps: text order is time order
                out[row["snapshot"]][key] = (row["version"], float(row[column]))
    return out


def test_a_table_as_published_imports_with_its_snapshots_registered_when_asked(
        db: str, tmp_path: Path) -> None:
    api.collection_add(COLLECTION)
    path = _table(tmp_path)
    with pytest.raises(InputError) as refused:  # unasked, no snapshot is made up
        api.results_import(COLLECTION, path)
    assert refused.value.line == 2 and "--register-snapshots" in refused.value.reason
    assert api.snapshots(COLLECTION).snapshots == []

    result = api.results_import(COLLECTION, path, register_snapshots=True)
    n_rows = (len(RUNS) + len(RESUBMITTED)) * len(SNAPSHOTS)
    assert (result.status, result.n_rows, result.n_added) == ("added", n_rows, n_rows * 3)
    assert result.registered_snapshots == SNAPSHOTS and result.n_resubmitted == 2
    assert result.measures == ["nDCG@10", "nDCG(judged_only=True)@10", "P@10"]
    assert [s.label for s in api.snapshots(COLLECTION).snapshots] == SNAPSHOTS
    again = api.results_import(COLLECTION, path, register_snapshots=True)
    assert (again.status, again.n_unchanged, again.registered_snapshots) == (
        "unchanged", n_rows * 3, [])

    latest = _latest(path, "nDCG@10")
    listed = api.results(COLLECTION, measures=["nDCG@10"])
    got = {(f.snapshot, f.team, f.run): (f.version, f.value) for f in listed.figures}
    assert got == {(s, t, r): vv for s, by in latest.items() for (t, r), vv in by.items()}
    assert {f.run for f in listed.figures} == set(RUNS)  # names as published


def test_the_rankings_of_a_published_table_use_each_runs_latest_version(
        db: str, tmp_path: Path) -> None:
    api.collection_add(COLLECTION)
    path = _table(tmp_path, seed=11)
    api.results_import(COLLECTION, path, register_snapshots=True)
    for measure in ("nDCG@10", "nDCG(judged_only=True)@10"):
        latest = _latest(path, measure)
        keys = sorted(latest[SNAPSHOTS[0]])
        report = api.ranking_across_snapshots(COLLECTION, measures=[measure], source="results")
        pairs = report.measures[measure].pairs
        assert [(p.earlier, p.later) for p in pairs] == list(itertools.combinations(SNAPSHOTS, 2))
        for pair in pairs:
            x = [latest[pair.earlier][k][1] for k in keys]
            y = [latest[pair.later][k][1] for k in keys]
            expected = stats.kendalltau(x, y, variant="b")
            assert pair.n_systems == len(keys)
            assert pair.tau_b == pytest.approx(expected.statistic, abs=1e-12)
            assert pair.p_tau_b == pytest.approx(expected.pvalue, abs=1e-12)


def test_versions_are_one_key_of_a_row(db: str, tmp_path: Path) -> None:
    api.collection_add(COLLECTION)
    path = tmp_path / "twice.csv"
    path.write_text("team,run_id,version,snapshot,nDCG@10\n"
                    "owl,run1,v1,2023-03,0.3\nowl,run1,v2,2023-03,0.4\n"
                    "owl,run1,v10,2023-03,0.5\nowl,run1,v2,2023-03,0.6\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        api.results_import(COLLECTION, path, register_snapshots=True)
    assert caught.value.line == 5
    assert "run 'owl/run1' (version 'v2') on snapshot '2023-03' is already on line 3" in \
        caught.value.reason
    with pytest.raises(NotFoundError):  # nothing was written, no snapshot registered either
        api.results(COLLECTION)
    assert api.snapshots(COLLECTION).snapshots == []
    path.write_text("team,run_id,version,snapshot,nDCG@10\n"
                    "owl,run1,v1,2023-03,0.3\nowl,run1,v2,2023-03,0.4\n"
                    "owl,run1,v10,2023-03,0.5\n", encoding="utf-8")
    api.results_import(COLLECTION, path, register_snapshots=True)
    (figure,) = api.results(COLLECTION).figures
    assert (figure.version, figure.value) == ("v10", 0.5)  # v10 after v2: natural order


def test_a_version_column_alone_still_names_the_snapshot(db: str, tmp_path: Path) -> None:
    """LongEval 2023's tables called the sub-collection `version`: without a snapshot column
    it is the snapshot, as before."""
    api.collection_add(COLLECTION)
    api.snapshot_register(COLLECTION, "2023-03")
    path = tmp_path / "old.csv"
    path.write_text("team,run,version,nDCG@10\nowl,run1,2023-03,0.3\n", encoding="utf-8")
    result = api.results_import(COLLECTION, path)
    assert result.snapshots == ["2023-03"] and result.n_resubmitted == 0
    (figure,) = api.results(COLLECTION).figures
    assert (figure.snapshot, figure.version) == ("2023-03", "")


def test_the_cli_says_what_it_registered_and_lists_versions(db: str, tmp_path: Path,
                                                            cli) -> None:
    api.collection_add(COLLECTION)
    path = _table(tmp_path)
    code, out, err = cli("results", "import", COLLECTION, path)
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "--register-snapshots" in err and f"{path.name}:2:" in err
    code, out, err = cli("results", "import", COLLECTION, path, "--register-snapshots")
    assert code == 0, err
    assert "registered without documents: 2023-03, 2023-04, 2023-05" in out
    assert "2 run(s) resubmitted: every version kept, reports take the latest" in out
    code, out, err = cli("results", "list", COLLECTION, "-m", "nDCG@10")
    assert code == 0, err
    assert "version" in out and "2025-05-21-11-05-01" in out and "latest version" in out
    assert "2025-05-20-23-07-55" not in out  # an earlier version is kept, not listed
