"""`tcdb run export`, on SQLite and PostgreSQL: the file written back holds every entry as
submitted (ranks that disagree with scores, tied scores, documents the snapshot lacks), so it
evaluates exactly as the file imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import build_snapshot, write_run_file

ROWS = [("1", "d1", 1, 2.0), ("1", "d2", 2, 2.0), ("1", "x9", 3, 1.5), ("1", "d0", 4, 3.0),
        ("2", "d3", 1, 0.5), ("2", "d1", 2, 0.25), ("10", "d2", 1, 1.0)]


def _rows(path: Path) -> list[tuple[str, str, int, float, str]]:
    out = []
    for line in path.read_text().splitlines():
        topic, _, doc, rank, score, tag = line.split()
        out.append((topic, doc, int(rank), float(score), tag))
    return out


def test_export_round_trip(db: str, tmp_path: Path, cli) -> None:
    import ir_measures

    from tcdb.api import run_import

    build_snapshot(tmp_path, "c", "s1", {f"d{i}": f"text {i}" for i in range(5)},
                   {"1": "one", "2": "two", "10": "ten"},
                   [("1", "d1", 1), ("1", "d0", 1), ("2", "d3", 2), ("10", "d2", 0)])
    original = write_run_file(tmp_path / "in", "A", ROWS)
    run_import("c", "s1", [original], allow_unknown_docs=True)
    code, out, err = cli("run", "export", "c", "s1", "A", "--out", str(tmp_path / "A.txt"),
                         "--json")
    assert code == 0, err
    assert json.loads(out)["n_entries"] == len(ROWS) and json.loads(out)["n_topics"] == 3
    written = _rows(tmp_path / "A.txt")
    assert sorted(written) == sorted(_rows(original))
    assert [r[0] for r in written] == ["1"] * 4 + ["2"] * 2 + ["10"]  # natural topic order
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "c" / "s1" / "qrels.txt")))
    measures = [ir_measures.AP, ir_measures.P @ 2, ir_measures.nDCG]

    def results(path: Path) -> set[tuple[str, str, float]]:
        return {(str(m.measure), m.query_id, m.value) for m in ir_measures.iter_calc(
            measures, qrels, list(ir_measures.read_trec_run(str(path))))}

    assert results(tmp_path / "A.txt") == results(original)


def test_export_unknown_run(db: str, tmp_path: Path, cli) -> None:
    build_snapshot(tmp_path, "c", "s1", {"d0": "x"}, {"1": "one"})
    code, _, err = cli("run", "export", "c", "s1", "nope", "--out", str(tmp_path / "x.txt"))
    assert code != 0 and "nope" in err
    assert not (tmp_path / "x.txt").exists()


@pytest.mark.parametrize("folder", ["missing"])
def test_export_missing_folder(db: str, tmp_path: Path, cli, folder: str) -> None:
    build_snapshot(tmp_path, "c", "s1", {"d0": "x"}, {"1": "one"})
    code, _, err = cli("run", "export", "c", "s1", "A", "--out", str(tmp_path / folder / "x"))
    assert code != 0 and "does not exist" in err
