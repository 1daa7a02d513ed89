"""A change tcdb makes to the user's text is counted and said: NUL (and the other control
characters neither database stores in text) removed from a document or a topic's query is in the
ingest's summary and its --json, never silent. On both databases, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path


def test_removed_characters_are_counted_and_said(cli, db: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text(
        '{"_id": "d1", "text": "clean text"}\n'
        '{"_id": "d2", "text": "a\\u0000b\\u0000c"}\n'
        '{"_id": "d3", "text": "bell\\u0007 here"}\n', encoding="utf-8")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tparis\x00 weather\nq2\ttrain strikes\n", encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics,
                         "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_documents_edited"], report["n_topics_edited"]) == (2, 1)
    assert report["n_characters_removed"] == 3 + 1  # two NULs and a BEL, and one NUL
    said = " ".join(report["warnings"])
    assert "2 document text(s) changed by the reader: 3 control character(s)" in said
    assert "1 topic(s) stored without 1 character(s)" in said and "'q1'" in said

    code, out, err = cli("snapshot", "ingest", "c", "s2", "--docs", docs, "--topics", topics)
    assert code == 0, err
    assert "2 document text(s) changed by the reader: 3 control character(s)" in out + err


def test_edits_are_counted_across_parallel_readers(
    cli, db: str, tmp_path: Path, monkeypatch
) -> None:
    """Two JSONL files read by two reader processes: the counts of both reach the summary."""
    monkeypatch.setenv("TCDB_READERS", "2")
    folder = tmp_path / "docs"
    folder.mkdir()
    for part in (1, 2):
        (folder / f"part{part}.jsonl").write_text("".join(
            f'{{"_id": "d{part}-{i}", "text": "text\\u0000 {i}"}}\n' for i in range(3)),
            encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", folder, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_documents"], report["n_documents_edited"],
            report["n_characters_removed"]) == (6, 6, 6)


def test_the_counts_stay_on_the_snapshot(cli, db: str, tmp_path: Path) -> None:
    """The snapshot's record keeps what its readers changed: `snapshot list` says it later."""
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"_id": "d1", "text": "a\\u0000b"}\n{"_id": "d2", "text": "ok"}\n',
                    encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "ingest", "c", "s1", "--docs", docs)[0] == 0
    code, out, err = cli("snapshot", "list", "--json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["documents_edited"], row["topics_edited"], row["characters_removed"]) == (1, 0, 1)
    code, out, err = cli("snapshot", "list")
    assert "note: c/s1: 1 document text(s) and 0 topic(s) changed by their reader" in out


def test_trec_sgml_nul_made_u_fffd_is_counted(cli, db: str, tmp_path: Path) -> None:
    """TREC SGML as ir_datasets reads it: lxml makes U+FFFD of a NUL. Kept (fidelity with
    TrecDocs), but counted and said like every reader's change."""
    docs = tmp_path / "docs.trec"
    docs.write_bytes(b"<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>\na\x00b\x00c &amp; d\n</TEXT>\n</DOC>\n"
                     b"<DOC>\n<DOCNO>d2</DOCNO>\n<TEXT>\nplain\n</TEXT>\n</DOC>\n")
    assert cli("collection", "add", "c")[0] == 0
    code, out, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_documents_edited"], report["n_characters_removed"]) == (1, 2)
    assert "made U+FFFD" in " ".join(report["warnings"])
