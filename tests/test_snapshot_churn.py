"""How one snapshot's documents became another's (`tcdb.queries.churn`), on SQLite and
PostgreSQL: the rows the ingest keeps for a new snapshot against the one before it equal the
rows counted live, `snapshot diff` and `stats` read them, and a pair the ingest never compared
is counted live — with labels, relabellings and length directions known by construction."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from sqlalchemy import text

from tcdb.operations import Database

# URL → (source label or None, text) per snapshot.
SNAPSHOTS: dict[str, dict[str, tuple[str | None, str]]] = {
    "a": {"u0": ("human", "same text"), "u1": ("human", "will grow"),
          "u2": ("human", "will shrink a lot"), "u3": ("human", "abcd"),
          "u4": ("human", "to be removed"), "u5": ("human", "relabelled later"),
          "u6": ("llm", "llm kept"), "u7": ("llm", "llm grows"), "u8": (None, "no label")},
    "b": {"u0": ("human", "same text"), "u1": ("human", "will grow much longer"),
          "u2": ("human", "shrunk"), "u3": ("human", "wxyz"),
          "u5": ("llm", "relabelled later"), "u6": ("llm", "llm kept"),
          "u7": ("llm", "llm grows and grows"), "u8": (None, "no label"),
          "u9": ("human", "new human"), "u10": ("llm", "new llm"), "u11": (None, "new plain")},
    "c": {"u0": ("human", "same text"), "u6": ("llm", "llm rewritten"),
          "u12": ("llm", "brand new")},
}
DATES = {"a": dt.date(2024, 1, 1), "b": dt.date(2024, 2, 1), "c": dt.date(2024, 3, 1)}


def _ingest(tmp_path: Path) -> None:
    """a, then c, then b: the ingest compares c with a and b with a (the one before each)."""
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    add_collection(Database(), "churn", "url", "query_id")
    for label in ("a", "c", "b"):
        folder = tmp_path / label
        folder.mkdir()
        corpus = folder / "corpus.jsonl"
        corpus.write_text("".join(json.dumps(
            {"_id": f"{label}-{url}", "url": f"https://x/{url}", "text": body,
             **({"source": source} if source else {})}) + "\n"
            for url, (source, body) in SNAPSHOTS[label].items()), encoding="utf-8")
        (folder / "topics.tsv").write_text("q1\tquery\n", encoding="utf-8")
        ingest_snapshot(Database(), "churn", label, LocalSource(corpus, folder / "topics.tsv"),
                        date=DATES[label])


def _expected(a: str, b: str) -> dict[str, int]:
    before, after = SNAPSHOTS[a], SNAPSHOTS[b]
    kept = set(before) & set(after)
    counts = {"added": len(set(after) - kept), "removed": len(set(before) - kept),
              "unchanged": 0, "grew": 0, "shrank": 0, "same_length": 0}
    for url in kept:
        old, new = before[url][1], after[url][1]
        state = ("unchanged" if old == new else "grew" if len(new) > len(old)
                 else "shrank" if len(new) < len(old) else "same_length")
        counts[state] += 1
    return counts


def _pairs() -> set[tuple[str, str]]:
    with Database().session() as session:
        return {(a, b) for a, b in session.connection().execute(text(
            "SELECT DISTINCT sa.label, sb.label FROM snapshot_churn c"
            " JOIN snapshot sa ON sa.id = c.snapshot_a_id"
            " JOIN snapshot sb ON sb.id = c.snapshot_b_id"))}


@pytest.mark.parametrize(("a", "b"), [("a", "b"), ("a", "c"), ("b", "c"), ("c", "a")])
def test_diff_and_stats_equal_the_construction(db: str, tmp_path: Path, a: str, b: str) -> None:
    from tcdb.api import snapshot_diff, snapshot_stats

    _ingest(tmp_path)
    assert _pairs() == {("a", "b"), ("a", "c")}  # kept by the ingest; (b, c) never compared
    expected = _expected(a, b)
    documents = snapshot_diff("churn", [a, b]).documents.model_dump()
    changed = expected["grew"] + expected["shrank"] + expected["same_length"]
    assert documents == {"added": expected["added"], "removed": expected["removed"],
                         "changed": changed, "unchanged": expected["unchanged"],
                         "before": len(SNAPSHOTS[a]), "after": len(SNAPSHOTS[b])}
    churn = snapshot_stats("churn", [a, b]).churn[0]
    assert {k: getattr(churn, k) for k in expected} == expected


def test_kept_rows_equal_the_rows_counted_live(db: str, tmp_path: Path) -> None:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries.churn import count_churn, stored_churn

    _ingest(tmp_path)
    with Database().session() as session:
        ids = {label: get_snapshot(session, "churn", label).pk for label in SNAPSHOTS}
        conn = session.connection()
        for a, b in (("a", "b"), ("a", "c")):
            assert sorted(stored_churn(conn, ids[a], ids[b]) or [],
                          key=repr) == sorted(count_churn(conn, ids[a], ids[b]), key=repr)
        assert stored_churn(conn, ids["b"], ids["c"]) is None


def test_diff_by_source_counts_relabelled_documents(db: str, tmp_path: Path) -> None:
    from tcdb.api import snapshot_diff

    _ingest(tmp_path)
    assert {label: counts.model_dump()
            for label, counts in snapshot_diff("churn", ["a", "b"]).sources.items()} == {
        "human": {"added": 1, "removed": 1, "changed": 3, "unchanged": 1, "relabelled": 0,
                  "before": 6, "after": 5},
        "llm": {"added": 1, "removed": 0, "changed": 1, "unchanged": 2, "relabelled": 1,
                "before": 2, "after": 4},
        "unlabelled": {"added": 1, "removed": 0, "changed": 0, "unchanged": 1,
                       "relabelled": 0, "before": 1, "after": 2}}


def test_diff_reads_the_kept_rows_and_they_go_with_a_snapshot(db: str, tmp_path: Path) -> None:
    from tcdb.api import snapshot_diff
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    _ingest(tmp_path)
    with Database().session() as session:  # the kept rows, not the memberships, are what diff reads
        session.connection().execute(text(
            "UPDATE snapshot_churn SET n = n + 100 WHERE state = 'added'"
            " AND snapshot_b_id = (SELECT id FROM snapshot WHERE label = 'b')"))
    assert snapshot_diff("churn", ["a", "b"]).documents.added == 3 + 3 * 100
    other = tmp_path / "a2.jsonl"  # a replaced: the rows that compared the old a go with it
    other.write_text(json.dumps({"_id": "z", "url": "https://x/u0", "text": "other"}) + "\n")
    ingest_snapshot(Database(), "churn", "a", LocalSource(other, tmp_path / "a" / "topics.tsv"),
                    date=DATES["a"], replace=True)
    assert _pairs() == set()
    assert snapshot_diff("churn", ["a", "b"]).documents.changed == 1  # counted live
