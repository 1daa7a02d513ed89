"""A qrels set keeps the checksum of its judgments (issue 31): written when the set is created
and when a pooled set grows, read by every report's lineage instead of hashing each judgment
again, computed once (and kept) for a set stored before sets kept it. The expected checksum is
computed here from the judgments as written to the qrels files, by the rule lineage states."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C = "sums"
DOCS = {f"d{i}": f"text {i}" for i in range(10)}
TOPICS = {"1": "one", "2": "two", "10": "ten"}
QRELS = [("1", "d1", 1), ("1", "d2", 0), ("2", "d5", 2), ("10", "d9", 1), ("10", "d3", 0)]


def sha256_of(judgments: Iterable[tuple[str, str, int]]) -> str:
    """The lineage rule by hand: `topic<TAB>doc<TAB>grade` lines, sorted as bytes."""
    lines = sorted(f"{t}\t{d}\t{g}\n".encode() for t, d, g in judgments)
    return hashlib.sha256(b"".join(lines)).hexdigest()


def _stored(name: str) -> str | None:
    with Database().session() as session:
        value = session.execute(text("SELECT judgments_checksum FROM qrels_set WHERE name = "
                                     ":n"), {"n": name}).scalar_one()
    return None if value is None else str(value)


def _set_stored(name: str, value: str | None) -> None:
    with Database().session() as session:
        session.execute(text("UPDATE qrels_set SET judgments_checksum = :v WHERE name = :n"),
                        {"v": value, "n": name})


def _lineage_checksum(qrels: str = "original") -> str:
    from tcdb import api

    result = api.scores(C, "s1", qrels=qrels, measures=["P@1"])
    assert result.lineage is not None
    (entry,) = result.lineage.qrels
    return entry.checksum


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    from tcdb.api import run_import

    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, QRELS)
    run_import(C, "s1", [write_run_file(tmp_path / "runs", "A",
                                       [("1", "d1", 2.0), ("2", "d4", 1.0), ("10", "d9", 1.0)])])
    return tmp_path


def test_lineage_states_the_checksum_of_the_judgments(snap: Path) -> None:
    want = sha256_of(QRELS)
    assert _stored("original") is None  # not hashed while the snapshot was being written
    assert _lineage_checksum() == want
    assert _stored("original") == want  # kept by the first report


def test_an_imported_set_keeps_its_checksum_and_its_file_checksum(snap: Path) -> None:
    from tcdb import api

    later = [("1", "d7", 2), ("2", "d5", 1)]
    path = write_qrels_file(snap / "later.txt", later)
    api.qrels_import(C, "s1", "later", path)
    lineage = api.scores(C, "s1", qrels="later", measures=["P@1"]).lineage
    assert _stored("later") == sha256_of(later)
    assert lineage is not None
    assert lineage.qrels[0].checksum == sha256_of(later)
    assert lineage.qrels[0].file_checksum == hashlib.sha256(path.read_bytes()).hexdigest()


def test_lineage_reads_the_kept_checksum_instead_of_hashing(snap: Path) -> None:
    """A value planted in the column is what lineage states: it did not hash the judgments."""
    planted = "f" * 64
    _set_stored("original", planted)
    assert _lineage_checksum() == planted


def test_a_set_without_one_is_hashed_once_and_kept(snap: Path) -> None:
    _set_stored("original", None)  # a set stored before sets kept their checksum
    assert _lineage_checksum() == sha256_of(QRELS)
    assert _stored("original") == sha256_of(QRELS)  # kept for the next report


def test_a_pooled_set_that_grows_gets_the_new_checksum(snap: Path) -> None:
    from tcdb.api import pool_build, pool_import_judgments, run_import

    run_import(C, "s1", [write_run_file(snap / "runs", "B", [("1", "d6", 1.0), ("10", "d8", 1.0)])])
    pool_build(C, "s1", "p", depth=1, all_runs=True, exclude_judged="original")
    first = [("2", "d4", 1)]
    pool_import_judgments("p", write_qrels_file(snap / "b1.txt", first))
    assert _lineage_checksum("p") == sha256_of(first)
    assert _stored("p") == sha256_of(first)
    second = [("1", "d6", 0), ("10", "d8", 2)]
    pool_import_judgments("p", write_qrels_file(snap / "b2.txt", second))
    assert _stored("p") is None  # the set grew: its kept checksum is forgotten
    assert _lineage_checksum("p") == sha256_of(first + second)
    assert _stored("p") == sha256_of(first + second)


def test_a_read_only_database_still_states_it(snap: Path, db: str) -> None:
    """Read-only (a dashboard's role, a read-only file): the checksum is computed, nothing is
    written, nothing fails."""
    from sqlmodel import Session

    from tcdb.operations.lineage import lineage_of
    from tcdb.storage.db import get_engine

    _set_stored("original", None)
    with Session(get_engine(db, read_only=True)) as session:
        lineage = lineage_of(Database(), C, qrels=[("s1", "original")], session=session)
    assert lineage.qrels[0].checksum == sha256_of(QRELS)
    assert _stored("original") is None


def test_evaluate_keeps_it_whether_or_not_it_wrote_scores(snap: Path) -> None:
    """evaluate builds its lineage in its write transaction: the checksum is kept there, so
    the database after it is the same whether the scores were computed now or found stored
    (on SQLite a second connection could not write while that transaction held the lock)."""
    from tcdb.api import evaluate

    for _ in range(2):  # computed, then found stored
        _set_stored("original", None)
        result = evaluate(C, "s1", qrels="original", measures=["P@1"])
        assert result.lineage is not None
        assert result.lineage.qrels[0].checksum == sha256_of(QRELS)
        assert _stored("original") == sha256_of(QRELS)
