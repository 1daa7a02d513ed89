"""Big official files with a few bad lines (issue 43, Build 5): `--on-bad-lines error|warn|skip`
(pandas' words) on a snapshot's documents (JSONL, TREC SGML), topics (TSV, JSONL) and qrels.
`error` stays the default and names the flag; `warn`/`skip` set each bad line aside into the
rejects file with its file, line and reason, count them in the summary and on the snapshot,
and import the rest exactly. On both databases, through the CLI."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text


def _stored_ids(url: str, label: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return set(conn.execute(text(
                "SELECT d.key FROM snapshot_document m JOIN document d ON d.id = m.document_id "
                "JOIN snapshot s ON s.id = m.snapshot_id WHERE s.label = :label"),
                {"label": label}).scalars())
    finally:
        engine.dispose()


def _rows(url: str, table: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


def test_25_bad_lines_among_50000(cli, db: str, tmp_path: Path, monkeypatch) -> None:
    """TREC-COVID's round-1 id list has author names such as `A.; Bennett` among its ids."""
    monkeypatch.chdir(tmp_path)
    rng = random.Random(43)
    bad = set(rng.sample(range(50_000), 25))
    docs = tmp_path / "docs.jsonl"
    with docs.open("w", encoding="utf-8") as out:
        for i in range(50_000):
            doc_id = f"A.; Bennett{i}" if i in bad else f"d{i}"
            out.write(json.dumps({"_id": doc_id, "text": f"text {i}"}) + "\n")
    expected_ids = {f"d{i}" for i in range(50_000) if i not in bad}  # by hand, not by tcdb
    expected_lines = sorted(i + 1 for i in bad)
    assert cli("collection", "add", "c")[0] == 0

    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs)
    assert code == 1
    said = err.strip().splitlines()
    assert len(said) == 1 and f"docs.jsonl:{expected_lines[0]}:" in said[0]
    assert "--on-bad-lines warn|skip" in said[0] and "Traceback" not in err
    assert _rows(db, "snapshot") == 0 and _rows(db, "document") == 0  # nothing written

    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs,
                         "--on-bad-lines", "skip", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_rejected"] == 25 and report["n_documents"] == 50_000 - 25
    rejects = tmp_path / "s1.rejects.tsv"
    assert report["rejects_file"] == str(rejects)
    with rejects.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    assert rows[0] == ["file", "line", "reason"]
    assert [int(r[1]) for r in rows[1:]] == expected_lines
    assert all(r[0] == str(docs) and "contains whitespace" in r[2] for r in rows[1:])
    assert _stored_ids(db, "s1") == expected_ids

    code, out, _ = cli("snapshot", "list", "--json")
    assert json.loads(out)[0]["rejected"] == 25


def test_trec_sgml_documents_set_aside_under_warn(cli, db: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs.trec"
    docs.write_text(
        "<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>\none\n</TEXT>\n</DOC>\n"          # lines 1-6
        "<DOC>\n<TEXT>\nno id\n</TEXT>\n</DOC>\n"                         # 7-11
        "<DOC>\n<DOCNO>A.; B</DOCNO>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"       # 12-17
        "<DOC>\n<DOCNO>d2</DOCNO>\n<TEXT>\ntwo\n</TEXT>\n</DOC>\n"        # 18-23
        "<DOC>\n<DOCNO>d3</DOCNO>\n<TEXT>\ncut off\n", encoding="utf-8")  # 24-27
    rejects = tmp_path / "out" / "r.tsv"
    rejects.parent.mkdir()
    assert cli("collection", "add", "c")[0] == 0
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--on-bad-lines",
                         "warn", "--rejects", rejects, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_documents"], report["n_rejected"]) == (2, 3)
    said = " ".join(report["warnings"])
    assert f"{docs}:7: document without <DOCNO>" in said  # warn names each (the first few)
    assert f"{docs}:13: document id 'A.; B' contains whitespace" in said
    assert f"{docs}:24: document not closed" in said
    assert _stored_ids(db, "s1") == {"d1", "d2"}
    assert len(rejects.read_text(encoding="utf-8").splitlines()) == 1 + 3


def test_topics_and_qrels_bad_lines(cli, db: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"_id": f"d{i}", "text": f"t {i}"}) + "\n"
                            for i in range(5)), encoding="utf-8")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tone\nq 2\ttwo\nq3\tthree\tand more\nq4\tfour\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 x\nq4 0 d3 2\nq4 0 d4\n", encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics,
                         "--qrels", qrels)
    assert code == 1 and "topics.tsv:2:" in err and "--on-bad-lines" in err
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics,
                         "--qrels", qrels, "--on-bad-lines", "skip", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_topics"], report["n_judgments"], report["n_rejected"]) == (2, 2, 4)
    with (tmp_path / "s1.rejects.tsv").open(newline="", encoding="utf-8") as handle:
        places = [(Path(r[0]).name, r[1]) for r in list(csv.reader(handle, delimiter="\t"))[1:]]
    assert sorted(places) == [("qrels.txt", "2"), ("qrels.txt", "4"), ("topics.tsv", "2"),
                              ("topics.tsv", "3")]


