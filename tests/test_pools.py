"""Assessment pools on SQLite and PostgreSQL: build (tie orders, run choice, remainder pools,
caps, unresolved entries), list/show, blind export, judgment batches, expansion, and every
error naming file, line and reason with nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.operations import Database
from tcdb.schema import Judgment, Pool, PoolEntry, PoolRun, QrelsSet
from tests.builders import build_snapshot, pool_entries, write_qrels_file, write_run_file

DOCS = {f"d{i}": f"document number {i}" for i in range(12)}
TOPICS = {"1": "first query", "2": "second query"}
QRELS = [("1", "d1", 1), ("1", "d2", 0), ("2", "d5", 2), ("2", "d6", 0)]
RUNS: dict[str, list[tuple]] = {
    # (topic, doc, score): ranks 1, 2, … in this order. A ties d2 and d3 at 2.0.
    "A": [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d3", 2.0), ("1", "d4", 1.0),
          ("2", "d5", 1.0), ("2", "d6", 0.5)],
    "B": [("1", "d3", 5.0), ("1", "d7", 4.0), ("1", "d8", 1.0),
          ("2", "d9", 2.0), ("2", "d6", 1.0), ("2", "d10", 0.5)],
    "C": [("1", "d7", 2.0), ("1", "d11", 1.5), ("1", "d0", 1.0),
          ("2", "d10", 3.0), ("2", "d9", 2.0)],
    # (topic, doc, rank, score): ranks that disagree with the scores.
    "D": [("1", "d4", 1, 0.1), ("1", "d0", 2, 0.2), ("1", "d8", 3, 9.0)],
}
# Depth 2, trec_eval order, all runs:
FULL = {"1": {"d1", "d3", "d7", "d11", "d8", "d0"}, "2": {"d5", "d6", "d9", "d10"}}
REMAINDER = {"1": {"d3", "d7", "d11", "d8", "d0"}, "2": {"d9", "d10"}}


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    """Collection `c`, snapshot `s1` with qrels `original` and runs A (contributed), B, C, D."""
    from tcdb.api import run_import

    build_snapshot(tmp_path, "c", "s1", DOCS, TOPICS, QRELS)
    for tag, rows in RUNS.items():
        path = write_run_file(tmp_path / "runs", tag, rows)
        run_import("c", "s1", [path], contributed=tag == "A")
    return tmp_path


def _docs(name: str) -> dict[str, set[str]]:
    from tcdb.pools import pool_documents

    return pool_documents(Database(), name)


def _counts() -> dict[str, int]:
    with Database().session() as session:
        return {table.__tablename__: session.execute(
            select(func.count()).select_from(table)).scalar_one()
            for table in (Pool, PoolRun, PoolEntry, QrelsSet, Judgment)}


def _status(name: str) -> str:
    with Database().session() as session:
        return session.execute(select(Pool.status).where(Pool.name == name)).scalar_one().value


# ------------------------------------------------------------------------------------- build


def test_build_all_runs_trec_eval_order_records_best_rank_and_runs(snap: Path, cli) -> None:
    code, out, err = cli("pool", "build", "c", "s1", "p", "--depth", "2", "--all-runs", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "built" and report["n_documents"] == 10
    assert report["size"] == {"min": 4, "max": 6, "mean": 5.0, "total": 10}
    assert report["runs"] == ["A", "B", "C", "D"] and report["n_unresolved_skipped"] == 0
    assert _docs("p") == FULL
    entries = pool_entries("p")
    # A's tie d2/d3 at 2.0 goes to d3 (doc id descending, as trec_eval sorts).
    assert entries[("1", "d3")] == (1, 2)  # B rank 1, A rank 2
    assert entries[("1", "d7")] == (1, 2)  # C rank 1, B rank 2
    assert entries[("1", "d1")] == (1, 1)
    assert entries[("1", "d11")] == (2, 1)
    assert entries[("1", "d8")] == (1, 1)  # D by score: d8 (9.0) first
    assert entries[("2", "d6")] == (2, 2)
    with Database().session() as session:
        assert session.execute(select(func.count()).select_from(PoolRun)).scalar_one() == 4


def test_tie_orders(snap: Path) -> None:
    from tcdb.api import pool_build

    pool_build("c", "s1", "te", depth=2, runs=["A", "D"], tie_order="trec_eval")
    pool_build("c", "s1", "asc", depth=2, runs=["A", "D"], tie_order="docid-asc")
    pool_build("c", "s1", "rank", depth=2, runs=["A", "D"], tie_order="file-rank")
    assert _docs("te")["1"] == {"d1", "d3", "d8", "d0"}
    assert _docs("asc")["1"] == {"d1", "d2", "d8", "d0"}
    assert _docs("rank")["1"] == {"d1", "d2", "d4", "d0"}
    assert pool_entries("rank")[("1", "d4")] == (1, 1)


def test_run_choice(snap: Path) -> None:
    from tcdb.api import pool_build

    assert pool_build("c", "s1", "contrib", depth=2, contributed=True).runs == ["A"]
    assert _docs("contrib") == {"1": {"d1", "d3"}, "2": {"d5", "d6"}}
    assert pool_build("c", "s1", "new", depth=2, not_contributed=True).runs == ["B", "C", "D"]
    assert _docs("new") == {"1": {"d3", "d7", "d11", "d8", "d0"}, "2": {"d9", "d6", "d10"}}
    assert pool_build("c", "s1", "bc", depth=1, runs=["B", "C"]).runs == ["B", "C"]
    assert _docs("bc") == {"1": {"d3", "d7"}, "2": {"d9", "d10"}}


def test_remainder_pool_leaves_out_what_the_qrels_judged(snap: Path) -> None:
    from tcdb.api import pool_build

    report = pool_build("c", "s1", "rem", depth=2, all_runs=True, exclude_judged="original")
    assert report.exclude_judged == "original" and report.n_documents == 7
    assert _docs("rem") == REMAINDER


def test_max_per_topic_keeps_best_rank_then_most_runs_then_doc_id(snap: Path) -> None:
    from tcdb.api import pool_build

    report = pool_build("c", "s1", "cap", depth=2, all_runs=True, max_per_topic=3)
    assert report.size.max == 3 and report.n_documents == 6
    # topic 1: d3, d7 (rank 1, two runs), then d1 before d8 (rank 1, one run, "d1" < "d8")
    # topic 2: d9 (rank 1, two runs), then "d10" < "d5" byte-wise (rank 1, one run)
    assert _docs("cap") == {"1": {"d3", "d7", "d1"}, "2": {"d9", "d10", "d5"}}


def test_unresolved_entries_keep_their_rank_but_are_left_out(snap: Path, cli) -> None:
    from tcdb.api import run_import

    path = write_run_file(snap / "runs", "E", [("1", "x1", 9.0), ("1", "d4", 8.0),
                                               ("1", "d2", 7.0)])
    run_import("c", "s1", [path], allow_unknown_docs=True)
    code, out, err = cli("pool", "build", "c", "s1", "pe", "--depth", "2", "--run", "E")
    assert code == 0, err
    assert "left out 1 top-2 document(s) the snapshot does not have" in out
    assert _docs("pe") == {"1": {"d4"}}  # x1 took rank 1: d2 (rank 3) is not in the top 2
    assert pool_entries("pe")[("1", "d4")] == (2, 1)


def test_docid_asc_reverses_a_tie_across_the_depth_with_unresolvedpool_entries(snap: Path) -> None:
    """Three tied entries straddle depth 2, one of them a document the snapshot lacks: trec_eval
    order takes x1 (left out) and d4, trectools' order d2 and d4."""
    from tcdb.api import pool_build, run_import

    path = write_run_file(snap / "runs", "F", [("1", "d9", 6.0), ("1", "x1", 5.0),
                                               ("1", "d4", 5.0), ("1", "d2", 5.0),
                                               ("1", "d1", 4.0)])
    run_import("c", "s1", [path], allow_unknown_docs=True)
    desc = pool_build("c", "s1", "desc", depth=3, runs=["F"])
    asc = pool_build("c", "s1", "asc", depth=3, runs=["F"], tie_order="docid-asc")
    assert pool_entries("desc") == {("1", "d9"): (1, 1), ("1", "d4"): (3, 1)}
    assert desc.n_unresolved_skipped == 1
    assert pool_entries("asc") == {("1", "d9"): (1, 1), ("1", "d2"): (2, 1), ("1", "d4"): (3, 1)}
    assert asc.n_unresolved_skipped == 0


