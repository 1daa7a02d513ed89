"""The bulk writer and reader: every bulk path (documents, run entries, judgments, scores)
writes through `bulk_insert` / `bulk_insert_columns` — binary `COPY` on PostgreSQL (psycopg 3),
Core `executemany` on SQLite, always inside the caller's transaction so that a failed ingest
writes nothing — and reads integer tables through `int_rows`, without a Python object per row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlmodel import Session

from tcdb.storage.db import is_postgres

SQLITE_BATCH = 50_000
COPY_CHUNK_ROWS = 65_536  # rows per write: bounded memory, and the server starts early


def bulk_insert(
    conn: Connection | Session,
    table: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
) -> int:
    """Insert many rows into `table` inside the caller's transaction; returns the row count.

    PostgreSQL: binary `COPY … FROM STDIN` on the connection's own psycopg connection, so it
    shares the transaction. SQLite: Core `executemany` in batches.
    """
    connection = conn.connection() if isinstance(conn, Session) else conn
    if connection.dialect.name == "postgresql":
        return _copy_rows(connection, table, columns, rows)
    return _executemany_rows(connection, table, columns, rows)


def _copy_rows(
    connection: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    raw = connection.connection.driver_connection  # psycopg.Connection
    assert raw is not None
    column_list = ", ".join(f'"{c}"' for c in columns)
    types = _postgres_types(raw, table, columns)
    n = 0
    with raw.cursor() as cursor, cursor.copy(
        f'COPY "{table}" ({column_list}) FROM STDIN (FORMAT BINARY)'
    ) as copy:
        copy.set_types(types)
        write_row = copy.write_row
        for row in rows:
            write_row(row)
            n += 1
    return n


# Fixed-width PostgreSQL types and their big-endian binary COPY encodings.
_BINARY_FORMATS = {"smallint": ">i2", "integer": ">i4", "bigint": ">i8", "real": ">f4",
                   "double precision": ">f8", "boolean": "?"}


def bulk_insert_columns(conn: Connection | Session, table: str, columns: Mapping[str, Any]) -> int:
    """Insert equal-length numpy columns into `table` (caller's transaction); returns the count.

    For the biggest tables (run entries, scores): on PostgreSQL, when every column is of a
    fixed-width type, numpy lays out binary COPY's wire format in one pass with no Python
    object per value; otherwise, and on SQLite, the rows go through `bulk_insert`.
    """
    import numpy as np

    names = list(columns)
    arrays = [np.asarray(columns[name]) for name in names]
    n = len(arrays[0]) if arrays else 0
    if any(len(a) != n for a in arrays):
        raise ValueError(f"columns of unequal length for {table}: {[len(a) for a in arrays]}")
    if n == 0:
        return 0
    connection = conn.connection() if isinstance(conn, Session) else conn
    if connection.dialect.name == "postgresql":
        raw = connection.connection.driver_connection
        formats = [_BINARY_FORMATS.get(t) for t in _postgres_types(raw, table, names)]
        if all(formats):
            return _copy_columns(raw, table, names, arrays, formats)
    return bulk_insert(connection, table, names, zip(*(a.tolist() for a in arrays), strict=True))


def _copy_columns(raw: Any, table: str, names: list[str], arrays: list[Any],
                  formats: list[str | None]) -> int:
    """Binary COPY of fixed-width columns: per row a field count, then (length, value) pairs."""
    import numpy as np

    fields: list[tuple[str, str]] = [("n", ">i2")]
    for i, fmt in enumerate(formats):
        fields += [(f"l{i}", ">i4"), (f"v{i}", str(fmt))]
    record = np.dtype(fields)
    n = len(arrays[0])
    column_list = ", ".join(f'"{c}"' for c in names)
    with raw.cursor() as cursor, cursor.copy(
        f'COPY "{table}" ({column_list}) FROM STDIN (FORMAT BINARY)'
    ) as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + bytes(8))  # signature, flags, extension length
        for start in range(0, n, COPY_CHUNK_ROWS):
            stop = min(n, start + COPY_CHUNK_ROWS)
            rows = np.empty(stop - start, dtype=record)
            rows["n"] = len(names)
            for i, array in enumerate(arrays):
                rows[f"l{i}"] = record[f"v{i}"].itemsize
                rows[f"v{i}"] = array[start:stop]
            copy.write(rows.tobytes())
        copy.write(b"\xff\xff")  # trailer
    return n


_PG_TYPES: dict[tuple[str, str], str] = {}


def _postgres_types(raw: Any, table: str, columns: Sequence[str]) -> list[str]:
    """The columns' PostgreSQL types, which binary COPY needs to encode values."""
    missing = [c for c in columns if (table, c) not in _PG_TYPES]
    if missing:
        with raw.cursor() as cursor:
            cursor.execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
                (f'"{table}"',),
            )
            for name, type_name in cursor.fetchall():
                base = re.sub(r"\(.*\)", "", type_name)
                _PG_TYPES[(table, name)] = base
    return [_PG_TYPES[(table, c)] for c in columns]


def _executemany_rows(
    connection: Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    placeholders = ", ".join("?" for _ in columns)
    column_list = ", ".join(f'"{c}"' for c in columns)
    sql = f'INSERT INTO "{table}" ({column_list}) VALUES ({placeholders})'
    raw = connection.connection.driver_connection  # sqlite3 connection, same transaction
    assert raw is not None
    cursor = raw.cursor()
    n = 0
    batch: list[Sequence[Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= SQLITE_BATCH:
            cursor.executemany(sql, batch)
            n += len(batch)
            batch = []
    if batch:
        cursor.executemany(sql, batch)
        n += len(batch)
    cursor.close()
    return n


def int_rows(conn: Connection, sql: str, n_columns: int, dtype: str = "int64") -> Any:
    """An (n × n_columns) array of a query's rows, without a Python object per row on PostgreSQL.

    PostgreSQL: each column comes back as one `bytea` of big-endian 8-byte values
    (`string_agg(int8send(…))`), read by `numpy.frombuffer` — all aggregates of one query see
    the rows in the same order. SQLite: the driver's tuples, flattened into numpy. Why: hundreds
    of thousands of rows through SQLAlchemy `Row`s cost seconds. Same transaction as the caller.
    """
    from itertools import chain

    import numpy as np

    raw = conn.connection.driver_connection
    assert raw is not None
    if is_postgres(conn):
        send = "float8send({}::float8)" if dtype == "float64" else "int8send({}::bigint)"
        parts = ", ".join(f"string_agg({send.format(f'c{i}')}, ''::bytea)"
                          for i in range(n_columns))
        names = ", ".join(f"c{i}" for i in range(n_columns))
        with raw.cursor(binary=True) as cursor:
            blobs = cursor.execute(f"SELECT {parts} FROM ({sql}) AS q({names})").fetchone()
        big = ">f8" if dtype == "float64" else ">i8"
        if blobs is None or blobs[0] is None:
            return np.empty((0, n_columns), dtype=dtype)
        return np.column_stack([np.frombuffer(b, dtype=big).astype(dtype) for b in blobs])
    cursor = raw.cursor()
    rows = cursor.execute(sql).fetchall()
    cursor.close()
    flat = np.fromiter(chain.from_iterable(rows), dtype=dtype, count=len(rows) * n_columns)
    return flat.reshape(-1, n_columns)
