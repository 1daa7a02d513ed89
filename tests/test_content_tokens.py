"""`content.n_tokens` on SQLite and PostgreSQL: counted by the ingest (texts kept or not) as
`str.split()` counts them, backfilled by migration 0011, and what `snapshot stats` reports —
also for versions without a count, which it counts from their text."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from tcdb.operations import Database

COLLECTION = "tokens"
# Whitespace the ingest's two paths (ASCII bytes, Unicode str) must both split on.
SEPARATORS = [" ", "  ", "\t", "\n", " \t\n ", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f",
              "\u00a0", "\u2003", "\n\n\t  "]
WORDS = ["a", "web", "page", "x1", "<b>", "&amp;", "caf\u00e9", "e\u0301t\u00e9", "Z09"]


def generated_texts(seed: int, n: int, prefix: str) -> dict[str, str]:
    """doc id → a text of 1–60 words joined by runs of mixed whitespace, often with some at
    either end, and an ASCII-only one every other document (the ingest's byte path)."""
    rng = random.Random(seed)
    texts = {}
    for i in range(n):
        words = [w for w in WORDS if w.isascii()] if i % 2 else WORDS
        separators = [s for s in SEPARATORS if s.isascii()] if i % 2 else SEPARATORS
        body = "".join(rng.choice(words) + rng.choice(separators)
                       for _ in range(rng.randint(1, 60)))
        texts[f"{prefix}{i:03d}"] = rng.choice(["", " ", "\t\n"]) + body
    return texts


def ingest(tmp_path: Path, label: str, texts: dict[str, str], *, with_text: bool = True) -> None:
    """Write `texts` as a JSONL corpus (whitespace kept exactly) and ingest it as `label`."""
    from tcdb.catalog.collections import add_collection, get_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.errors import NotFoundError
    from tcdb.ingest import ingest_snapshot

    folder = tmp_path / label
    folder.mkdir(parents=True)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in texts.items()))
    topics = folder / "topics.tsv"
    topics.write_text("1\tfirst query\n2\tsecond query\n")
    try:
        with Database().session() as session:
            get_collection(session, COLLECTION)
    except NotFoundError:
        add_collection(Database(), COLLECTION, "doc_id", "query_id")
    ingest_snapshot(Database(), COLLECTION, label, LocalSource(corpus, topics), with_text=with_text)


def stored_tokens(label: str) -> dict[str, int | None]:
    """external id → its version's `content.n_tokens` in snapshot `label`."""

    with Database().session() as session:
        return {d: n for d, n in session.connection().execute(text(
            "SELECT sd.external_id, c.n_tokens FROM snapshot_document sd"
            " JOIN content c ON c.id = sd.content_id JOIN snapshot s ON s.id = sd.snapshot_id"
            " WHERE s.label = :label"), {"label": label})}


def expected_stats(texts: dict[str, str]) -> dict[str, object]:
    counts = [len(t.split()) for t in texts.values()]
    return {"n_with_text": len(counts), "mean": pytest.approx(sum(counts) / len(counts)),
            "min": min(counts), "max": max(counts)}


@pytest.mark.parametrize("with_text", [True, False], ids=["texts", "no-texts"])
def test_ingest_counts_tokens_as_split_does(db: str, tmp_path: Path, cli,
                                            with_text: bool) -> None:
    from tcdb.api import snapshot_stats

    texts = generated_texts(5, 80, "d")
    ingest(tmp_path, "s1", texts, with_text=with_text)
    assert stored_tokens("s1") == {d: len(t.split()) for d, t in texts.items()}
    assert min(len(t.split()) for t in texts.values()) == 1  # a one-word text is among them

    with Database().session() as session:
        kept = session.connection().execute(text(
            "SELECT COUNT(*) FROM content WHERE text IS NOT NULL")).scalar_one()
    assert kept == (len(set(texts.values())) if with_text else 0)
    stats = snapshot_stats(COLLECTION).per_snapshot[0]
    assert stats.tokens.model_dump() == expected_stats(texts)
    code, out, err = cli("snapshot", "stats", COLLECTION, "--json")
    assert code == 0, err
    assert json.loads(out)["per_snapshot"][0]["tokens"] == expected_stats(texts)
    code, out, err = cli("snapshot", "stats", COLLECTION, "--no-tokens", "--json")
    assert code == 0, err
    assert json.loads(out)["per_snapshot"][0]["tokens"] == {
        "n_with_text": None, "mean": None, "min": None, "max": None}


def test_versions_without_a_count_are_counted_from_their_text(db: str, tmp_path: Path) -> None:
    """Versions written before migration 0011 (n_tokens NULL) still count, from their text;
    ingesting one of them again stores its count."""
    from tcdb.api import snapshot_stats

    first, second = generated_texts(7, 60, "d"), generated_texts(8, 30, "e")
    ingest(tmp_path, "s1", first)
    with Database().session() as session:
        session.connection().execute(text(
            "UPDATE content SET n_tokens = NULL WHERE id IN (SELECT content_id FROM"
            " snapshot_document WHERE external_id < 'd030')"))
    assert sum(n is None for n in stored_tokens("s1").values()) == 30
    assert snapshot_stats(COLLECTION).per_snapshot[0].tokens.model_dump() == \
        expected_stats(first)
    kept = {d: t for d, t in first.items() if d >= "d045"}  # 15 of the uncounted not among them
    ingest(tmp_path, "s2", {**kept, **second}, with_text=False)
    assert stored_tokens("s2") == {d: len(t.split()) for d, t in {**kept, **second}.items()}
    assert list(stored_tokens("s1").values()).count(None) == 30  # s2 kept none of them
    report = snapshot_stats(COLLECTION).per_snapshot
    assert report[0].tokens.model_dump() == expected_stats(first)
    assert report[1].tokens.model_dump() == expected_stats({**kept, **second})
    with Database().session() as session:  # a text kept before survives a --no-text ingest
        assert session.connection().execute(text(
            "SELECT COUNT(*) FROM content WHERE text IS NULL")).scalar_one() == len(second)