def test_build_again_is_unchanged_and_other_parameters_conflict(snap: Path) -> None:
    from tcdb.api import pool_build

    pool_build("c", "s1", "p", depth=2, all_runs=True)
    before = _counts()
    assert pool_build("c", "s1", "p", depth=2, all_runs=True).status == "unchanged"
    with pytest.raises(ConflictError, match="already has a pool 'p'"):
        pool_build("c", "s1", "p", depth=3, all_runs=True)
    with pytest.raises(ConflictError, match="already has a pool 'p'"):
        pool_build("c", "s1", "p", depth=2, runs=["A"])
    assert _counts() == before


def test_pool_names_are_unique_per_snapshot(snap: Path, cli: Any) -> None:
    """Every round gets its own `remainder50`; a name two snapshots share needs them said."""
    from tcdb.api import pool_build, pool_show, run_import

    build_snapshot(snap / "s2", "c", "s2", DOCS, TOPICS, QRELS)
    run_import("c", "s2", [write_run_file(snap / "s2" / "runs", "A", RUNS["A"])])
    pool_build("c", "s1", "remainder", depth=2, all_runs=True)
    assert pool_build("c", "s2", "remainder", depth=1, all_runs=True).status == "built"
    with pytest.raises(InputError, match="exist in c/s1, c/s2: say which with its collection"):
        pool_show("remainder")
    assert pool_show("remainder", collection="c", snapshot="s2").depth == 1
    code, out, err = cli("pool", "show", "remainder", "--snapshot", "s1", "--json")
    assert code == 0, err
    assert json.loads(out)["depth"] == 2
    code, _, err = cli("pool", "show", "remainder")
    assert code == 1 and "--snapshot" in err
    code, _, err = cli("pool", "show", "nope", "--snapshot", "s1")
    assert code == 1 and "no pool 'nope' in s1 (known: remainder)" in err


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, InputError, "exactly one of"),
    ({"all_runs": True, "contributed": True}, InputError, "exactly one of"),
    ({"runs": ["nope"]}, NotFoundError, "no run 'nope'"),
    ({"all_runs": True, "exclude_judged": "nope"}, NotFoundError, "no qrels set 'nope'"),
    ({"all_runs": True, "tie_order": "random"}, InputError, "not one of"),
    ({"all_runs": True, "max_per_topic": 0}, InputError, "at least 1"),
])
def test_build_errors_write_nothing(snap: Path, kwargs: dict, error: type, match: str) -> None:
    from tcdb.api import pool_build

    before = _counts()
    with pytest.raises(error, match=match):
        pool_build("c", "s1", "bad", depth=2, **kwargs)
    assert _counts() == before


