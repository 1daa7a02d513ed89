"""The database layer: the bulk writer on both backends, inside the caller's transaction."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlmodel import Session

from tcdb.db import bulk_insert, get_engine, mask_url, normalise_url
from tcdb.errors import DatabaseError
from tcdb.schema import Collection, Document, SnapshotStatus


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
        bulk_insert(session, "content", ["hash", "length", "text", "source_label"],
                    [(b"\x00" * 16, 0, None, None), (b"\x01" * 16, 5, "héllo", "llm")])
        session.commit()
        rows = session.exec(text("SELECT hash, length, text, source_label FROM content "
                                 "ORDER BY length")).all()
    assert [tuple(r) for r in rows] == [(b"\x00" * 16, 0, None, None),
                                        (b"\x01" * 16, 5, "héllo", "llm")]


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