def test_migration_0011_counts_the_stored_texts(db: str, tmp_path: Path) -> None:
    """Down to 0010 (the column goes) and up again: every version with a text gets its count;
    one ingested without its text has none to count and is left out of the figures."""
    from tcdb.api import snapshot_stats
    from tcdb.storage import migrate
    from tcdb.storage.db import get_engine
    from tcdb.storage.guard import unguarded

    with_texts, without = generated_texts(9, 70, "d"), generated_texts(10, 20, "n")
    ingest(tmp_path, "s1", with_texts)
    ingest(tmp_path, "s2", without, with_text=False)
    try:
        migrate.downgrade("0010", db)
        with unguarded(), get_engine(db).connect() as conn:
            assert "n_tokens" not in {c["name"] for c in inspect(conn).get_columns("content")}
            assert conn.execute(text("SELECT COUNT(*) FROM content")).scalar_one() == 90
    finally:
        migrate.upgrade(db)
    assert migrate.current_revision(get_engine(db)) == migrate.head_revision()
    assert stored_tokens("s1") == {d: len(t.split()) for d, t in with_texts.items()}
    assert set(stored_tokens("s2").values()) == {None}
    report = snapshot_stats(COLLECTION).per_snapshot
    assert report[0].tokens.model_dump() == expected_stats(with_texts)
    assert report[1].tokens.model_dump() == {"n_with_text": 0, "mean": None, "min": None,
                                             "max": None}


def snapshot_totals(label: str) -> tuple[int | None, ...]:

    with Database().session() as session:
        return tuple(session.connection().execute(text(
            "SELECT tokens_counted, tokens_total, tokens_min, tokens_max FROM snapshot"
            " WHERE label = :label"), {"label": label}).one())


def test_ingest_keeps_each_snapshots_totals_and_stats_reads_them(db: str, tmp_path: Path) -> None:
    """The ingest stores a snapshot's token totals (migration 0014) as `str.split()` counts;
    stats reads those four numbers instead of the snapshot's rows, and aggregates live when
    some document of the snapshot has no count."""
    from tcdb.api import snapshot_stats

    texts = generated_texts(11, 50, "d")
    ingest(tmp_path, "s1", texts, with_text=False)
    counts = [len(t.split()) for t in texts.values()]
    assert snapshot_totals("s1") == (50, sum(counts), min(counts), max(counts))
    with Database().session() as session:  # the stored totals, not the rows, are what stats reads
        session.connection().execute(text(
            "UPDATE snapshot SET tokens_total = tokens_total + tokens_counted"))
    assert snapshot_stats(COLLECTION).per_snapshot[0].tokens.mean == pytest.approx(
        sum(counts) / 50 + 1)
    with Database().session() as session:  # a version without a count: the rows are read again
        session.connection().execute(text(
            "UPDATE content SET n_tokens = NULL WHERE id = (SELECT MIN(content_id)"
            " FROM snapshot_document)"))
        session.connection().execute(text("UPDATE snapshot SET tokens_counted = 49"))
    tokens = snapshot_stats(COLLECTION).per_snapshot[0].tokens
    assert tokens.n_with_text == 49 and tokens.mean is not None
    assert tokens.mean < sum(counts) / 50 + 0.5


def test_migration_0014_totals_the_existing_snapshots(db: str, tmp_path: Path) -> None:
    """Down to 0013 (totals and churn rows go) and up again: each snapshot's totals, and the
    churn of each snapshot against the one before it, equal what the ingest kept."""
    from tcdb.queries.churn import count_churn, stored_churn
    from tcdb.storage import migrate
    from tcdb.storage.db import get_engine

    first, second = generated_texts(12, 40, "d"), generated_texts(13, 25, "e")
    ingest(tmp_path, "s1", first)
    ingest(tmp_path, "s2", {**first, **second}, with_text=False)
    before = snapshot_totals("s1"), snapshot_totals("s2")
    try:
        migrate.downgrade("0013", db)
    finally:
        migrate.upgrade(db)
    assert migrate.current_revision(get_engine(db)) == migrate.head_revision()
    assert (snapshot_totals("s1"), snapshot_totals("s2")) == before
    assert before[1][0] == 65
    with Database().session() as session:
        conn = session.connection()
        a, b = (conn.execute(text("SELECT id FROM snapshot WHERE label = :l"), {"l": label})
                .scalar_one() for label in ("s1", "s2"))
        assert sorted(stored_churn(conn, a, b) or [], key=repr) == sorted(
            count_churn(conn, a, b), key=repr)