def test_build_error_depth_and_unknown_snapshot(snap: Path, cli) -> None:
    code, _, err = cli("pool", "build", "c", "s1", "p", "--depth", "0", "--all-runs")
    assert code == 1 and "depth must be at least 1" in err
    code, _, err = cli("pool", "build", "c", "s9", "p", "--depth", "2", "--all-runs")
    assert code == 1 and "no complete snapshot 's9'" in err
    assert _counts()["pool"] == 0


def test_contributed_without_contributed_runs(db: str, tmp_path: Path) -> None:
    from tcdb.api import pool_build, run_import

    build_snapshot(tmp_path, "c", "s1", DOCS, TOPICS, QRELS)
    run_import("c", "s1", [write_run_file(tmp_path / "runs", "B", RUNS["B"])])
    with pytest.raises(InputError, match="has no contributed runs"):
        pool_build("c", "s1", "p", depth=2, contributed=True)


# ------------------------------------------------------------------------------ list and show


def test_list_and_show(snap: Path, cli) -> None:
    cli("pool", "build", "c", "s1", "p", "--depth", "2", "--all-runs")
    cli("pool", "build", "c", "s1", "rem", "--depth", "2", "--all-runs",
        "--exclude-judged", "original")
    code, out, err = cli("pool", "list", "--json")
    assert code == 0, err
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == {"p", "rem"}
    assert rows["rem"]["exclude_judged"] == "original" and rows["rem"]["n_documents"] == 7
    assert rows["p"]["status"] == "open" and rows["p"]["judged_fraction"] == 0.0
    assert rows["p"]["size"] == {"min": 4, "max": 6, "mean": 5.0, "total": 10}
    code, out, err = cli("pool", "show", "p", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert {r["run"]: (r["n_pooled"], r["unique"]) for r in info["runs"]} == {
        "A": (4, 2), "B": (4, 0), "C": (4, 2), "D": (2, 2)}
    assert info["per_topic"] == [{"topic": "1", "n_documents": 6, "n_judged": 0, "n_unjudged": 6},
                                 {"topic": "2", "n_documents": 4, "n_judged": 0, "n_unjudged": 4}]
    code, out, err = cli("pool", "show", "p")
    assert code == 0, err
    assert "contribution per run" in out and "mean 5.0" in out
    code, out, _ = cli("pool", "list")
    assert code == 0 and "rem" in out and "c/s1" in out


def test_show_unknown_pool(snap: Path, cli) -> None:
    cli("pool", "build", "c", "s1", "p", "--depth", "2", "--all-runs")
    code, _, err = cli("pool", "show", "nope")
    assert code == 1 and "no pool 'nope' (known: p)" in err


# ------------------------------------------------------------------------------------ export


def test_export_jsonl_is_blind_and_marks_the_pool_exported(snap: Path, cli) -> None:
    cli("pool", "build", "c", "s1", "rem", "--depth", "2", "--all-runs",
        "--exclude-judged", "original")
    out_file = snap / "pool.jsonl"
    code, out, err = cli("pool", "export", "rem", "--format", "jsonl", "--out", out_file,
                         "--json")
    assert code == 0, err
    assert json.loads(out)["n_documents"] == 7 and json.loads(out)["status"] == "exported"
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [(r["topic_id"], r["doc_id"]) for r in rows] == sorted(
        (t, d) for t, docs in REMAINDER.items() for d in docs)
    assert set(rows[0]) == {"topic_id", "query", "description", "doc_id", "text", "grade",
                            "grade_scale"}
    first = rows[0]
    assert first["query"] == "first query" and first["grade"] is None
    assert first["text"] == f"document number {first['doc_id'][1:]}"  # trimmed
    body = out_file.read_text()
    for tag in RUNS:
        assert f'"{tag}"' not in body
    assert "rank" not in body and "score" not in body
    assert _status("rem") == "exported"


def test_export_trec_and_csv(snap: Path, cli) -> None:
    cli("pool", "build", "c", "s1", "p", "--depth", "2", "--all-runs")
    trec = snap / "pool.txt"
    assert cli("pool", "export", "p", "--format", "trec", "--out", trec)[0] == 0
    lines = trec.read_text().splitlines()
    assert len(lines) == 10 and lines[0] == "1 0 d0"  # a qrels template, the grade to append
    table = snap / "pool.csv"
    assert cli("pool", "export", "p", "--format", "csv", "--out", table)[0] == 0
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 10 and rows[0]["query"] == "first query" and rows[0]["text"]
    assert rows[0]["grade"] == "" and rows[0]["grade_scale"].startswith("an integer")


def _fill(fmt: str, exported: Path, judged: Path, grade_of: dict[tuple[str, str], int]) -> None:
    """What an assessor does with the exported form: write a grade for every row, in the
    file's own format, with the csv and json modules (not tcdb)."""
    if fmt == "csv":
        with exported.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        with judged.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, "grade": grade_of[row["topic_id"], row["doc_id"]]})
    elif fmt == "jsonl":
        items = [json.loads(line) for line in exported.read_text(encoding="utf-8").splitlines()]
        judged.write_text("".join(
            json.dumps({**item, "grade": grade_of[item["topic_id"], item["doc_id"]]}) + "\n"
            for item in items), encoding="utf-8")
    else:
        judged.write_text("".join(
            f"{line} {grade_of[line.split()[0], line.split()[2]]}\n"
            for line in exported.read_text(encoding="utf-8").splitlines()), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "trec"])
