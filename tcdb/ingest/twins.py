"""Twins within a snapshot: every document that names the original it was rewritten from
(`twin_of`) must name another document of the same snapshot.

Checked once, after all of a snapshot's documents are written (an original may come after its
rewrite in the file), inside the ingest's transaction: a bad twin rolls the snapshot back.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

from tcdb.errors import InputError
from tcdb.schema import Snapshot

_BAD_TWINS = text(
    "SELECT d.external_id, d.twin_of, o.document_id = d.document_id FROM snapshot_document d "
    "LEFT JOIN snapshot_document o ON o.snapshot_id = d.snapshot_id "
    "AND o.external_id = d.twin_of "
    "WHERE d.snapshot_id = :s AND d.twin_of IS NOT NULL "
    "AND (o.document_id IS NULL OR o.document_id = d.document_id) "
    "ORDER BY d.external_id")


def check_twins(conn: Connection, snap: Snapshot, where: str) -> None:
    """Raise `InputError` naming the first documents whose twin is missing or themselves."""
    bad = conn.execute(_BAD_TWINS, {"s": snap.pk}).all()
    if not bad:
        return
    external, twin, itself = bad[0]
    reason = "names itself" if itself else f"is not in snapshot {snap.label!r}"
    shown = ", ".join(f"{e!r} → {t!r}" for e, t, _ in bad[:5])
    more = f" and {len(bad) - 5:,} more" if len(bad) > 5 else ""
    raise InputError(where, None, f"document {external!r} is the twin of {twin!r}, which "
                     f"{reason}: {len(bad):,} document(s) name a twin that is not another "
                     f"document of the snapshot ({shown}{more})")