@pytest.mark.parametrize("mode", ["warn", "skip"])
def test_a_source_it_cannot_apply_to_is_refused(cli, db: str, tmp_path: Path,
                                                mode: str) -> None:
    assert cli("collection", "add", "c")[0] == 0
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--irds", "vaswani",
                       "--on-bad-lines", mode)
    assert code != 0 and "--on-bad-lines" in err and "Traceback" not in err


def test_run_file_bad_lines(cli, db: str, tmp_path: Path, monkeypatch) -> None:
    """A run's bad lines: refused naming the flag, or set aside; the rest imported exactly."""
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"_id": f"d{i}", "text": f"t {i}"}) + "\n"
                            for i in range(8)), encoding="utf-8")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tone\nq2\ttwo\n", encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics)[0] == 0
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 x r\nq1 Q0 d3 3 1.0 r\nq2 Q0 d4 1 2 r\n"
                   "q2 Q0 d5 2\nq2 Q0 d6 3 0.5 other\nq2 Q0 d4 4 0.1 r\n", encoding="utf-8")
    code, out, err = cli("run", "import", "c", "s1", run)
    assert code == 1 and "r.run:2: score 'x' is not a number" in err
    assert "--on-bad-lines warn|skip" in err and _rows(db, "run") == 0
    code, out, err = cli("run", "import", "c", "s1", run, "--on-bad-lines", "skip", "--json")
    assert code == 0, err
    (imported,) = json.loads(out)["runs"]
    assert (imported["n_entries"], imported["n_rejected"]) == (3, 4)
    with (tmp_path / "runs.rejects.tsv").open(newline="", encoding="utf-8") as handle:
        lines = [r[1] for r in list(csv.reader(handle, delimiter="\t"))[1:]]
    assert lines == ["2", "5", "6", "7"]  # bad score, 4 columns, a second tag, d4 again
    assert _rows(db, "run_entry") == 3


def test_results_table_bad_rows(cli, db: str, tmp_path: Path, monkeypatch) -> None:
    """An organiser's results table with a bad value and a repeated row: refused naming the
    flag, or those rows set aside and the others stored."""
    monkeypatch.chdir(tmp_path)
    table = tmp_path / "results.csv"
    table.write_text("team,run,snapshot,nDCG@10\n"
                     "A,bm25,s1,0.31\nA,dense,s1,1.7\nB,bm25,s1,0.29\nA,bm25,s1,0.33\n",
                     encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "register", "c", "s1")[0] == 0
    code, _, err = cli("results", "import", "c", table)
    assert code == 1 and "results.csv:3:" in err and "--on-bad-lines" in err
    code, out, err = cli("results", "import", "c", table, "--on-bad-lines", "skip", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_rows"], report["n_rejected"], report["n_added"]) == (2, 2, 2)
    with (tmp_path / "results.csv.rejects.tsv").open(newline="", encoding="utf-8") as handle:
        assert [r[1] for r in list(csv.reader(handle, delimiter="\t"))[1:]] == ["3", "5"]
    assert _rows(db, "published_result") == 2