def test_an_assessor_fills_the_exported_form_and_it_comes_back_expanded(
    snap: Path, cli, fmt: str
) -> None:
    """The round trip per format: export the remainder pool, fill in every grade, import the
    judgments as a pooled set and expand the original with it. The expanded set is the original
    judgments plus exactly the grades written (read back as a TREC file, without tcdb)."""
    assert cli("pool", "build", "c", "s1", "rem", "--depth", "2", "--all-runs",
               "--exclude-judged", "original")[0] == 0
    exported, judged = snap / f"pool.{fmt}", snap / f"judged.{fmt}"
    code, _, err = cli("pool", "export", "rem", "--format", fmt, "--out", exported)
    assert code == 0, err
    pairs = sorted((t, d) for t, docs in REMAINDER.items() for d in docs)
    grade_of = {pair: (int(pair[1][1:]) + len(pair[0])) % 3 for pair in pairs}
    _fill(fmt, exported, judged, grade_of)
    code, _, err = cli("pool", "import-judgments", "rem", judged, "--format", fmt,
                       "--assessor", "A1", "--expand", "original", "--expanded-name", "exp")
    assert code == 0, err
    original, expanded = snap / "original.qrels", snap / "expanded.qrels"
    assert cli("qrels", "export", "c", "s1", "original", "--out", original)[0] == 0
    assert cli("qrels", "export", "c", "s1", "exp", "--out", expanded)[0] == 0

    def read(path: Path) -> dict[tuple[str, str], int]:
        return {(t, d): int(g) for t, _, d, g in
                (line.split() for line in path.read_text(encoding="utf-8").splitlines())}

    assert read(expanded) == {**read(original), **grade_of}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "trec"])
