"""Bulk writer vs. ORM: 1,000,000 run_entry rows through `tcdb.storage.bulk.bulk_insert` (COPY
binary on PostgreSQL, executemany on SQLite) beside 50,000 through `session.add_all`, in one run.

Goal (issue 2): on PostgreSQL ≥ 300,000 rows/s and ≥ 40× the add_all rate.

    python bench/bulk_load.py [--rows 1000000] [--orm-rows 50000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import rate, temporary_database, timer  # noqa: E402
from sqlalchemy import func, select, text
from sqlmodel import Session  # noqa: E402

from tcdb.schema import Collection, RunEntry  # noqa: E402
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.db import get_engine

N_TOPICS, N_DOCS = 100, 1000


def _seed(session: Session, n_runs: int) -> tuple[list[int], list[int], list[int]]:
    """Collection, snapshot, system, runs, topics and documents the entries can refer to."""
    collection = Collection(name="bench")
    session.add(collection)
    session.flush()
    cid = collection.id
    bulk_insert(session, "topic", ["collection_id", "key"],
                [(cid, f"t{i}") for i in range(N_TOPICS)])
    bulk_insert(session, "document", ["collection_id", "key"],
                [(cid, f"d{i}") for i in range(N_DOCS)])
    conn = session.connection()

    conn.execute(text("INSERT INTO snapshot (collection_id, label, source, source_fingerprint, "
                      "ordinal, status, with_text, n_documents, n_topics, n_judgments, created_at) "
                      "VALUES (:c, 's', 'bench', 'x', 0, 'complete', true, 0, 0, 0, "
                      "CURRENT_TIMESTAMP)"), {"c": cid})
    sid = conn.execute(text("SELECT id FROM snapshot")).scalar_one()
    conn.execute(text("INSERT INTO system (collection_id, name) VALUES (:c, 'sys')"), {"c": cid})
    sysid = conn.execute(text("SELECT id FROM system")).scalar_one()
    bulk_insert(session, "run", ["snapshot_id", "system_id", "tag", "run_type", "contributed",
                                 "n_entries", "n_unresolved", "created_at"],
                [(sid, sysid, f"run{i}", "automatic", False, 0, 0, _now()) for i in range(n_runs)])
    runs = list(conn.execute(text("SELECT id FROM run ORDER BY id")).scalars())
    topics = list(conn.execute(text("SELECT id FROM topic ORDER BY id")).scalars())
    docs = list(conn.execute(text("SELECT id FROM document ORDER BY id")).scalars())
    session.commit()
    return runs, topics, docs


def _now():
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _rows(runs: list[int], topics: list[int], docs: list[int], n: int):
    count = 0
    for run in runs:
        for topic in topics:
            for rank, doc in enumerate(docs, start=1):
                yield (run, topic, doc, rank, rank, 1000.0 - rank)
                count += 1
                if count >= n:
                    return


def measure(backend: str, n_rows: int, n_orm: int) -> dict[str, float]:
    per_run = N_TOPICS * N_DOCS
    n_bulk_runs = -(-n_rows // per_run)
    n_orm_runs = -(-n_orm // per_run)
    with temporary_database(backend) as url:
        engine = get_engine(url)
        with Session(engine) as session:
            runs, topics, docs = _seed(session, n_bulk_runs + n_orm_runs)
        bulk_runs, orm_runs = runs[:n_bulk_runs], runs[n_bulk_runs:]
        rows = list(_rows(bulk_runs, topics, docs, n_rows))  # generate outside the timing
        with Session(engine) as session, timer() as t_bulk:
            bulk_insert(session, "run_entry", ["run_id", "topic_id", "document_id", "rank",
                                               "eval_rank", "score"], rows)
            session.commit()
        orm_rows = list(_rows(orm_runs, topics, docs, n_orm))
        with Session(engine) as session, timer() as t_orm:
            session.add_all(RunEntry(run_id=r, topic_id=t, document_id=d, rank=k, eval_rank=e,
                                     score=s) for r, t, d, k, e, s in orm_rows)
            session.commit()
        with Session(engine) as session:
            total = session.exec(select(func.count()).select_from(RunEntry)).one()[0]
        assert total == n_rows + n_orm, total
    return {"bulk": n_rows / t_bulk[0], "orm": n_orm / t_orm[0],
            "bulk_s": t_bulk[0], "orm_s": t_orm[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--orm-rows", type=int, default=50_000)
    parser.add_argument("--backend", choices=["postgres", "sqlite", "both"], default="both")
    args = parser.parse_args()
    backends = ["postgres", "sqlite"] if args.backend == "both" else [args.backend]
    print(f"bulk_load: {args.rows:,} run_entry rows via bulk_insert, {args.orm_rows:,} via "
          "session.add_all")
    for backend in backends:
        r = measure(backend, args.rows, args.orm_rows)
        goal = ""
        if backend == "postgres":
            ok = r["bulk"] >= 300_000 and r["bulk"] / r["orm"] >= 40
            goal = f"  goal ≥300,000 rows/s and ≥40×: {'MET' if ok else 'MISSED'}"
        print(f"{backend:>9}  bulk_insert {rate(args.rows, r['bulk_s'])} ({r['bulk_s']:.2f} s)"
              f"   add_all {rate(args.orm_rows, r['orm_s'])} ({r['orm_s']:.2f} s)"
              f"   ratio {r['bulk'] / r['orm']:6.1f}×{goal}")


if __name__ == "__main__":
    main()
