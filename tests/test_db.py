"""The database layer: the bulk writer on both backends, inside the caller's transaction."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlmodel import Session

from tcdb.errors import DatabaseError
from tcdb.schema import Collection, Document, SnapshotStatus
from tcdb.storage.bulk import bulk_insert, bulk_insert_columns
from tcdb.storage.db import get_engine
from tcdb.storage.urls import mask_url, normalise_url


def _collection(session: Session) -> int:
    collection = Collection(name="c")
    session.add(collection)
    session.flush()
    assert collection.id is not None
    return collection.id


def test_bulk_insert_writes_all_rows(db: str) -> None:
    engine = get_engine(db)
    with Session(engine) as session:
        cid = _collection(session)
        rows = ((cid, f"doc-{i}") for i in range(12_345))
        n = bulk_insert(session, "document", ["collection_id", "key"], rows)
        session.commit()
    assert n == 12_345
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(Document)).one()[0] == 12_345
        assert session.exec(select(Document.key).where(Document.key == "doc-7")).one()[0] == "doc-7"


def test_bulk_insert_rolls_back_with_the_transaction(db: str) -> None:
    engine = get_engine(db)
    with Session(engine) as session:
        cid = _collection(session)
        session.commit()
    with pytest.raises(Exception), Session(engine) as session:  # noqa: B017 - any DB error
        bulk_insert(session, "document", ["collection_id", "key"], [(cid, "a"), (cid, "b")])
        bulk_insert(session, "document", ["collection_id", "key"], [(cid, "a")])  # duplicate
        session.commit()
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(Document)).one()[0] == 0


def test_bulk_insert_handles_nulls_bytes_and_floats(db: str) -> None:
    engine = get_engine(db)
    with Session(engine) as session:
        bulk_insert(session, "content", ["hash", "length", "text"],
                    [(b"\x00" * 16, 0, None), (b"\x01" * 16, 5, "héllo")])
        bulk_insert(session, "snapshot_document", ["snapshot_id", "document_id", "external_id",
                                                   "content_id", "source_label", "twin_of"],
                    [(1, 1, "a", 1, None, None), (1, 2, "b", 1, "llm", "a")])
        session.commit()
        rows = session.exec(text("SELECT hash, length, text FROM content "
                                 "ORDER BY length")).all()
        members = session.exec(text("SELECT external_id, source_label, twin_of "
                                    "FROM snapshot_document ORDER BY external_id")).all()
    assert [tuple(r) for r in rows] == [(b"\x00" * 16, 0, None), (b"\x01" * 16, 5, "héllo")]
    assert [tuple(r) for r in members] == [("a", None, None), ("b", "llm", "a")]


def test_bulk_insert_columns_writes_numpy_columns_exactly(db: str) -> None:
    """Binary COPY laid out by numpy (PostgreSQL) or executemany (SQLite): the same values back,
    extreme integers and floats included, across more rows than one COPY chunk."""
    import numpy as np

    from tcdb.storage.bulk import COPY_CHUNK_ROWS

    n = COPY_CHUNK_ROWS + 1_234
    rng = np.random.default_rng(3)
    columns = {
        "run_id": np.full(n, 7), "topic_id": np.arange(n) // 1000,
        "eval_rank": np.arange(n) % 1000 + 1, "document_id": rng.integers(0, 2**31 - 1, n),
        "rank": np.arange(n), "score": rng.normal(size=n) * 1e300,
    }
    columns["score"][:3] = [0.0, -0.0, 5e-324]
    columns["document_id"][:2] = [2**31 - 1, -(2**31)]
    engine = get_engine(db)
    with Session(engine) as session:
        assert bulk_insert_columns(session, "run_entry", columns) == n
        session.commit()
        rows = session.exec(text("SELECT run_id, topic_id, eval_rank, document_id, rank, score "
                                 "FROM run_entry ORDER BY topic_id, eval_rank")).all()
    got = np.array(rows, dtype=object)
    for i, (name, values) in enumerate(columns.items()):
        assert np.array_equal(got[:, i].astype(values.dtype), values), name


def test_bulk_insert_columns_falls_back_to_rows_for_text(db: str) -> None:
    import numpy as np

    engine = get_engine(db)
    with Session(engine) as session:
        cid = _collection(session)
        n = bulk_insert_columns(session, "document", {
            "collection_id": np.full(3, cid), "key": np.array(["a", "b", "c"], dtype=object)})
        session.commit()
    assert n == 3
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(Document)).one()[0] == 3


def test_enums_are_checked(db: str) -> None:
    engine = get_engine(db)
    with pytest.raises(Exception), engine.begin() as conn:  # noqa: B017
        conn.execute(text("INSERT INTO collection (name, doc_identity, topic_identity, "
                          "id_fallback, created_at) VALUES ('x', 'bogus', 'text', false, "
                          "CURRENT_TIMESTAMP)"))
    assert SnapshotStatus.complete.value == "complete"


def test_urls_are_normalised_and_masked() -> None:
    assert normalise_url("postgresql://u:p@h/d") == "postgresql+psycopg://u:p@h/d"
    assert normalise_url("postgres://u@h/d") == "postgresql+psycopg://u@h/d"
    assert "secret" not in mask_url("postgresql+psycopg://u:secret@h/d")


def test_unsupported_backend_is_refused() -> None:
    with pytest.raises(DatabaseError, match="unsupported database"):
        get_engine("mysql://root@localhost/x")
    with pytest.raises(DatabaseError, match="malformed"):
        get_engine("not a url")


def test_lookups_find_exactly_the_keys_asked_for(db: str) -> None:
    """`rows_in` passes its values as one array literal on PostgreSQL: quotes, backslashes,
    braces, commas, spaces, NULL-like words, non-ASCII text and every byte must survive it."""
    from tcdb.queries import pairs_in, rows_in
    from tcdb.schema import Content

    keys = ['plain', 'a "quoted" key', 'back\\slash', '\\"', '{braces}', 'a,b', ' spaced ',
            'NULL', '', 'été', 'tab\there', 'https://x.fr/p?q=1&r={2}']
    hashes = [bytes([i]) * 16 for i in (0, 34, 44, 92, 123, 255)]
    engine = get_engine(db)
    with Session(engine) as session:
        cid = _collection(session)
        bulk_insert(session, "document", ["collection_id", "key"],
                    [(cid, key) for key in keys + ["not asked"]])
        bulk_insert(session, "content", ["hash", "length"], [(h, 1) for h in hashes])
        conn = session.connection()
        found = pairs_in(conn, select(Document.key, Document.id), Document.key,
                         keys + ["missing"])
        assert sorted(found) == sorted(keys)
        stored = rows_in(conn, select(Content.hash), Content.hash, hashes[:4] + [b"\x07" * 16])
        assert sorted(bytes(row[0]) for row in stored) == hashes[:4]
        assert rows_in(conn, select(Document.key), Document.key, []) == []
