"""What every snapshot source is: its records, a description and a fingerprint.

Ingest (`tcdb.ingest`) sees only `SnapshotSource`: records to load, a description to store with
the snapshot, and a fingerprint to refuse "a different source under the same label" without
reading the data again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from tcdb.collections.sources.records import DocumentRecord, QrelRecord, Rejected, TopicRecord


@runtime_checkable
class SnapshotSource(Protocol):
    """A snapshot's documents, topics and (maybe) qrels, readable as many times as needed."""

    description: str  # what the snapshot row records as its source: "irds:<id>" or a path

    def fingerprint(self) -> str:
        """A cheap, stable identity of the content (file names, sizes, mtimes; never the data)."""
        ...

    def documents(self) -> Iterator[DocumentRecord | Rejected]:
        """The documents, streamed."""
        ...

    def topics(self) -> Iterator[TopicRecord | Rejected]:
        """The topics (empty when the source has none)."""
        ...

    def qrels(self) -> Iterator[QrelRecord | Rejected] | None:
        """The judgments, or None when the source has no qrels (a test snapshot before pooling)."""
        ...

    def documents_count_hint(self) -> int | None:
        """How many documents to expect, for a progress bar's total: from metadata, or counted
        cheaply (markers in plain bytes, no parsing); None when that would cost too much."""
        ...


def check_readable(source: SnapshotSource) -> None:
    """Read the first record of each of a source's streams, writing nothing: a source that
    must first download its files (ir_datasets) does so now, and one that cannot fails here,
    before anything of its collection is stored."""
    next(iter(source.topics()), None)
    qrels = source.qrels()
    if qrels is not None:
        next(iter(qrels), None)
    next(iter(source.documents()), None)