def test_an_unfilled_grade_is_refused_in_one_line(snap: Path, cli, fmt: str) -> None:
    """A form sent back with a grade left empty is refused naming the line; nothing is taken
    as 0 and nothing is stored."""
    assert cli("pool", "build", "c", "s1", "rem", "--depth", "2", "--all-runs",
               "--exclude-judged", "original")[0] == 0
    exported = snap / f"pool.{fmt}"
    assert cli("pool", "export", "rem", "--format", fmt, "--out", exported)[0] == 0
    code, _, err = cli("pool", "import-judgments", "rem", exported, "--format", fmt,
                       "--assessor", "A1")
    lines = [line for line in err.splitlines() if line.strip()]
    first = 2 if fmt == "csv" else 1  # the first row after the CSV's header
    assert code == 1 and len(lines) == 1 and f"{exported}:{first}:" in lines[0], err
    assert "grade is missing" in lines[0], err
    code, out, _ = cli("qrels", "list", "c", "--json")
    assert code == 0 and "rem" not in out


def test_export_shuffle_is_seeded_and_keeps_topics_together(snap: Path, cli) -> None:
    cli("pool", "build", "c", "s1", "p", "--depth", "2", "--all-runs")
    first, second = snap / "a.txt", snap / "b.txt"
    code, out, err = cli("pool", "export", "p", "--format", "trec", "--out", first,
                         "--order", "shuffle", "--seed", "7", "--json")
    assert code == 0, err
    assert json.loads(out)["seed"] == 7
    cli("pool", "export", "p", "--format", "trec", "--out", second, "--order", "shuffle",
        "--seed", "7")
    assert first.read_text() == second.read_text()
    pairs = [tuple(line.split()[::2]) for line in first.read_text().splitlines()]
    assert sorted(pairs) == sorted((t, d) for t, docs in FULL.items() for d in docs)
    assert [t for t, _ in pairs] == sorted(t for t, _ in pairs)  # topics stay together
    code, out, _ = cli("pool", "export", "p", "--format", "jsonl", "--out", snap / "c.jsonl",
                       "--order", "shuffle", "--json")
    assert code == 0 and isinstance(json.loads(out)["seed"], int)  # chosen and reported


def test_export_without_text_names_the_documents(db: str, tmp_path: Path, cli) -> None:
    from tcdb.api import pool_build, run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tests.builders import write_documents, write_topics

    add_collection(Database(), "bare")
    folder = tmp_path / "bare"
    ingest_snapshot(Database(), "bare", "s1", LocalSource(write_documents(folder / "d.trec", DOCS),
                                              write_topics(folder / "t.tsv", TOPICS), None),
                    with_text=False)
    run_import("bare", "s1", [write_run_file(tmp_path / "runs", "B", RUNS["B"])])
    pool_build("bare", "s1", "p", depth=1, all_runs=True)
    code, _, err = cli("pool", "export", "p", "--format", "jsonl", "--out", tmp_path / "p.jsonl")
    assert code == 1 and "2 pooled document(s)" in err and "have no text" in err
    assert "d3" in err and "d9" in err
    assert not (tmp_path / "p.jsonl").exists() and _status("p") == "open"
    assert cli("pool", "export", "p", "--format", "trec", "--out", tmp_path / "p.txt")[0] == 0


def test_export_unknown_pool(snap: Path, cli) -> None:
    code, _, err = cli("pool", "export", "nope", "--format", "trec", "--out", snap / "x.txt")
    assert code == 1 and "no pool 'nope'" in err and not (snap / "x.txt").exists()


# --------------------------------------------------------------------------------- judgments


@pytest.fixture
def remainder(snap: Path) -> Path:
    from tcdb.api import pool_build

    pool_build("c", "s1", "rem", depth=2, all_runs=True, exclude_judged="original")
    return snap


