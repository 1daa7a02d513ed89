"""`tcdb.storage.consistency.check_database` and `tcdb db check`, on SQLite and PostgreSQL: a
database filled through the public paths is consistent, and every corruption we can make by hand
behind tcdb's back — a row deleted under the rows that refer to it, a count edited, a snapshot left
unfinished — is found, named by table and problem.

Corruptions go through a plain connection: on SQLite without `PRAGMA foreign_keys` (as any
other tool would write), on PostgreSQL with its FOREIGN KEYs cascading as declared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tcdb.operations import Database
from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.databases import BACKENDS
from tests.reliability.kill_harness import Backend, PostgresBackend, SqliteBackend
from tests.reliability.kill_operations import default_database

TOPICS = {"q1": "first query", "q2": "second query", "q3": "third query"}
DOCS = {f"d{i}": f"document {i} on query words {i % 3}" for i in range(30)}


def _fill(folder: Path) -> None:
    """Two snapshots of one collection, three runs, scores, a judged pool and its expansion,
    and a second collection: a row in every table the checks look at."""
    from tcdb.api import pool_build, pool_import_judgments, run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.scoring.evaluate import evaluate

    add_collection(Database(), "c", grade_min=0, grade_max=2)
    add_collection(Database(), "other")
    qrels = write_qrels_file(folder / "qrels.txt",
                             [(t, f"d{i}", i % 3) for t in TOPICS for i in range(6)])
    s1 = LocalSource(write_documents(folder / "s1.trec", DOCS),
                     write_topics(folder / "s1.tsv", TOPICS), qrels)
    ingest_snapshot(Database(), "c", "s1", s1)
    s2 = LocalSource(write_documents(folder / "s2.trec", {**DOCS, "x1": "only in s2"}),
                     write_topics(folder / "s2.tsv", {**TOPICS, "qx": "only in s2"}), qrels)
    ingest_snapshot(Database(), "c", "s2", s2)
    ingest_snapshot(Database(), "other", "o1", LocalSource(write_documents(
        folder / "o1.trec", {f"y{i}": f"other {i}" for i in range(5)})))
    # Each run ranks d10…d29 (d29 last, below the pool's depth: in no pool, no judgment).
    runs = [write_run_file(folder / "runs", tag, [
        (t, f"d{10 + (i + k) % 19 if i < 19 else 29}", 50.0 - i)
        for t in TOPICS for i in range(20)]) for k, tag in enumerate(["r1", "r2"])]
    run_import("c", "s1", runs)
    run_import("c", "s2", [write_run_file(folder / "runs2", "r3", [
        (t, d, 9.0 - i) for t in TOPICS for i, d in enumerate(["x1", "d3", "d4"])])])
    evaluate(Database(), "c", "s1", "original", ["AP", "P@5"])
    evaluate(Database(), "c", "s2", "original", ["AP"])
    pool_build("c", "s1", "p", depth=10, all_runs=True, exclude_judged="original")
    pool_import_judgments("p", write_qrels_file(folder / "judged.txt", [("q1", "d10", 2),
                                                                   ("q2", "d11", 0)]),
                     expand="original", expanded_name="expanded")


@pytest.fixture(scope="module", params=BACKENDS)
def filled(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Backend, str]]:
    """A backend and its saved, filled database."""
    backend: Backend = (SqliteBackend(tmp_path_factory.mktemp("consistency"))
                        if request.param == "sqlite" else PostgresBackend())
    url = backend.new()
    with default_database(url):
        _fill(tmp_path_factory.mktemp("consistency-files"))
    yield backend, backend.save(url)
    backend.close()


@pytest.fixture
def database(filled: tuple[Backend, str]) -> Iterator[str]:
    """A fresh copy of the filled database."""
    backend, saved = filled
    url = backend.restore(saved)
    yield url
    backend.drop(url)


def corrupt(url: str, *statements: str) -> None:
    """Change rows behind tcdb's back (see the module docstring)."""
    engine = create_engine(url)
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    engine.dispose()


RUN = "(SELECT id FROM run WHERE tag = '{}')"
TOPIC = "(SELECT id FROM topic WHERE key = '{}')"
DOC = "(SELECT id FROM document WHERE key = '{}')"
SNAP = "(SELECT id FROM snapshot WHERE label = '{}')"
QRELS = "(SELECT id FROM qrels_set WHERE name = '{}' AND snapshot_id = " + SNAP + ")"
MEASURE = "(SELECT id FROM measure WHERE name = '{}')"
ONE_ENTRY = (f"run_id = {RUN.format('r1')} AND topic_id = {TOPIC.format('q1')} "
             "AND eval_rank = 1")

