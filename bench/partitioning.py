"""Declarative partitioning of `run_entry` on PostgreSQL: what it costs and what it buys.

Each variant gets a throw-away database holding only a `run_entry` (today's columns and key,
no foreign keys), loaded with the same synthetic rows by `tcdb.storage.bulk.bulk_insert_columns`
(binary COPY), one transaction per run as `tcdb run import` writes them:

  (a) plain        today's table, key (run_id, topic_id, eval_rank)
  (b) hash         PARTITION BY HASH (run_id), --partitions partitions, same key
  (c) range        PARTITION BY RANGE (run_id), --partitions ranges of run ids, same key
  (d) snapshot     a `snapshot_id` column added at the end of the key
                   (run_id, topic_id, eval_rank, snapshot_id),
                   PARTITION BY LIST (snapshot_id), one partition per snapshot
  (d') snapshot-first  the same with snapshot_id first in the key

and then times:

* COPY rate (rows/s over the whole load) and the size on disk (table + key index),
* a top-k read: `WHERE run_id = X AND topic_id = Y AND eval_rank <= 100`, --queries random
  (run, topic) pairs, prepared as psycopg prepares repeated statements; median per query.
  For (d) and (d') also without `snapshot_id` in the WHERE clause (today's queries
  unchanged; on (d') only 30 of them, each scans every partition's index),
* the evaluation read: every entry of 20 runs of one snapshot, as `tcdb.queries.runs` reads
  them (`COPY (SELECT … WHERE run_id IN (…) ORDER BY run_id, topic_id) TO STDOUT`), median of 3,
* DELETE of one run, and removing one snapshot's runs (--runs / --snapshots runs): a DELETE on
  (a) and (b), DETACH + DROP of a partition on (c), (d) and (d').

Runs are spread over --snapshots snapshots in id order (run ids of one snapshot are
consecutive, as when a snapshot's runs are imported together), so (c)'s ranges line up with
snapshots here; in a database where snapshots' runs interleave they would not.

With --score-rows N (default 1,000,000; 0 skips) it also writes N `score` rows through
`bulk_insert_columns` into a migrated tcdb database on PostgreSQL and SQLite: the per-row cost
of writing scores, beside bench/bulk_load.py's for run entries.

Not testable here: Citus (a distributed table is spread over worker nodes; this is one server)
and several machines. This machine's speed drifts (2 shared cores); compare variants within
one run, not across runs.

    python bench/partitioning.py [--runs 200] [--topics 50] [--depth 1000] [--partitions 8]
                                 [--snapshots 8] [--queries 1000] [--score-rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402
from _common import POSTGRES_ADMIN_URL, rate, temporary_database, timer  # noqa: E402
from sqlalchemy import create_engine  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.pool import NullPool  # noqa: E402

from tcdb.storage.bulk import bulk_insert_columns  # noqa: E402

COLUMNS = """run_id integer NOT NULL, topic_id integer NOT NULL, document_id integer NOT NULL,
             rank integer NOT NULL, eval_rank integer NOT NULL, score double precision NOT NULL"""
KEY = "PRIMARY KEY (run_id, topic_id, eval_rank)"
N_DOCS = 1_500_000  # document ids drawn from a LongEval-sized snapshot
TOP_K = 100
EVAL_RUNS = 20
VARIANTS = ["plain", "hash", "range", "snapshot", "snapshot-first"]


def libpq(url: str) -> str:
    """A SQLAlchemy URL as the conninfo psycopg takes."""
    u = make_url(url)
    parts = {"host": u.host, "port": u.port, "user": u.username, "password": u.password,
             "dbname": u.database}
    return " ".join(f"{k}={v}" for k, v in parts.items() if v is not None)


def ddl(variant: str, n_runs: int, n_partitions: int, n_snapshots: int) -> list[str]:
    """CREATE statements of one variant's run_entry (and its partitions)."""
    if variant == "plain":
        return [f"CREATE TABLE run_entry ({COLUMNS}, {KEY})"]
    if variant == "hash":
        return [f"CREATE TABLE run_entry ({COLUMNS}, {KEY}) PARTITION BY HASH (run_id)"] + [
            f"CREATE TABLE run_entry_p{i} PARTITION OF run_entry "
            f"FOR VALUES WITH (MODULUS {n_partitions}, REMAINDER {i})" for i in range(n_partitions)]
    if variant == "range":
        width = -(-n_runs // n_partitions)
        return [f"CREATE TABLE run_entry ({COLUMNS}, {KEY}) PARTITION BY RANGE (run_id)"] + [
            f"CREATE TABLE run_entry_p{i} PARTITION OF run_entry "
            f"FOR VALUES FROM ({1 + i * width}) TO ({1 + (i + 1) * width})"
            for i in range(n_partitions)]
    if variant in ("snapshot", "snapshot-first"):
        key = ("snapshot_id, run_id, topic_id, eval_rank" if variant == "snapshot-first"
               else "run_id, topic_id, eval_rank, snapshot_id")
        return [f"CREATE TABLE run_entry (snapshot_id integer NOT NULL, {COLUMNS}, "
                f"PRIMARY KEY ({key})) PARTITION BY LIST (snapshot_id)"] + [
            f"CREATE TABLE run_entry_s{s} PARTITION OF run_entry FOR VALUES IN ({s})"
            for s in range(1, n_snapshots + 1)]
    raise ValueError(variant)


def snapshot_of(run_id: int, n_runs: int, n_snapshots: int) -> int:
    return 1 + (run_id - 1) * n_snapshots // n_runs


def runs_of(snapshot: int, n_runs: int, n_snapshots: int) -> list[int]:
    return [r for r in range(1, n_runs + 1) if snapshot_of(r, n_runs, n_snapshots) == snapshot]


def run_columns(run_id: int, n_topics: int, depth: int) -> dict[str, np.ndarray]:
    """One run's entries in key order (topic, eval_rank), as the importer writes them."""
    rng = np.random.default_rng(run_id)
    n = n_topics * depth
    eval_rank = np.tile(np.arange(1, depth + 1, dtype=np.int32), n_topics)
    return {
        "run_id": np.full(n, run_id, dtype=np.int32),
        "topic_id": np.repeat(np.arange(1, n_topics + 1, dtype=np.int32), depth),
        "eval_rank": eval_rank,
        "document_id": rng.integers(1, N_DOCS, n, dtype=np.int32),
        "rank": eval_rank,
        "score": 1000.0 - eval_rank + rng.random(n),
    }


def partitions(cur: psycopg.Cursor) -> list[str]:
    cur.execute("SELECT relid::regclass::text FROM pg_partition_tree('run_entry') WHERE isleaf")
    return [r[0] for r in cur.fetchall()]


def bench_variant(variant: str, args: argparse.Namespace) -> dict[str, object]:
    admin_url = make_url(POSTGRES_ADMIN_URL)
    name = f"tcdb_part_{uuid.uuid4().hex[:10]}"
    url = admin_url.set(database=name).render_as_string(hide_password=False)
    with psycopg.connect(libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    engine = create_engine(url, poolclass=NullPool)
    result: dict[str, object] = {"variant": variant}
    try:
        with psycopg.connect(libpq(url)) as pg:
            for statement in ddl(variant, args.runs, args.partitions, args.snapshots):
                pg.execute(statement)
            pg.commit()

        # Load: one transaction per run, through tcdb's own binary COPY writer.
        n_rows = 0
        load_s = 0.0
        with engine.connect() as conn:
            for run_id in range(1, args.runs + 1):
                columns = run_columns(run_id, args.topics, args.depth)
                if variant.startswith("snapshot"):
                    snap = snapshot_of(run_id, args.runs, args.snapshots)
                    columns = {"snapshot_id": np.full(len(columns["run_id"]), snap,
                                                      dtype=np.int32), **columns}
                start = time.perf_counter()
                with conn.begin():
                    n_rows += bulk_insert_columns(conn, "run_entry", columns)
                load_s += time.perf_counter() - start
        result["rows"] = n_rows
        result["copy_rows_s"] = n_rows / load_s
        result["copy_us_row"] = load_s / n_rows * 1e6

        with psycopg.connect(libpq(url), autocommit=True) as pg:
            pg.execute("VACUUM (ANALYZE) run_entry")
            cur = pg.cursor()
            cur.execute("SELECT coalesce((SELECT sum(pg_total_relation_size(relid)) FROM "
                        "pg_partition_tree('run_entry')), pg_total_relation_size('run_entry'))")
            result["size_mb"] = float(cur.fetchone()[0]) / 2**20

            # Top-k: a range of the key for one (run, topic).
            rng = np.random.default_rng(7)
            pairs = [(int(r), int(t)) for r, t in zip(
                rng.integers(1, args.runs + 1, args.queries),
                rng.integers(1, args.topics + 1, args.queries), strict=True)]
            queries = [("top_k_us", True)]
            if variant.startswith("snapshot"):
                queries.append(("top_k_no_snap_us", False))
            for key, with_snapshot in queries:
                # snapshot_id first in the key: without it each query scans every partition's
                # whole index (no skip scan in PostgreSQL 15), so only a few are timed.
                n_timed = 30 if (variant == "snapshot-first" and not with_snapshot) else None
                if with_snapshot and variant.startswith("snapshot"):
                    sql = ("SELECT document_id, eval_rank FROM run_entry WHERE snapshot_id = %s "
                           "AND run_id = %s AND topic_id = %s AND eval_rank <= %s")
                    params = [(snapshot_of(r, args.runs, args.snapshots), r, t, TOP_K)
                              for r, t in pairs]
                else:
                    sql = ("SELECT document_id, eval_rank FROM run_entry "
                           "WHERE run_id = %s AND topic_id = %s AND eval_rank <= %s")
                    params = [(r, t, TOP_K) for r, t in pairs]
                for p in params[:20]:  # warm the cache and the prepared statement
                    cur.execute(sql, p, prepare=True).fetchall()
                times = []
                for p in params[:n_timed]:
                    start = time.perf_counter()
                    got = cur.execute(sql, p, prepare=True).fetchall()
                    times.append(time.perf_counter() - start)
                    assert len(got) == min(TOP_K, args.depth)
                result[key] = statistics.median(times) * 1e6

            # The evaluation read: all entries of 20 runs of one snapshot.
            read_snap = min(3, args.snapshots)
            eval_runs = runs_of(read_snap, args.runs, args.snapshots)[:EVAL_RUNS]
            ids = ",".join(map(str, eval_runs))
            where = f"run_id IN ({ids})"
            if variant.startswith("snapshot"):
                where = f"snapshot_id = {read_snap} AND " + where
            sql = (f"COPY (SELECT run_id, topic_id, document_id, score FROM run_entry "
                   f"WHERE {where} ORDER BY run_id, topic_id) TO STDOUT")
            reads = []
            for _ in range(3):
                n_bytes = 0
                start = time.perf_counter()
                with cur.copy(sql) as copy:
                    for block in copy:
                        n_bytes += len(block)
                reads.append(time.perf_counter() - start)
            result["eval_rows"] = len(eval_runs) * args.topics * args.depth
            result["eval_read_s"] = statistics.median(reads)

            # Delete one run (from another snapshot than the one read).
            victim = runs_of(min(2, args.snapshots), args.runs, args.snapshots)[0]
            with timer() as t, pg.transaction():
                if variant.startswith("snapshot"):
                    pg.execute("DELETE FROM run_entry WHERE snapshot_id = %s AND run_id = %s",
                               (snapshot_of(victim, args.runs, args.snapshots), victim))
                else:
                    pg.execute("DELETE FROM run_entry WHERE run_id = %s", (victim,))
            result["delete_run_s"] = t[0]

            # Remove the last snapshot's runs.
            last = runs_of(args.snapshots, args.runs, args.snapshots)
            with timer() as t, pg.transaction():
                if variant.startswith("snapshot") or (
                        variant == "range" and args.partitions == args.snapshots):
                    leaf = partitions(cur)[-1]
                    pg.execute(f"ALTER TABLE run_entry DETACH PARTITION {leaf}")
                    pg.execute(f"DROP TABLE {leaf}")
                    result["delete_snap_how"] = "DROP partition"
                else:
                    pg.execute("DELETE FROM run_entry WHERE run_id BETWEEN %s AND %s",
                               (last[0], last[-1]))
                    result["delete_snap_how"] = "DELETE"
            result["delete_snap_s"] = t[0]
            result["delete_snap_rows"] = len(last) * args.topics * args.depth
    finally:
        engine.dispose()
        with psycopg.connect(libpq(POSTGRES_ADMIN_URL), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return result


def bench_scores(backend: str, n_rows: int) -> float:
    """Seconds to write n_rows `score` rows through bulk_insert_columns, 100,000 a transaction."""
    from tcdb.storage import db

    n_topics, n_measures, n_qrels = 50, 40, 2
    per_run = n_topics * n_measures * n_qrels
    n_runs = -(-n_rows // per_run)
    run = np.repeat(np.arange(1, n_runs + 1), per_run)[:n_rows]
    qrels = np.tile(np.repeat(np.arange(1, n_qrels + 1), n_measures * n_topics), n_runs)[:n_rows]
    measure = np.tile(np.repeat(np.arange(1, n_measures + 1), n_topics),
                      n_runs * n_qrels)[:n_rows]
    topic = np.tile(np.arange(1, n_topics + 1), n_runs * n_qrels * n_measures)[:n_rows]
    value = np.random.default_rng(1).random(n_rows)
    with temporary_database(backend) as url:
        engine = db.get_engine(url)
        with timer() as t, engine.connect() as conn:
            for start in range(0, n_rows, 100_000):
                s = slice(start, start + 100_000)
                with conn.begin():
                    bulk_insert_columns(conn, "score", {
                        "run_id": run[s], "qrels_set_id": qrels[s],
                        "residual_of_id": np.zeros(len(run[s]), dtype=np.int64),
                        "measure_id": measure[s], "topic_id": topic[s], "value": value[s]})
    return t[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--snapshots", type=int, default=8)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--score-rows", type=int, default=1_000_000)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS,
                        default=["plain", "hash", "range", "snapshot", "snapshot-first"])
    args = parser.parse_args()
    if args.depth < TOP_K or args.runs < args.snapshots * 2:
        parser.error(f"needs --depth ≥ {TOP_K} and --runs ≥ 2 × --snapshots")
    with psycopg.connect(libpq(POSTGRES_ADMIN_URL)) as pg:
        version = pg.execute("SHOW server_version").fetchone()[0]
    n = args.runs * args.topics * args.depth
    print(f"PostgreSQL {version}; run_entry: {args.runs} runs × {args.topics} topics × "
          f"{args.depth} = {n:,} rows; {args.partitions} partitions (hash, range), "
          f"{args.snapshots} snapshots of {args.runs // args.snapshots} runs; "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    results = []
    for variant in args.variants:
        with timer() as t:
            results.append(bench_variant(variant, args))
        print(f"  {variant:<9} done in {t[0]:.0f}s (load average {os.getloadavg()[0]:.1f})",
              flush=True)

    labels = {"plain": "(a) plain (today)", "hash": f"(b) hash(run_id) ×{args.partitions}",
              "range": f"(c) range(run_id) ×{args.partitions}",
              "snapshot": f"(d) list(snapshot_id) ×{args.snapshots}",
              "snapshot-first": "(d') as (d), snapshot_id 1st"}
    print()
    header = (f"{'variant':<30} {'COPY rows/s':>12} {'µs/row':>7} {'size MB':>8} "
              f"{'top-100 µs':>11} {'eval read 20 runs':>18} {'DELETE 1 run':>13} "
              f"{'remove 1 snapshot':>24}")
    print(header)
    print("-" * len(header))
    for r in results:
        top = f"{r['top_k_us']:.0f}"
        if "top_k_no_snap_us" in r:
            top += f" ({r['top_k_no_snap_us']:.0f}*)"
        read = f"{r['eval_read_s']:.2f}s {r['eval_rows'] / r['eval_read_s'] / 1e6:.1f}M/s"
        snap = f"{r['delete_snap_s']:.2f}s {r['delete_snap_how']}"
        print(f"{labels[str(r['variant'])]:<30} {r['copy_rows_s']:>12,.0f} "
              f"{r['copy_us_row']:>7.2f} {r['size_mb']:>8,.0f} {top:>11} {read:>18} "
              f"{r['delete_run_s']:>12.2f}s {snap:>24}")
    if any("top_k_no_snap_us" in r for r in results):
        print("* the same top-100 query without snapshot_id in the WHERE clause (today's "
              "queries, unchanged): every partition is searched; with snapshot_id first in "
              "the key, each partition's whole index")
    print(f"eval read: COPY … WHERE run_id IN (20 runs of one snapshot) ORDER BY run_id, "
          f"topic_id; remove 1 snapshot: {args.runs // args.snapshots} runs' entries")

    if args.score_rows:
        print()
        print(f"score writes: {args.score_rows:,} rows through "
              "tcdb.storage.bulk.bulk_insert_columns, "
              f"100,000 per transaction, into a migrated tcdb database")
        for backend in ("postgres", "sqlite"):
            seconds = bench_scores(backend, args.score_rows)
            print(f"  {backend:<9} {seconds:6.2f}s {rate(args.score_rows, seconds)} "
                  f"({seconds / args.score_rows * 1e6:.2f} µs/row)")


if __name__ == "__main__":
    main()
