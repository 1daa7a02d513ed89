"""Snapshot statistics as LongEval's collection table reports them: document token lengths,
documents present in every snapshot, judgments per topic by grade, and runs' empty or short
rankings (the churn figure, changed documents by length direction, is `tcdb.queries.churn`).

Read-only Core SQL over membership (`snapshot_document`), versions (`content`), judgments and
run entries; one aggregate query per figure, so it runs on a read-only role.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

Totals = tuple[int, int, int | None, int | None]  # documents counted, tokens, min, max


def token_lengths(conn: Connection, snapshot_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Per snapshot, whitespace tokens per document: mean, min, max over the documents whose
    count is known (`n_with_text`), else None figures.

    The ingest stores each version's count (`content.n_tokens`, `len(text.split())`, migration
    0011) and each snapshot's totals (`snapshot.tokens_*`, migration 0014), so a snapshot whose
    every document is counted costs one row here. Others (a version from before 0011 without a
    count) are aggregated live: see `live_token_totals`.
    """
    ids = ",".join(str(int(s)) for s in snapshot_ids) or "NULL"
    per_snapshot: dict[int, Totals] = {}
    live: list[int] = []
    for sid, documents, n, total, low, high in conn.execute(text(
            "SELECT id, n_documents, tokens_counted, tokens_total, tokens_min, tokens_max"
            f" FROM snapshot WHERE id IN ({ids})")):
        if n is None or int(n) < int(documents):  # not counted, or some count may come later
            live.append(int(sid))
        else:
            per_snapshot[int(sid)] = (int(n), int(total or 0), low, high)
    if live:
        per_snapshot.update(live_token_totals(conn, live))
    out = {}
    for sid in snapshot_ids:
        n, total, low, high = per_snapshot.get(int(sid), (0, 0, None, None))
        out[int(sid)] = {"n_with_text": n, "mean": float(total) / n if n else None,
                         "min": int(low) if low is not None else None,
                         "max": int(high) if high is not None else None}
    return out


def live_token_totals(conn: Connection, snapshot_ids: Sequence[int]) -> dict[int, Totals]:
    """Token totals aggregated from the snapshots' versions: one aggregate over membership and
    `content.n_tokens` (no texts read: ~90 s at 1,000,000 documents); versions written before
    0011 whose text the migration could not count are counted here from their text, if stored,
    with the same `str.split()`; versions with neither count nor text are left out."""
    ids = ",".join(str(int(s)) for s in snapshot_ids) or "NULL"
    per_snapshot: dict[int, Totals] = {}
    uncounted = 0  # memberships of versions without a count
    for sid, n, total, low, high, everyone in conn.execute(text(  # no text: rows stay narrow
            "SELECT sd.snapshot_id, COUNT(c.n_tokens), SUM(c.n_tokens), MIN(c.n_tokens),"
            " MAX(c.n_tokens), COUNT(*)"
            " FROM snapshot_document sd JOIN content c ON c.id = sd.content_id"
            f" WHERE sd.snapshot_id IN ({ids}) GROUP BY sd.snapshot_id")):
        per_snapshot[int(sid)] = (int(n), int(total or 0), low, high)
        uncounted += int(everyone) - int(n)
    for sid, body in conn.execute(text(  # only when some are: a second pass over versions
            "SELECT sd.snapshot_id, c.text FROM snapshot_document sd JOIN content c"
            f" ON c.id = sd.content_id WHERE sd.snapshot_id IN ({ids})"
            " AND c.n_tokens IS NULL AND c.text IS NOT NULL")) if uncounted else ():
        count = len(body.split())
        n, total, low, high = per_snapshot.get(int(sid), (0, 0, None, None))
        per_snapshot[int(sid)] = (n + 1, total + count,
                                  count if low is None else min(low, count),
                                  count if high is None else max(high, count))
    return per_snapshot


def present_in_all(conn: Connection, snapshot_ids: Sequence[int]) -> int:
    """Documents (by the collection's identity) present in every one of the snapshots."""
    ids = ",".join(str(int(s)) for s in snapshot_ids)
    return int(conn.execute(text(
        f"SELECT COUNT(*) FROM (SELECT document_id FROM snapshot_document WHERE snapshot_id IN "
        f"({ids}) GROUP BY document_id HAVING COUNT(*) = {len(set(snapshot_ids))}) t"
    )).scalar_one())


def judgments_by_grade(conn: Connection, qrels_set_id: int) -> dict[int, dict[int, int]]:
    """topic.id → grade → judgments, resolved and unresolved judgments together."""
    rows = conn.execute(text(
        "SELECT topic_id, grade, COUNT(*) FROM (SELECT topic_id, grade FROM judgment"
        " WHERE qrels_set_id = :q UNION ALL SELECT topic_id, grade FROM judgment_unresolved"
        " WHERE qrels_set_id = :q) j GROUP BY topic_id, grade"), {"q": qrels_set_id})
    out: dict[int, dict[int, int]] = {}
    for topic_id, grade, count in rows:
        out.setdefault(int(topic_id), {})[int(grade)] = int(count)
    return out


def ranking_lengths(conn: Connection, run_ids: Sequence[int]) -> dict[int, dict[int, int]]:
    """run id → topic.id → entries (resolved and unresolved) of each topic the run answers."""
    if not run_ids:
        return {}
    ids = ",".join(str(int(r)) for r in run_ids)
    rows = conn.execute(text(
        f"SELECT run_id, topic_id, COUNT(*) FROM (SELECT run_id, topic_id FROM run_entry "
        f"WHERE run_id IN ({ids}) UNION ALL SELECT run_id, topic_id FROM run_entry_unresolved "
        f"WHERE run_id IN ({ids})) e GROUP BY run_id, topic_id"))
    out: dict[int, dict[int, int]] = {}
    for run_id, topic_id, count in rows:
        out.setdefault(int(run_id), {})[int(topic_id)] = int(count)
    return out
