"""Ingest a snapshot: documents as versions, topics, and the snapshot's original qrels.

`snapshot` holds the transaction (`ingest_snapshot`), `documents` and `topics` the writers,
`versions` the pure hashing that identifies a document version.
"""

from tcdb.ingest.report import IngestReport
from tcdb.ingest.snapshot import ingest_snapshot, pending_snapshots
from tcdb.ingest.versions import content_hash, normalise_text, version_of

__all__ = [
    "IngestReport", "content_hash", "ingest_snapshot", "normalise_text", "pending_snapshots",
    "version_of",
]
