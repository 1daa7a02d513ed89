"""Run import: metadata, idempotency, --replace, unknown documents, and every validation error
naming file, line and reason with nothing written — on SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from tcdb.errors import ConflictError, InputError
from tcdb.operations import Database
from tcdb.schema import Evaluation, Run, RunEntry, Score, System, UnresolvedRunEntry
from tests.builders import build_snapshot, write_run_file

DOCS = {f"d{i}": f"document number {i}" for i in range(8)}
TOPICS = {"1": "first query", "2": "second query", "3": "third query"}
QRELS = [("1", "d1", 1), ("1", "d2", 0), ("2", "d3", 2), ("3", "d4", 1)]
ROWS = [("1", "d1", 3.0), ("1", "d5", 2.0), ("1", "d2", 1.0), ("2", "d3", 1.5), ("2", "d0", 0.5)]


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    """Collection `c` with snapshot `s1`; returns the folder run files go to."""
    build_snapshot(tmp_path, "c", "s1", DOCS, TOPICS, QRELS)
    return tmp_path / "runs"


def _counts() -> dict[str, int]:
    with Database().session() as session:
        return {
            table.__tablename__: session.execute(
                select(func.count()).select_from(table)).scalar_one()
            for table in (Run, RunEntry, UnresolvedRunEntry, Score, Evaluation, System)
        }


def _entries(run_tag: str) -> list[tuple[int, int, float]]:
    with Database().session() as session:
        run_id = session.execute(select(Run.id).where(Run.tag == run_tag)).scalar_one()
        return [tuple(r) for r in session.execute(
            select(RunEntry.topic_id, RunEntry.rank, RunEntry.score)
            .where(RunEntry.run_id == run_id).order_by(RunEntry.topic_id, RunEntry.rank))]


def test_import_stores_entries_and_metadata(snap: Path, cli) -> None:
    path = write_run_file(snap, "bm25", ROWS)
    code, out, err = cli("run", "import", "c", "s1", path, "--system", "BM25", "--group", "uni",
                         "--run-type", "manual", "--contributed", "--category", "lexical", "--date",
                         "2024-05-01", "--description", "baseline", "--json")
    assert code == 0, err
    (report,) = json.loads(out)["runs"]
    assert report["status"] == "imported" and report["n_entries"] == 5
    assert report["n_unresolved"] == 0 and report["system"] == "BM25"
    with Database().session() as session:
        run = session.execute(select(Run)).scalar_one()
        assert (run.tag, run.group_name, run.run_type, run.contributed) == ("bm25", "uni",
                                                                            "manual", True)
        assert run.category.value == "lexical" and str(run.submitted) == "2024-05-01"
        assert run.description == "baseline" and run.n_entries == 5
        assert run.checksum is not None and len(run.checksum) == 64
    assert [(rank, score) for _, rank, score in _entries("bm25")] == [
        (1, 3.0), (2, 2.0), (3, 1.0), (1, 1.5), (2, 0.5)]
    code, out, _ = cli("run", "list", "c", "s1", "--json")
    (listed,) = json.loads(out)
    assert listed["run"] == "bm25" and listed["system"] == "BM25" and listed["n_entries"] == 5
    code, out, _ = cli("run", "list")
    assert code == 0 and "bm25" in out


def test_same_file_again_is_a_no_op(snap: Path, cli) -> None:
    path = write_run_file(snap, "bm25", ROWS)
    assert cli("run", "import", "c", "s1", path)[0] == 0
    before = _counts()
    code, out, _ = cli("run", "import", "c", "s1", path, "--json")
    assert code == 0 and json.loads(out)["runs"][0]["status"] == "unchanged"
    assert _counts() == before


def test_different_file_under_same_tag_is_refused_without_replace(snap: Path, cli) -> None:
    first = write_run_file(snap, "bm25", ROWS)
    assert cli("run", "import", "c", "s1", first)[0] == 0
    second = write_run_file(snap / "v2", "bm25", [("1", "d7", 9.0), ("3", "d4", 1.0)])
    code, _, err = cli("run", "import", "c", "s1", second)
    assert code == 1
    assert "already has run 'bm25'" in err and "--replace" in err and str(second) in err
    assert len(_entries("bm25")) == 5


def test_replace_keeps_the_run_id_and_drops_old_entries_and_scores(snap: Path, cli) -> None:
    from tcdb.scoring.evaluate import evaluate

    first = write_run_file(snap, "bm25", ROWS)
    assert cli("run", "import", "c", "s1", first)[0] == 0
    evaluate(Database(), "c", "s1", "original", ["AP", "P@10"])
    with Database().session() as session:
        old_id = session.execute(select(Run.id)).scalar_one()
    assert _counts()["score"] > 0 and _counts()["evaluation"] == 2
    second = write_run_file(snap / "v2", "bm25", [("1", "d7", 9.0), ("3", "d4", 1.0)])
    code, out, err = cli("run", "import", "c", "s1", second, "--replace", "--json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["status"] == "replaced"
    counts = _counts()
    assert counts["run"] == 1 and counts["run_entry"] == 2
    assert counts["score"] == 0 and counts["evaluation"] == 0
    with Database().session() as session:
        run = session.execute(select(Run)).scalar_one()
        assert run.id == old_id and run.n_entries == 2 and run.source == str(second.resolve())


def test_unknown_documents_are_kept_as_unresolved_when_allowed(snap: Path, cli) -> None:
    path = write_run_file(snap, "neural", [("1", "zz9", 5.0), ("1", "d1", 4.0), ("2", "zz8", 1.0)])
    code, out, err = cli("run", "import", "c", "s1", path, "--allow-unknown-docs")
    assert code == 0, err
    assert "2 entries name documents the snapshot does not have" in out
    counts = _counts()
    assert counts["run_entry"] == 1 and counts["run_entry_unresolved"] == 2
    with Database().session() as session:
        run = session.execute(select(Run)).scalar_one()
        assert (run.n_entries, run.n_unresolved) == (1, 2)
        unresolved = session.execute(select(UnresolvedRunEntry.external_doc_id,
                                            UnresolvedRunEntry.rank)
                                     .order_by(UnresolvedRunEntry.rank)).all()
    assert [tuple(u) for u in unresolved] == [("zz9", 1), ("zz8", 1)]


def test_gzip_run_and_several_files_at_once(snap: Path, cli) -> None:
    plain = write_run_file(snap, "a", ROWS)
    gz = snap / "b.run.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes().replace(b" a\n", b" b\n")))
    code, out, err = cli("run", "import", "c", "s1", plain, gz, "--json")
    assert code == 0, err
    assert [r["run"] for r in json.loads(out)["runs"]] == ["a", "b"]
    assert _counts()["run_entry"] == 10


def test_one_bad_file_among_several_writes_nothing(snap: Path, cli) -> None:
    good = write_run_file(snap, "good", ROWS)
    bad = write_run_file(snap, "bad", [("1", "d1", 1.0), ("9", "d2", 0.5)])
    code, _, err = cli("run", "import", "c", "s1", good, bad)
    assert code == 1 and f"{bad}:2:" in err
    assert _counts()["run"] == 0 and _counts()["run_entry"] == 0 and _counts()["system"] == 0


def test_system_links_runs_across_snapshots(snap: Path, tmp_path: Path, cli) -> None:
    build_snapshot(tmp_path, "c", "s2", DOCS, TOPICS, QRELS)
    a = write_run_file(snap / "s1", "bm25-jan", ROWS)
    b = write_run_file(snap / "s2", "bm25-feb", ROWS)
    assert cli("run", "import", "c", "s1", a, "--system", "BM25")[0] == 0
    assert cli("run", "import", "c", "s2", b, "--system", "BM25")[0] == 0
    with Database().session() as session:
        systems = session.execute(select(System.name)).scalars().all()
        run_systems = set(session.execute(select(Run.system_id)).scalars())
    assert systems == ["BM25"] and len(run_systems) == 1


def test_unknown_collection_or_snapshot_is_named(snap: Path, cli) -> None:
    path = write_run_file(snap, "bm25", ROWS)
    code, _, err = cli("run", "import", "c", "nope", path)
    assert code == 1 and "no complete snapshot 'nope'" in err and "s1" in err
    code, _, err = cli("run", "import", "zz", "s1", path)
    assert code == 1 and "no collection 'zz'" in err


# --- validation: each case names file, line and reason, and writes nothing -------------------

BAD_FILES = {
    "column_count": ("1 Q0 d1 1 2.0 run\n1 Q0 d2 2 1.0\n", 2, "expected 6"),
    "score_not_numeric": ("1 Q0 d1 1 2.0 run\n1 Q0 d2 2 high run\n", 2, "score 'high'"),
    "rank_not_numeric": ("1 Q0 d1 first 2.0 run\n", 1, "rank 'first'"),
    "nan_score": ("1 Q0 d1 1 2.0 run\n1 Q0 d2 2 nan run\n", 2, "not a finite number"),
    "inf_score": ("1 Q0 d1 1 inf run\n", 1, "not a finite number"),
    "duplicate_doc": ("1 Q0 d1 1 2.0 run\n1 Q0 d2 2 1.0 run\n1 Q0 d1 3 0.5 run\n", 3,
                      "appears twice for topic '1'"),
    "unknown_topic": ("1 Q0 d1 1 2.0 run\n2 Q0 d3 1 1.0 run\n42 Q0 d3 1 1.0 run\n", 3,
                      "topic '42' is not in snapshot 's1'"),
    "unknown_doc": ("1 Q0 d1 1 2.0 run\n1 Q0 nowhere 2 1.0 run\n", 2,
                    "document 'nowhere' (topic '1') is not in snapshot 's1'"),
    "empty_file": ("", None, "run file has no rows"),
    "mixed_tags": ("1 Q0 d1 1 2.0 runA\n1 Q0 d2 2 1.0 runB\n", 2, "run tag 'runB' differs"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_run_file_names_file_line_reason_and_writes_nothing(
    snap: Path, cli, case: str
) -> None:
    text, line, reason = BAD_FILES[case]
    snap.mkdir(parents=True, exist_ok=True)
    path = snap / f"{case}.run"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        from tcdb.api import run_import

        run_import("c", "s1", [path])
    assert caught.value.file == str(path)
    assert caught.value.line == line
    assert reason in caught.value.reason
    code, _, err = cli("run", "import", "c", "s1", path)
    where = f"{path}:{line}:" if line is not None else f"{path}:"
    assert code == 1 and where in err and reason in err
    assert _counts() == {"run": 0, "run_entry": 0, "run_entry_unresolved": 0, "score": 0,
                         "evaluation": 0, "system": 0}


def test_conflict_between_two_files_with_the_same_tag(snap: Path) -> None:
    from tcdb.api import run_import

    a = write_run_file(snap / "a", "same", ROWS)
    b = write_run_file(snap / "b", "same", ROWS[:2])
    more = [write_run_file(snap / f"m{i}", f"more{i}", ROWS) for i in range(5)]
    try:
        run_import("c", "s1", [a, b, *more])
    except ConflictError as exc:
        caught = exc  # its traceback keeps the import's frame, and the reader in it, alive
    assert "both hold run 'same'" in str(caught)
    assert _counts()["run"] == 0
    # the reader of the files still ahead stopped with the import all the same
    assert not [t for t in threading.enumerate() if t.name == "tcdb-run-reader"]


# --- housekeeping -----------------------------------------------------------------------------

def test_delete_run_and_snapshot_dependents_remove_rows_without_foreign_keys(snap: Path) -> None:
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import evaluate
    from tcdb.storage.housekeeping import delete_run, delete_snapshot_dependents

    a = run_import("c", "s1", [write_run_file(snap, "a", ROWS)]).runs[0]
    run_import("c", "s1", [write_run_file(snap, "b", [*ROWS, ("3", "zz", 0.1)])],
               allow_unknown_docs=True)
    evaluate(Database(), "c", "s1", "original", ["AP"])
    with Database().session() as session:
        delete_run(session, a.run_id)
    counts = _counts()
    assert counts["run"] == 1 and counts["run_entry"] == 5 and counts["run_entry_unresolved"] == 1
    assert counts["evaluation"] == 1
    with Database().session() as session:
        snapshot_id = session.execute(select(Run.snapshot_id)).scalar_one()
        delete_snapshot_dependents(session, snapshot_id, keep_runs=True)
    counts = _counts()
    assert counts["run"] == 1
    assert counts["run_entry"] == counts["run_entry_unresolved"] == counts["score"] == 0
    with Database().session() as session:
        delete_snapshot_dependents(session, snapshot_id)
    assert _counts()["run"] == 0


@pytest.mark.parametrize("distinct_scores", [5, 250, 10**9])
def test_eval_rank_is_trec_eval_order(distinct_scores: int) -> None:
    """Score descending, then document id descending, per topic — whatever the file's ranks;
    with every score tied, a few ties, or none."""
    import random

    from tcdb.runs import trec_eval_order

    rng = random.Random(5)
    rows = [(f"t{rng.randrange(4)}", f"d{rng.randrange(10**6):06d}-{i}",
             float(rng.randrange(distinct_scores))) for i in range(300)]
    _, ranks = trec_eval_order([r[0] for r in rows], [r[1] for r in rows],
                               [r[2] for r in rows])
    for topic in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == topic]
        expected = sorted(mine, key=lambda r: (r[2], r[1]), reverse=True)
        got = sorted(mine, key=lambda r: ranks[rows.index(r)])
        assert got == expected


@pytest.mark.parametrize("whole_index", [True, False])
def test_a_small_run_into_a_big_snapshot_looks_up_only_its_documents(
        db: str, tmp_path: Path, whole_index: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways of resolving ids store the same entries, ties ranked as trec_eval ranks them
    (document ids compared as strings: d10 before d9), unknown documents kept unresolved."""
    from tcdb.api import run_import
    from tcdb.runs import importing

    docs = {f"d{i}": f"document {i}" for i in range(3000)}
    build_snapshot(tmp_path, "c", "big", docs, TOPICS, QRELS)
    decided: list[bool] = []

    def spy(files: list[Path], n_documents: int) -> bool:
        decided.append(real(files, n_documents))
        return whole_index

    real = importing._names_much_of
    monkeypatch.setattr(importing, "_names_much_of", spy)
    rows = [("1", "d9", 1.0), ("1", "d10", 1.0), ("1", "d2999", 2.0), ("1", "nope", 1.0),
            ("2", "d5", 0.5), ("2", "d4", 0.5)]
    report = run_import("c", "big", [write_run_file(tmp_path / "runs", "small", rows)],
                        allow_unknown_docs=True).runs[0]
    assert decided == [False]  # 6 lines against 3,000 documents: look them up
    assert (report.n_entries, report.n_unresolved) == (5, 1)
    with Database().session() as session:
        ranked = session.execute(
            select(RunEntry.topic_id, RunEntry.eval_rank, RunEntry.score)
            .order_by(RunEntry.topic_id, RunEntry.eval_rank)).all()
        unresolved = session.execute(select(UnresolvedRunEntry.external_doc_id,
                                            UnresolvedRunEntry.eval_rank)).all()
    # trec_eval's order of the ties at 1.0, document ids by strcmp descending: nope, d9, d10
    assert [(rank, score) for _, rank, score in ranked] == [
        (1, 2.0), (3, 1.0), (4, 1.0), (1, 0.5), (2, 0.5)]
    assert [tuple(u) for u in unresolved] == [("nope", 2)]
