"""An empty source is not a snapshot: `tcdb snapshot ingest` refuses it (the bad-input corpus
shows the messages), and the scheduled flow — which ingests what `pending_snapshots` says is
ready — skips it with the reason and tries again on its next run, instead of ingesting a
`complete` snapshot of 0 documents that it would never look at again.

Also: a `failed` row an older tcdb left behind is replaced by the next ingest.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sqlmodel import select

from tcdb.operations import Database
from tests.builders import write_documents, write_topics


def _spec(folder: Path, docs: Path) -> Path:
    spec = folder / "spec.yaml"
    spec.write_text(
        "name: web\ndoc_identity: url\nid_fallback: true\nsnapshots:\n"
        "  - {label: '2022-06', irds: longeval-web/2022-06}\n"
        "  - {label: '2022-07', irds: longeval-web/2022-07}\n"
        f"  - {{label: local, docs: '{docs}'}}\n", encoding="utf-8")
    return spec


def test_an_empty_source_is_pending_with_its_reason_until_it_fills(
        db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb.collections.sources.records import DocumentRecord
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
    from tcdb.ingest import pending_snapshots

    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    layout = write_longeval_web(home, {"2022-06": LongEvalSnapshot([DocumentRecord("1", "un")])})
    local = tmp_path / "local-docs"
    local.mkdir()  # declared, and its folder made, before the data arrives
    spec = _spec(tmp_path, local)
    reasons = {snap.label: reason for snap, reason in pending_snapshots(Database(), spec)}
    assert reasons["2022-06"] is None
    assert reasons["2022-07"] == (f"ir_datasets longeval-web/2022-07: "
                                  f"{layout.trec_dir('2022-07')} holds no documents yet")
    assert reasons["local"] == f"documents folder {local} holds no files yet"
    write_documents(local / "docs.trec", {"a": "now it has one"})
    reasons = {snap.label: reason for snap, reason in pending_snapshots(Database(), spec)}
    assert reasons["local"] is None


def test_a_failed_row_of_an_older_tcdb_is_replaced_by_the_next_ingest(db: str,
                                                                      tmp_path: Path) -> None:
    from tcdb.catalog.collections import add_collection, list_snapshots
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot
    from tcdb.schema import Snapshot, SnapshotStatus

    coll = add_collection(Database(), "c")
    with Database().session() as session:
        session.add(Snapshot(collection_id=coll.pk, label="s1", source="old",
                             source_fingerprint="x", status=SnapshotStatus.failed,
                             error="what an older tcdb recorded"))
    docs = write_documents(tmp_path / "docs.trec", {"a": "one", "b": "two"})
    topics = write_topics(tmp_path / "topics.tsv", {"q1": "query"})
    report = ingest_snapshot(Database(),
                             "c", "s1", LocalSource(docs, topics), date=dt.date(2024, 1, 1))
    assert report.status == "ingested" and report.n_documents == 2
    assert [(s["label"], s["status"], s["documents"]) for s in list_snapshots(Database(), "c")] == [
        ("s1", "complete", 2)]
    with Database().session() as session:
        assert len(session.exec(select(Snapshot)).all()) == 1
