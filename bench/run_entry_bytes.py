"""The billion-row table: bytes per `run_entry` row on disk, and what the options on one
PostgreSQL server change — measured side by side in one run.

Each variant gets a throw-away database holding only its table, loaded with the same synthetic
entries (random document ids of a 1.5 M-document snapshot, scores with decimals as real runs
have them):

  (a) today      one row per entry: run_id, topic_id, document_id, rank, eval_rank integer,
                 score double precision; key (run_id, topic_id, eval_rank)
  (b) narrow     (a) without the file's `rank` column (trec_eval ignores it; kept where it
                 differs from eval_rank, which it rarely does, in a side table)
  (c) arrays     one row per (run, topic): document_id integer[], score double precision[]
                 in eval_rank order (the rank is the position), rank integer[] only where it
                 differs; key (run_id, topic_id); TOAST compression pglz (the default)
  (d) arrays lz4 (c) with `COMPRESSION lz4` on the array columns

and prints per variant: heap and index bytes per entry, the size a billion entries would need,
the load rate (COPY), the evaluation read (every entry of 20 runs, in run and topic order: a
sequential scan per run, decoded to arrays as `tcdb.queries.runs` needs them) and a top-100
read of one (run, topic).

    python bench/run_entry_bytes.py [--runs 100] [--topics 50] [--depth 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from _common import POSTGRES_ADMIN_URL  # noqa: E402
from partitioning import libpq  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

N_DOCS = 1_500_000
EVAL_RUNS = 20
TOP_K = 100
VARIANTS = {
    "today": ("CREATE TABLE run_entry (run_id integer NOT NULL, topic_id integer NOT NULL, "
              "document_id integer NOT NULL, rank integer NOT NULL, eval_rank integer NOT NULL, "
              "score double precision NOT NULL, PRIMARY KEY (run_id, topic_id, eval_rank))"),
    "narrow": ("CREATE TABLE run_entry (run_id integer NOT NULL, topic_id integer NOT NULL, "
               "eval_rank integer NOT NULL, document_id integer NOT NULL, "
               "score double precision NOT NULL, PRIMARY KEY (run_id, topic_id, eval_rank))"),
    "arrays": ("CREATE TABLE run_entry (run_id integer NOT NULL, topic_id integer NOT NULL, "
               "document_ids integer[] NOT NULL, scores double precision[] NOT NULL, "
               "ranks integer[], PRIMARY KEY (run_id, topic_id))"),
    "arrays-lz4": ("CREATE TABLE run_entry (run_id integer NOT NULL, topic_id integer NOT NULL, "
                   "document_ids integer[] COMPRESSION lz4 NOT NULL, "
                   "scores double precision[] COMPRESSION lz4 NOT NULL, "
                   "ranks integer[] COMPRESSION lz4, PRIMARY KEY (run_id, topic_id))"),
}
LABELS = {"today": "(a) today, one row per entry", "narrow": "(b) without the file's rank",
          "arrays": "(c) arrays per (run, topic)", "arrays-lz4": "(d) arrays, lz4"}


def run_entries(run_id: int, n_topics: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(document ids, scores) of one run, topic by topic in eval_rank order."""
    rng = np.random.default_rng(run_id)
    docs = rng.integers(1, N_DOCS, (n_topics, depth), dtype=np.int32)
    scores = np.round(30.0 - np.sort(rng.gamma(2.0, 2.0, (n_topics, depth)), axis=1), 6)
    return docs, scores


