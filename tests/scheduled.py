"""A user's collection spec with a schedule seconds apart, over one LongEval-shaped snapshot in
the layout ir-datasets-longeval reads: what the scheduled-ingestion tests register."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, text

from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web

COLLECTION = "my-longeval"
N_DOCS = 12
DOCS = [DocumentRecord(f"{100 + i}", f"page {i} about trains and weather",
                       url=f"https://example.fr/{i}") for i in range(N_DOCS)]
TOPICS = [TopicRecord("q1", "train strikes"), TopicRecord("q2", "paris weather")]
QRELS = [QrelRecord("q1", "100", 2), QrelRecord("q1", "101", 0), QrelRecord("q2", "102", 1)]


def write_scheduled_spec(folder: Path, irds_home: Path, interval: int) -> Path:
    """`folder/my.yaml`, declaring snapshot 2022-06 (written under `irds_home`), ingested every
    `interval` seconds."""
    write_longeval_web(irds_home, {"2022-06": LongEvalSnapshot(DOCS, TOPICS, QRELS)})
    spec = folder / "my.yaml"
    spec.write_text(
        f"name: {COLLECTION}\ndoc_identity: url\ntopic_identity: text\nid_fallback: true\n"
        f"grades: [0, 2]\nschedule: {{interval: {interval}}}\nsnapshots:\n"
        '  - {label: "2022-06", date: 2022-06-01, irds: longeval-web/2022-06}\n',
        encoding="utf-8")
    return spec


def snapshot_rows(url: str) -> list[tuple[str, str, int]]:
    """(label, status, documents) of every snapshot, read with plain SQL, not through tcdb."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [(str(label), str(status), int(count)) for label, status, count in
                    conn.execute(text(
                        "SELECT s.label, s.status, COUNT(d.document_id) FROM snapshot s "
                        "LEFT JOIN snapshot_document d ON d.snapshot_id = s.id "
                        "GROUP BY s.label, s.status ORDER BY s.label"))]
    finally:
        engine.dispose()