def test_judgment_batches_fill_the_pooled_set_until_judged(remainder: Path, cli) -> None:
    batch1 = write_qrels_file(remainder / "b1.txt", [("1", "d3", 1), ("1", "d7", 0),
                                                     ("2", "d9", 2)])
    code, out, err = cli("pool", "import-judgments", "rem", batch1, "--assessor", "ann",
                         "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_new"] == 3 and report["n_judged"] == 3 and report["status"] == "open"
    assert report["pooled_qrels"] == "rem"
    batch2 = remainder / "b2.csv"
    batch2.write_text("topic_id,doc_id,grade,notes\n1,d11,0,\n1,d8,1,x\n1,d0,0,\n2,d10,1,\n"
                      "1,d3,1,again\n")
    code, out, err = cli("pool", "import-judgments", "rem", batch2, "--format", "csv",
                         "--assessor", "bob", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_new"], report["n_repeated"], report["n_judged"]) == (4, 1, 7)
    assert report["status"] == "judged" and report["judged_fraction"] == 1.0
    with Database().session() as session:
        pooled = session.execute(select(QrelsSet).where(QrelsSet.name == "rem")).scalar_one()
        assert pooled.kind.value == "pooled" and pooled.n_judgments == 7
        assert pooled.assessor == "ann, bob"
        pool = session.execute(select(Pool).where(Pool.name == "rem")).scalar_one()
        assert pool.pooled_qrels_id == pooled.id
    code, out, _ = cli("pool", "show", "rem", "--json")
    assert json.loads(out)["per_topic"][0] == {"topic": "1", "n_documents": 5, "n_judged": 5,
                                               "n_unjudged": 0}


def test_a_later_batch_drops_scores_computed_on_the_pooled_set(remainder: Path) -> None:
    from tcdb.api import pool_import_judgments
    from tcdb.schema import Evaluation, Score
    from tcdb.scoring.evaluate import evaluate

    pool_import_judgments("rem", write_qrels_file(remainder / "b1.txt", [("1", "d3", 1)]))
    assert evaluate(Database(), "c", "s1", "rem", ["P@2"]).n_computed == 4
    pool_import_judgments("rem", write_qrels_file(remainder / "b2.txt", [("2", "d9", 2)]))
    with Database().session() as session:
        pooled = session.execute(select(QrelsSet.id).where(QrelsSet.name == "rem")).scalar_one()
        for table in (Score, Evaluation):
            assert session.execute(select(func.count()).select_from(table).where(
                table.qrels_set_id == pooled)).scalar_one() == 0
    assert evaluate(Database(), "c", "s1", "rem", ["P@2"]).n_computed == 4


def test_expand_writes_base_union_pooled(remainder: Path, cli) -> None:
    judgments = write_qrels_file(remainder / "j.txt", [("1", "d3", 2), ("2", "d9", 1)])
    code, out, err = cli("pool", "import-judgments", "rem", judgments, "--expand", "original",
                         "--expanded-name", "expanded", "--json")
    assert code == 0, err
    expanded = json.loads(out)["expanded"]
    assert (expanded["n_judgments"], expanded["n_added"], expanded["n_conflicts"]) == (6, 2, 0)
    with Database().session() as session:
        qset = session.execute(select(QrelsSet).where(QrelsSet.name == "expanded")).scalar_one()
        base = session.execute(select(QrelsSet.id).where(QrelsSet.name == "original")
                               ).scalar_one()
        pooled = session.execute(select(QrelsSet.id).where(QrelsSet.name == "rem")).scalar_one()
        assert (qset.kind.value, qset.parent_id, qset.second_parent_id) == ("expanded", base,
                                                                            pooled)
    from tcdb.api import qrels

    frame = qrels("c", "s1", "expanded").to_frame()
    assert sorted(map(tuple, frame[["topic", "doc", "grade"]].values.tolist())) == sorted(
        QRELS + [("1", "d3", 2), ("2", "d9", 1)])


@pytest.mark.parametrize("prefer, grade", [("base", 1), ("new", 2)])
def test_expand_conflicts_follow_prefer(snap: Path, cli, prefer: str, grade: int) -> None:
    from tcdb.api import pool_build, qrels

    pool_build("c", "s1", "full", depth=2, all_runs=True)  # not a remainder: d1, d5, d6 are judged
    judgments = write_qrels_file(snap / "j.txt", [("1", "d1", 2), ("2", "d5", 2),
                                                  ("1", "d7", 1)])
    code, out, err = cli("pool", "import-judgments", "full", judgments, "--expand", "original",
                         "--expanded-name", "x", "--prefer", prefer, "--json")
    assert code == 0, err
    expanded = json.loads(out)["expanded"]
    assert expanded["conflicts"] == [{"topic": "1", "doc": "d1", "base": 1, "new": 2}]
    assert expanded["n_added"] == 1 and expanded["n_judgments"] == 5
    frame = qrels("c", "s1", "x").to_frame()
    assert frame[(frame.topic == "1") & (frame.doc == "d1")].grade.item() == grade
    code, out, _ = cli("pool", "import-judgments", "full", judgments)  # same batch: no-op
    assert code == 0 and "0 new judgment(s)" in out


def test_expand_later_with_pool_expand(remainder: Path, cli) -> None:
    from tcdb.api import pool_import_judgments

    pool_import_judgments("rem", write_qrels_file(remainder / "j.txt", [("1", "d3", 2)]))
    code, out, err = cli("pool", "expand", "rem", "--base", "original", "--name", "exp")
    assert code == 0, err
    assert "expanded qrels exp" in out
    code, _, err = cli("pool", "expand", "rem", "--base", "original", "--name", "exp")
    assert code == 1 and "already has a qrels set 'exp'" in err


def _judgment_errors(folder: Path) -> list[tuple[str, list, str]]:
    return [
        ("not-in-pool", [("1", "d3", 1), ("1", "d4", 1)],
         r"j\.txt:2: document 'd4' is not in pool 'rem' for topic '1'"),
        ("judged-already", [("1", "d1", 1)], "document 'd1' is not in pool 'rem'"),
        ("wrong-topic", [("2", "d3", 1)], "document 'd3' is not in pool 'rem' for topic '2'"),
        ("unknown-doc", [("1", "zz", 1)], "document 'zz' is not in pool"),
        ("base-range", [("1", "d3", 1), ("1", "d7", 5)],
         r"j\.txt:2: grade 5 is outside the scale \[0, 2\] \(the grades of qrels 'original'\)"),
    ]


@pytest.mark.parametrize("case", range(5))
def test_judgment_errors_write_nothing(remainder: Path, case: int) -> None:
    from tcdb.api import pool_import_judgments

    name, rows, match = _judgment_errors(remainder)[case]
    before = _counts()
    path = write_qrels_file(remainder / "j.txt", rows)
    with pytest.raises(InputError, match=match):
        pool_import_judgments("rem", path, expand="original", expanded_name="exp")
    assert _counts() == before and _status("rem") == "open", name


def test_grade_outside_the_collections_scale(remainder: Path) -> None:
    from tcdb.api import pool_import_judgments
    from tcdb.catalog.collections import add_collection

    add_collection(Database(), "c", grade_min=0, grade_max=2)  # the stored qrels grade 0 to 2
    before = _counts()
    path = write_qrels_file(remainder / "j.txt", [("1", "d3", 3)])
    with pytest.raises(InputError, match=r"j\.txt:1: grade 3 is outside the scale \[0, 2\] "
                       r"\(the scale of collection 'c'\)"):
        pool_import_judgments("rem", path)
    assert _counts() == before


def test_two_grades_for_one_document_in_one_file(remainder: Path, cli) -> None:
    before = _counts()
    path = write_qrels_file(remainder / "j.txt", [("1", "d3", 1), ("1", "d7", 0),
                                                  ("1", "d3", 2)])
    code, _, err = cli("pool", "import-judgments", "rem", path)
    assert code == 1 and "j.txt:3" in err and "d3" in err
    assert _counts() == before


def test_a_later_batch_with_another_grade(remainder: Path) -> None:
    from tcdb.api import pool_import_judgments

    pool_import_judgments("rem", write_qrels_file(remainder / "b1.txt", [("1", "d3", 1)]))
    before = _counts()
    path = write_qrels_file(remainder / "b2.txt", [("1", "d7", 0), ("1", "d3", 2)])
    with pytest.raises(InputError, match=r"b2\.txt:2: document 'd3' for topic '1' was judged 1 "
                       "in an earlier batch, not 2"):
        pool_import_judgments("rem", path)
    assert _counts() == before


def test_unknown_pool(remainder: Path, cli) -> None:
    before = _counts()
    path = write_qrels_file(remainder / "j.txt", [("1", "d3", 1)])
    code, _, err = cli("pool", "import-judgments", "nope", path)
    assert code == 1 and "no pool 'nope' (known: rem)" in err
    assert _counts() == before


def test_expand_error_rolls_back_the_batch(remainder: Path) -> None:
    from tcdb.api import pool_import_judgments

    before = _counts()
    path = write_qrels_file(remainder / "j.txt", [("1", "d3", 1)])
    with pytest.raises(NotFoundError, match="no qrels set 'nope'"):
        pool_import_judgments("rem", path, expand="nope", expanded_name="exp")
    with pytest.raises(ConflictError, match="already has a qrels set 'original'"):
        pool_import_judgments("rem", path, expand="original", expanded_name="original")
    with pytest.raises(InputError, match="go together"):
        pool_import_judgments("rem", path, expand="original")
    assert _counts() == before and _status("rem") == "open"


def test_pooled_name_clash(remainder: Path) -> None:
    from tcdb.api import pool_import_judgments

    path = write_qrels_file(remainder / "j.txt", [("1", "d3", 1)])
    with pytest.raises(ConflictError, match="--pooled-name"):
        pool_import_judgments("rem", path, pooled_name="original")
    assert pool_import_judgments("rem", path, pooled_name="rem-judged").pooled_qrels == \
        "rem-judged"


# -------------------------------------------------------------------------------- end to end


def test_end_to_end_remainder_pool_to_expanded_qrels(db: str, tmp_path: Path, cli) -> None:
    """ingest → import runs → remainder pool → export JSONL → judgments → expanded qrels →
    every run evaluated on original and expanded qrels, equal to ir_measures on the files."""
    import random

    import ir_measures

    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import score_table

    rng = random.Random(5)
    docs = {f"doc{i}": f"text {i}" for i in range(80)}
    topics = {str(t): f"query {t}" for t in range(1, 6)}
    relevant = {(str(t), f"doc{d}"): rng.choice([0, 1, 2]) for t in topics
                for d in range(80)}  # what any assessor would say
    runs: dict[str, list[tuple]] = {}
    for r in range(5):
        runs[f"sys{r}"] = [(t, f"doc{d}", float(30 - i) + (r % 2) * 0.5)
                           for t in topics for i, d in enumerate(rng.sample(range(80), 30))]
    contributed = ["sys0", "sys1"]
    # the official pools: the top 10 of the contributed runs per topic
    original = sorted({(t, d, relevant[(t, d)]) for tag in contributed
                       for i, (t, d, _) in enumerate(runs[tag]) if i % 30 < 10})
    build_snapshot(tmp_path, "c", "s1", docs, topics, original)
    paths = {tag: write_run_file(tmp_path / "runs", tag, rows) for tag, rows in runs.items()}
    assert cli("run", "import", "c", "s1", *[paths[t] for t in contributed],
               "--contributed")[0] == 0
    assert cli("run", "import", "c", "s1", *[paths[t] for t in runs if t not in contributed]
               )[0] == 0

    code, out, err = cli("pool", "build", "c", "s1", "rem", "--depth", "10",
                         "--not-contributed", "--exclude-judged", "original", "--json")
    assert code == 0, err
    built = json.loads(out)
    judged = {(t, d) for t, d, _ in original}
    assert built["n_documents"] > 0
    exported = tmp_path / "pool.jsonl"
    assert cli("pool", "export", "rem", "--format", "jsonl", "--out", exported)[0] == 0
    items = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(items) == built["n_documents"]
    assert not {(i["topic_id"], i["doc_id"]) for i in items} & judged
    judgments = tmp_path / "judgments.csv"
    with judgments.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["topic_id", "doc_id", "grade"])
        for item in items:
            writer.writerow([item["topic_id"], item["doc_id"],
                             relevant[(item["topic_id"], item["doc_id"])]])
    code, out, err = cli("pool", "import-judgments", "rem", judgments, "--format", "csv",
                         "--assessor", "a1", "--expand", "original", "--expanded-name",
                         "expanded", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "judged" and report["expanded"]["n_conflicts"] == 0
    assert report["expanded"]["n_judgments"] == len(original) + len(items)

    measures = ["P@10", "AP", "nDCG@10"]
    merged = original + [(i["topic_id"], i["doc_id"], relevant[(i["topic_id"], i["doc_id"])])
                         for i in items]
    for qrels_name, rows in (("original", original), ("expanded", merged)):
        report = evaluate(Database(), "c", "s1", qrels_name, measures)
        assert report.n_computed == len(runs) * len(measures)
        table = score_table(Database(),
                            "c", "s1", qrels_name, measures, per_topic=True, compute=False)
        got = {(r.run, r.measure, r.topic): r.value for r in table.itertuples()}
        qrels = [ir_measures.Qrel(t, d, g) for t, d, g in rows]
        for tag, path in paths.items():
            for metric in ir_measures.iter_calc(
                    [ir_measures.parse_measure(m) for m in measures], qrels,
                    ir_measures.read_trec_run(str(path))):
                assert got[(tag, str(metric.measure), metric.query_id)] == pytest.approx(
                    metric.value, abs=1e-12), (qrels_name, tag)
