"""`tcdb snapshot stats` and `tcdb snapshot diff` on two snapshots of N web documents.

Two snapshots of N documents kept by URL (80 % unchanged, 10 % rewritten — half longer, half
shorter —, 10 % replaced by new URLs; ids re-numbered in the second, as LongEval's are), 50
topics with 100 judgments each, are ingested (texts kept) into a fresh database; then
`snapshot_stats` (sizes, whitespace-token lengths, documents in both, churn by length
direction, judgments by grade) and `snapshot_diff` are timed, each warm (median of --repeat),
against the issue's goal: ≤ 2 s each on PostgreSQL for N = 1,000,000.

The ingest of b keeps its churn against a (`snapshot_churn`) and each snapshot's token totals,
so a → b reads them; b → a is a pair no ingest compared, counted live from the memberships —
timed too, as what a pair of non-consecutive snapshots costs.

    python bench/longitudinal_stats.py [--docs 1000000] [--backend postgresql] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import temporary_database  # noqa: E402

from tcdb.operations import Database

GOAL_SECONDS = 2.0
N_TOPICS, JUDGED = 50, 100


def _words(n: int, rng: random.Random) -> str:
    return " ".join(f"w{rng.randrange(5000)}" for _ in range(n))


def write_snapshots(folder: Path, n_docs: int, seed: int = 1) -> dict[str, tuple[Path, Path, Path]]:
    """`a` and `b` as (corpus.jsonl, topics.tsv, qrels.txt), streamed to disk."""
    rng = random.Random(seed)
    lengths = [rng.randint(20, 200) for _ in range(n_docs)]
    n_changed = n_replaced = n_docs // 10
    out: dict[str, tuple[Path, Path, Path]] = {}
    for label in ("a", "b"):
        part = folder / label
        part.mkdir(parents=True, exist_ok=True)
        corpus, topics, qrels = part / "corpus.jsonl", part / "topics.tsv", part / "qrels.txt"
        docs: list[str] = []
        with corpus.open("w") as handle:
            for i in range(n_docs):
                url = f"https://site/{i if label == 'a' or i >= n_replaced else n_docs + i}"
                n = lengths[i]
                if label == "b" and n_replaced <= i < n_replaced + n_changed:
                    n += 5 if i % 2 else -5  # rewritten: half grew, half shrank
                doc_id = f"{label}{i}"
                docs.append(doc_id)
                text = _words(n, random.Random(i * 7 + (label == "b" and n != lengths[i])))
                handle.write(json.dumps({"_id": doc_id, "url": url, "text": text}) + "\n")
        topics.write_text("".join(f"{t}\tquery {t}\n" for t in range(1, N_TOPICS + 1)))
        with qrels.open("w") as handle:
            for t in range(1, N_TOPICS + 1):
                for doc in rng.sample(docs, JUDGED):
                    handle.write(f"{t} 0 {doc} {rng.choice([0, 0, 1, 2])}\n")
        out[label] = (corpus, topics, qrels)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=["postgresql", "sqlite"], default="postgresql")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from tcdb.storage import db

    with tempfile.TemporaryDirectory(prefix="tcdb-bench-stats-") as tmp, \
            temporary_database(args.backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        db.dispose_engine(url)
        from tcdb.api import snapshot_diff, snapshot_stats
        from tcdb.catalog.collections import add_collection
        from tcdb.collections.sources.snapshot import LocalSource
        from tcdb.ingest import ingest_snapshot

        started = time.perf_counter()
        files = write_snapshots(Path(tmp), args.docs)
        print(f"wrote 2 × {args.docs:,} documents in {time.perf_counter() - started:.1f}s")
        add_collection(Database(), "bench", "url", "query_id")
        for label, (corpus, topics, qrels) in files.items():
            started = time.perf_counter()
            ingest_snapshot(Database(), "bench", label, LocalSource(corpus, topics, qrels))
            print(f"ingested {label} in {time.perf_counter() - started:.1f}s")
        report = snapshot_stats("bench", ["a", "b"])
        churn = report.churn[0]
        print(f"stats: in both {report.present_in_all:,}; churn added {churn.added:,}, "
              f"removed {churn.removed:,}, grew {churn.grew:,}, shrank "
              f"{churn.shrank:,}, same length {churn.same_length:,}, unchanged "
              f"{churn.unchanged:,}; tokens a {report.per_snapshot[0].tokens.model_dump()}")
        for name, call in (("snapshot stats", lambda: snapshot_stats("bench", ["a", "b"])),
                           ("snapshot stats --no-tokens",
                            lambda: snapshot_stats("bench", ["a", "b"], tokens=False)),
                           ("snapshot diff", lambda: snapshot_diff("bench", ["a", "b"])),
                           ("snapshot stats b a (counted live)",
                            lambda: snapshot_stats("bench", ["b", "a"])),
                           ("snapshot diff b a (counted live)",
                            lambda: snapshot_diff("bench", ["b", "a"]))):
            times = []
            for _ in range(max(1, args.repeat)):
                started = time.perf_counter()
                call()
                times.append(time.perf_counter() - started)
            times.sort()
            mid = times[len(times) // 2]
            print(f"{name}: {mid:.2f}s median of {len(times)} (range {times[0]:.2f}–"
                  f"{times[-1]:.2f}) = {mid / GOAL_SECONDS:.2f} × the {GOAL_SECONDS:g} s goal "
                  f"({args.docs:,} documents, {args.backend})")


if __name__ == "__main__":
    main()