# (case, SQL, findings it must cause: (table, the problem's first words))
CASES: list[tuple[str, list[str], set[tuple[str, str]]]] = [
    ("run deleted under its entries and scores", ["DELETE FROM run WHERE tag = 'r1'"],
     {("run_entry", "run_id refers to no run"), ("score", "run_id refers to no run")}),
    ("document deleted under its memberships and entries", [
        "DELETE FROM document WHERE key = 'd29' AND collection_id = "
        "(SELECT id FROM collection WHERE name = 'c')"],
     {("snapshot_document", "document_id refers to no document"),
      ("run_entry", "document_id refers to no document")}),
    ("entry of a topic that does not exist", [
        f"UPDATE run_entry SET topic_id = 999999 WHERE {ONE_ENTRY}"],
     {("run_entry", "topic_id refers to no topic"),
      ("run_entry", "topic is not in the run's snapshot")}),
    ("entry of a document of another snapshot", [
        f"UPDATE run_entry SET document_id = {DOC.format('x1')} WHERE {ONE_ENTRY}"],
     {("run_entry", "document is not in the run's snapshot")}),
    ("snapshot left ingesting", ["UPDATE snapshot SET status = 'ingesting' WHERE label = 's2'"],
     {("snapshot", "snapshot is not complete")}),
    ("failed snapshot row left behind", [
        "INSERT INTO snapshot (collection_id, label, source, source_fingerprint, ordinal, "
        "status, with_text, n_documents, n_topics, n_judgments, created_at) SELECT id, 'bad', "
        "'x', 'x', 9, 'failed', true, 0, 0, 0, CURRENT_TIMESTAMP FROM collection "
        "WHERE name = 'c'"],
     {("snapshot", "snapshot is not complete")}),
    ("run's entry count edited", ["UPDATE run SET n_entries = n_entries + 1 WHERE tag = 'r2'"],
     {("run", "n_entries differs")}),
    ("a run entry deleted", [f"DELETE FROM run_entry WHERE {ONE_ENTRY}"],
     {("run", "n_entries differs")}),
    ("a membership deleted", [
        f"DELETE FROM snapshot_document WHERE snapshot_id = {SNAP.format('s2')} AND "
        f"document_id = {DOC.format('d0')}"],
     {("snapshot", "n_documents differs")}),
    ("a snapshot topic deleted", [
        f"DELETE FROM snapshot_topic WHERE topic_id = {TOPIC.format('qx')}"],
     {("snapshot", "n_topics differs")}),
    ("a pool entry deleted", [
        "DELETE FROM pool_entry WHERE document_id = " + DOC.format("d10") + " AND topic_id = "
        + TOPIC.format("q2")],
     {("pool", "n_documents differs")}),
    ("a judgment deleted", [
        f"DELETE FROM judgment WHERE qrels_set_id = {QRELS.format('original', 's1')} AND "
        f"document_id = {DOC.format('d1')}"],
     {("qrels_set", "n_judgments differs")}),
    ("a score deleted", [
        f"DELETE FROM score WHERE run_id = {RUN.format('r1')} AND topic_id = "
        f"{TOPIC.format('q1')} AND measure_id = {MEASURE.format('AP')}"],
     {("evaluation", "n_topics differs")}),
    ("evaluation rows deleted", [f"DELETE FROM evaluation WHERE run_id = {RUN.format('r1')}"],
     {("score", "score has no evaluation row")}),
    ("score of a missing measure and residual set", [
        f"UPDATE score SET measure_id = 999, residual_of_id = 999 WHERE run_id = "
        f"{RUN.format('r2')} AND measure_id = {MEASURE.format('AP')}"],
     {("score", "measure_id refers to no measure"),
      ("score", "residual_of_id refers to no qrels_set")}),
    ("snapshot deleted under its memberships", ["DELETE FROM snapshot WHERE label = 's2'"],
     {("snapshot_document", "snapshot_id refers to no snapshot")}),
    ("a version deleted", [
        f"DELETE FROM content WHERE id = (SELECT content_id FROM snapshot_document WHERE "
        f"document_id = {DOC.format('d29')} AND snapshot_id = {SNAP.format('s1')})"],
     {("snapshot_document", "content_id refers to no content")}),
    ("document moved to another collection", [
        "UPDATE document SET collection_id = (SELECT id FROM collection WHERE name = 'other') "
        "WHERE key = 'd1'"],
     {("snapshot_document", "document belongs to another collection"),
      ("judgment", "document belongs to another collection")}),
    ("document of a collection that does not exist", [
        "UPDATE document SET collection_id = 999 WHERE key = 'd2'"],
     {("document", "collection_id refers to no collection")}),
    ("original qrels renamed away", [
        "UPDATE snapshot SET original_qrels = 'gone' WHERE label = 's1'"],
     {("snapshot", "original_qrels names no qrels set"), ("snapshot", "n_judgments differs")}),
    ("pool entries of a missing pool, and of another snapshot's document", [
        f"UPDATE pool_entry SET pool_id = 999 WHERE topic_id = {TOPIC.format('q3')}",
        f"UPDATE pool_entry SET document_id = {DOC.format('x1')} WHERE topic_id = "
        f"{TOPIC.format('q1')} AND document_id = {DOC.format('d10')}"],
     {("pool_entry", "pool_id refers to no pool"), ("pool", "n_documents differs"),
      ("pool_entry", "document is not in the pool's snapshot")}),
    ("evaluation against another snapshot's qrels", [
        f"UPDATE evaluation SET qrels_set_id = {QRELS.format('original', 's2')} WHERE run_id = "
        f"{RUN.format('r1')} AND measure_id = {MEASURE.format('P@5')}",
        f"UPDATE score SET qrels_set_id = {QRELS.format('original', 's2')} WHERE run_id = "
        f"{RUN.format('r1')} AND measure_id = {MEASURE.format('P@5')}"],
     {("evaluation", "qrels set is of another snapshot")}),
    ("names stored before the naming rule", [
        "UPDATE run SET tag = ' padded' WHERE tag = 'r2'",
        "UPDATE qrels_set SET name = 'cafe\u0301' WHERE name = 'expanded'"],
     {("run", "tag breaks the naming rule"), ("qrels_set", "name breaks the naming rule")}),
]


