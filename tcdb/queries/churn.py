"""How one snapshot's documents became another's, as a handful of counted rows.

One row per (source label in a, source label in b, state), state one of `added`, `removed`,
`unchanged`, or — text changed — `grew`, `shrank`, `same_length` (characters of the normalised
text). Every document figure of `snapshot diff` and `snapshot stats` derives from these rows
(`drift_counts`, `drift_by_source`, `length_counts`), so one pass over the two memberships
answers them all. The ingest keeps the rows of each new snapshot against the one before it
(`snapshot_churn`); `churn_rows` reads them, and counts a pair without them live.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from sqlalchemy import Connection, text

UNLABELLED = "unlabelled"  # the source of documents no label names
CHANGED = ("grew", "shrank", "same_length")


class ChurnRow(NamedTuple):
    source_a: str | None  # None: unlabelled, or absent from a (added)
    source_b: str | None  # None: unlabelled, or absent from b (removed)
    state: str
    n: int


# Versions are looked up only for documents whose version changed (the CASE's last branches).
_LIVE = text(
    "SELECT a.source_label, b.source_label, CASE WHEN b.document_id IS NULL THEN 'removed'"
    " WHEN a.content_id = b.content_id THEN 'unchanged'"
    " WHEN cb.length > ca.length THEN 'grew' WHEN cb.length < ca.length THEN 'shrank'"
    " ELSE 'same_length' END AS state, COUNT(*)"
    " FROM snapshot_document a"
    " LEFT JOIN snapshot_document b ON b.document_id = a.document_id AND b.snapshot_id = :b"
    " LEFT JOIN content ca ON ca.id = a.content_id AND a.content_id <> b.content_id"
    " LEFT JOIN content cb ON cb.id = b.content_id AND a.content_id <> b.content_id"
    " WHERE a.snapshot_id = :a GROUP BY a.source_label, b.source_label, state"
    " UNION ALL"
    " SELECT NULL, b.source_label, 'added', COUNT(*) FROM snapshot_document b"
    " WHERE b.snapshot_id = :b AND NOT EXISTS (SELECT 1 FROM snapshot_document a"
    " WHERE a.snapshot_id = :a AND a.document_id = b.document_id) GROUP BY b.source_label")


def count_churn(conn: Connection, a: int, b: int) -> list[ChurnRow]:
    """The churn from snapshot `a` to `b`, counted from their memberships (two joins).

    PostgreSQL's JIT compiler is switched off for the rest of the transaction: compiling this
    plan took longer than it saved (~20 % of the query at 2 × 1,000,000 documents)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SET LOCAL jit = off"))
    return [ChurnRow(sa, sb, state, int(n)) for sa, sb, state, n
            in conn.execute(_LIVE, {"a": a, "b": b}) if int(n)]


def stored_churn(conn: Connection, a: int, b: int) -> list[ChurnRow] | None:
    """The rows the ingest kept for the pair, None when it kept none."""
    rows = [ChurnRow(sa, sb, state, int(n)) for sa, sb, state, n in conn.execute(text(
        "SELECT source_a, source_b, state, n FROM snapshot_churn"
        " WHERE snapshot_a_id = :a AND snapshot_b_id = :b"), {"a": a, "b": b})]
    return rows or None  # a snapshot has documents: a counted pair has at least one row


def churn_rows(conn: Connection, a: int, b: int) -> list[ChurnRow]:
    """The pair's kept rows, or counted now."""
    stored = stored_churn(conn, a, b)
    return stored if stored is not None else count_churn(conn, a, b)


def drift_counts(rows: Iterable[ChurnRow]) -> dict[str, int]:
    """Documents added / removed / changed / unchanged, and the two snapshots' sizes."""
    by_state = _by_state(rows)
    changed = sum(by_state[s] for s in CHANGED)
    kept = changed + by_state["unchanged"]
    return {"added": by_state["added"], "removed": by_state["removed"], "changed": changed,
            "unchanged": by_state["unchanged"], "before": kept + by_state["removed"],
            "after": kept + by_state["added"]}


def length_counts(rows: Iterable[ChurnRow]) -> dict[str, int]:
    """Documents kept unchanged, and the changed ones by length direction."""
    by_state = _by_state(rows)
    return {"unchanged": by_state["unchanged"], "grew": by_state["grew"],
            "shrank": by_state["shrank"], "same_length": by_state["same_length"]}


def drift_by_source(rows: Iterable[ChurnRow]) -> dict[str, dict[str, int]]:
    """`drift_counts` per source label (`unlabelled` for none); {} when no document of either
    snapshot is labelled. Removed documents count under their label in a, the others under
    their label in b; `relabelled` counts documents of both whose label changed."""
    out: dict[str, dict[str, int]] = {}

    def entry(label: str | None) -> dict[str, int]:
        return out.setdefault(label or UNLABELLED, {
            "added": 0, "removed": 0, "changed": 0, "unchanged": 0, "relabelled": 0,
            "before": 0, "after": 0})

    for source_a, source_b, state, n in rows:
        if state != "added":
            entry(source_a)["before"] += n
        if state == "removed":
            entry(source_a)["removed"] += n
            continue
        row = entry(source_b)
        row["after"] += n
        if state == "added":
            row["added"] += n
            continue
        row["unchanged" if state == "unchanged" else "changed"] += n
        if (source_a or "") != (source_b or ""):
            row["relabelled"] += n
    if set(out) <= {UNLABELLED}:
        return {}
    return dict(sorted(out.items()))


def _by_state(rows: Iterable[ChurnRow]) -> dict[str, int]:
    totals = dict.fromkeys(("added", "removed", "unchanged", *CHANGED), 0)
    for row in rows:
        totals[row.state] += row.n
    return totals