@contextmanager
def database() -> Iterator[str]:
    """A throw-away database's SQLAlchemy URL."""
    name = f"tcdb_bytes_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(
            hide_password=False)
    finally:
        with psycopg.connect(libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def load(pg: psycopg.Connection, conninfo_url: str, variant: str,
         args: argparse.Namespace) -> float:
    """Seconds to write every run, one transaction per run as `tcdb run import` writes: rows
    through tcdb's own binary COPY writer (`bulk_insert_columns`), arrays through psycopg's
    binary COPY."""
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    from tcdb.storage.bulk import bulk_insert_columns

    seconds = 0.0
    engine = create_engine(conninfo_url, poolclass=NullPool)
    ranks = np.tile(np.arange(1, args.depth + 1, dtype=np.int32), args.topics)
    topics = np.repeat(np.arange(1, args.topics + 1, dtype=np.int32), args.depth)
    try:
        with engine.connect() as conn:
            for run_id in range(1, args.runs + 1):
                docs, scores = run_entries(run_id, args.topics, args.depth)
                start = time.perf_counter()
                if variant in ("today", "narrow"):
                    columns = {"run_id": np.full(len(ranks), run_id, dtype=np.int32),
                               "topic_id": topics, "document_id": docs.ravel(),
                               "eval_rank": ranks, "score": scores.ravel()}
                    if variant == "today":
                        columns["rank"] = ranks
                    with conn.begin():
                        bulk_insert_columns(conn, "run_entry", columns)
                else:
                    with pg.transaction(), pg.cursor() as cur, cur.copy(
                            "COPY run_entry (run_id, topic_id, document_ids, scores) FROM STDIN "
                            "(FORMAT BINARY)") as copy:
                        copy.set_types(["int4", "int4", "int4[]", "float8[]"])
                        for t in range(args.topics):
                            copy.write_row((run_id, t + 1, docs[t].tolist(),
                                            scores[t].tolist()))
                seconds += time.perf_counter() - start
    finally:
        engine.dispose()
    return seconds


def sizes(pg: psycopg.Connection) -> tuple[int, int]:
    """(heap incl. TOAST, indexes) in bytes after VACUUM."""
    pg.execute("VACUUM (ANALYZE) run_entry")
    row = pg.execute("SELECT pg_table_size('run_entry'), pg_indexes_size('run_entry')").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def eval_read(pg: psycopg.Connection, variant: str, args: argparse.Namespace) -> float:
    """Median seconds to read 20 runs' entries in (run, topic, eval_rank) order as arrays."""
    ids = list(range(1, min(EVAL_RUNS, args.runs) + 1))
    times = []
    for _ in range(3):
        start = time.perf_counter()
        if variant in ("today", "narrow"):
            rows = pg.execute("SELECT run_id, topic_id, document_id, score FROM run_entry "
                              "WHERE run_id = ANY(%s) ORDER BY run_id, topic_id, eval_rank",
                              (ids,), binary=True).fetchall()
            docs = np.fromiter((r[2] for r in rows), dtype=np.int32, count=len(rows))
        else:
            rows = pg.execute("SELECT run_id, topic_id, document_ids, scores FROM run_entry "
                              "WHERE run_id = ANY(%s) ORDER BY run_id, topic_id", (ids,),
                              binary=True).fetchall()
            docs = np.concatenate([np.asarray(r[2], dtype=np.int32) for r in rows])
        times.append(time.perf_counter() - start)
        assert len(docs) == len(ids) * args.topics * args.depth
    return statistics.median(times)


def top_k(pg: psycopg.Connection, variant: str, args: argparse.Namespace) -> float:
    """Median µs of a top-100 read of one (run, topic)."""
    rng = np.random.default_rng(3)
    pairs = list(zip(rng.integers(1, args.runs + 1, 200).tolist(),
                     rng.integers(1, args.topics + 1, 200).tolist(), strict=True))
    if variant in ("today", "narrow"):
        sql = ("SELECT document_id FROM run_entry WHERE run_id = %s AND topic_id = %s "
               "AND eval_rank <= %s")
    else:
        sql = ("SELECT document_ids[1:%s] FROM run_entry WHERE run_id = %s AND topic_id = %s")
    times = []
    with pg.cursor() as cur:
        for run_id, topic in pairs:
            params = (run_id, topic, TOP_K) if variant in ("today", "narrow") else (
                TOP_K, run_id, topic)
            start = time.perf_counter()
            cur.execute(sql, params, prepare=True).fetchall()
            times.append(time.perf_counter() - start)
    return statistics.median(times[20:]) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = parser.parse_args()
    n = args.runs * args.topics * args.depth
    with psycopg.connect(libpq(POSTGRES_ADMIN_URL)) as pg:
        version = pg.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
    print(f"PostgreSQL {version}; {args.runs} runs × {args.topics} topics × {args.depth} = "
          f"{n:,} entries per variant; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = (f"{'variant':<32} {'heap B/entry':>12} {'index B/entry':>13} {'1e9 entries':>11} "
              f"{'load entries/s':>14} {'eval read 20 runs':>17} {'top-100':>9}")
    results = []
    for variant in args.variants:
        with database() as url, psycopg.connect(libpq(url), autocommit=True) as pg:
            pg.execute(VARIANTS[variant])
            load_s = load(pg, url, variant, args)
            heap, index = sizes(pg)
            results.append((variant, heap / n, index / n, n / load_s,
                            eval_read(pg, variant, args), top_k(pg, variant, args)))
    print(header)
    print("-" * len(header))
    base = results[0][1] + results[0][2] if results else 1.0
    for variant, heap, index, copy_rate, read_s, top_us in results:
        total = heap + index
        print(f"{LABELS[variant]:<32} {heap:>12.1f} {index:>13.1f} "
              f"{total * 1e9 / 2**30:>8,.0f} GiB {copy_rate:>14,.0f} "
              f"{read_s:>8.2f} s ({read_s / results[0][4]:.2f}×) {top_us:>6.0f} µs"
              f"   size {total / base:.2f}× today's")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
