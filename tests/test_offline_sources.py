"""A source that must be downloaded and cannot be (offline, a mirror down) fails in one line that
names the dataset, the sources tried and what to do offline, and leaves nothing behind: no
collection, no snapshot. The download is a real ir_datasets download from a local port nothing
listens on, so the test needs no network and fails the same way everywhere."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

DATASET = "tcdb-test/offline"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


@pytest.fixture
def offline_dataset(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """An ir_datasets dataset (TREC topics, qrels and documents) whose every file is to be
    downloaded from two mirrors that refuse the connection; yields the mirrors' URLs."""
    import ir_datasets
    from ir_datasets.formats import TrecDocs, TrecQrels, TrecQueries
    from ir_datasets.util import Download, RequestsDownload

    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")
    port = _closed_port()
    urls = [f"http://127.0.0.1:{port}/topics.xml", f"http://127.0.0.1:{port}/mirror/topics"]

    def download(name: str) -> Download:
        return Download([RequestsDownload(url.replace("topics", name)) for url in urls])

    dataset = ir_datasets.Dataset(TrecDocs(download("docs")), TrecQueries(download("topics")),
                                  TrecQrels(download("qrels"), {0: "no", 1: "yes"}))
    ir_datasets.registry.register(DATASET, dataset)
    try:
        yield urls
    finally:
        del ir_datasets.registry._registered[DATASET]


def _rows(url: str) -> tuple[int, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return (conn.execute(text("SELECT COUNT(*) FROM collection")).scalar_one(),
                    conn.execute(text("SELECT COUNT(*) FROM snapshot")).scalar_one())
    finally:
        engine.dispose()


def test_a_spec_whose_data_cannot_be_downloaded_fails_in_one_line_leaving_nothing(
    cli, db: str, tmp_path: Path, offline_dataset: list[str]
) -> None:
    spec = tmp_path / "offline.yaml"
    spec.write_text(f"name: offline\nsnapshots:\n  - {{label: r1, irds: {DATASET}}}\n",
                    encoding="utf-8")
    code, out, err = cli("collection", "sync", str(spec), "--ingest")
    assert code == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err  # ir_datasets' own lines for each failed try are left out
    line = lines[0]
    assert line.startswith(f"error: ir_datasets {DATASET}:") and "Traceback" not in err
    assert all(url in line for url in offline_dataset)  # the sources tried
    assert "Connection refused" in line and "Offline" in line and "IR_DATASETS_HOME" in line
    assert _rows(db) == (0, 0)  # no collection, no snapshot


def test_an_existing_collection_keeps_no_snapshot_of_a_failed_download(
    cli, db: str, tmp_path: Path, offline_dataset: list[str]
) -> None:
    code, _, err = cli("collection", "add", "offline")
    assert code == 0, err
    code, _, err = cli("snapshot", "ingest", "offline", "r1", "--irds", DATASET)
    assert code == 1 and f"error: ir_datasets {DATASET}:" in err and "Traceback" not in err
    assert _rows(db) == (1, 0)