def test_a_database_filled_through_the_public_paths_is_consistent(database: str) -> None:
    from tcdb.storage.consistency import check_database

    assert check_database(database) == []


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_a_corruption_is_found(database: str,
                               case: tuple[str, list[str], set[tuple[str, str]]]) -> None:
    from tcdb.storage.consistency import check_database

    _, statements, expected = case
    corrupt(database, *statements)
    findings = check_database(database)
    found = {(f.table, f.problem) for f in findings}
    for table, problem in expected:
        assert any(t == table and p.startswith(problem) for t, p in found), (table, problem,
                                                                              findings)
    assert all(f.count > 0 and f.example for f in findings)


def test_a_declared_foreign_key_broken_on_sqlite_is_found(database: str) -> None:
    """SQLite enforces FOREIGN KEYs only where a connection asked for them."""
    from tcdb.storage.consistency import check_database

    if not database.startswith("sqlite"):
        pytest.skip("PostgreSQL always enforces declared FOREIGN KEYs")
    corrupt(database, "DELETE FROM qrels_set WHERE name = 'expanded'")
    findings = check_database(database)
    assert [(f.table, f.problem) for f in findings if f.table == "judgment"] == [
        ("judgment", "FOREIGN KEY refers to no qrels_set row")]
    assert "qrels_set_id=" in str(findings[-1].example) or any(
        "qrels_set_id=" in str(f.example) for f in findings)


def test_db_check_prints_the_findings_and_exits_1(database: str, cli) -> None:
    code, out, err = cli("db", "check", "--database-url", database)
    assert (code, err) == (0, "") and out.strip().endswith("is consistent")
    corrupt(database, "UPDATE run SET n_entries = 7 WHERE tag = 'r2'",
            "UPDATE snapshot SET status = 'failed' WHERE label = 's2'")
    code, out, _ = cli("db", "check", "--database-url", database)
    assert code == 1
    assert "2 inconsistencies" in out and "n_entries differs" in out and "stored=7" in out
    code, out, _ = cli("db", "check", "--json", "--database-url", database)
    report = json.loads(out)
    assert code == 1 and report["consistent"] is False
    assert sorted((f["table"], f["count"]) for f in report["findings"]) == [("run", 1),
                                                                            ("snapshot", 1)]
