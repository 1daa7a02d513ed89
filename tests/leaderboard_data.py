"""A small MS MARCO-shaped leaderboard with planted patterns, for the outcome breakdown (Lin et
al.'s Table 2) and the leaderboard tests.

Forty topics, one relevant document each (`r<topic>`, grade 1; a judged non-relevant `n0` per
topic, as MS MARCO qrels carry none but other one-relevant qrels do), and four runs submitted in
turn, each placing the relevant document at a planted rank (absent: not retrieved):

* `bm25` (2020-01-10): topics 1–30 at rank 10 + i mod 5, topics 31–40 not found;
* `bert` (2020-06-01): topics 1–30 at rank 2 + i mod 3 (better on "both" topics), 31–40 not;
* `t5` (2020-12-01): as `bert` on 1–30, and topics 31–40 at rank 50 (better on "only one");
* `greedy` (2021-03-01): misses topics 1–10 (harm on "only one"), rank 1 on topics 11–40
  (better on "both"): the highest mean, yet not significantly better than `t5` — it does harm.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.builders import build_snapshot, write_run_file

TOPICS = [f"{i}" for i in range(1, 41)]
NONREL = [f"n{i}" for i in range(120)]
DATES = {"bm25": dt.date(2020, 1, 10), "bert": dt.date(2020, 6, 1), "t5": dt.date(2020, 12, 1),
         "greedy": dt.date(2021, 3, 1)}


def planted_rank(run: str, i: int) -> int | None:
    """Where `run` puts topic i's relevant document (None: not in its ranking)."""
    if run == "bm25":
        return 10 + i % 5 if i <= 30 else None
    if run == "bert":
        return 2 + i % 3 if i <= 30 else None
    if run == "t5":
        return 2 + i % 3 if i <= 30 else 50
    return None if i <= 10 else 1


def build(tmp_path: Path, collection: str = "marco", snapshot: str = "dev") -> None:
    """Ingest the snapshot and import the four runs with their submitted dates."""
    from tcdb.api import run_import

    docs = {**{f"r{t}": f"the answer to {t}" for t in TOPICS},
            **{d: f"filler {d}" for d in NONREL}}
    qrels = [(t, f"r{t}", 1) for t in TOPICS] + [(t, "n0", 0) for t in TOPICS]
    build_snapshot(tmp_path, collection, snapshot, docs, {t: f"question {t}" for t in TOPICS},
                   qrels)
    for run, date in DATES.items():
        rows = []
        for i, topic in enumerate(TOPICS, start=1):
            rank = planted_rank(run, i)
            length = max(rank or 0, 20)
            others = iter(NONREL[i % 7:])
            ranking = [f"r{topic}" if r == rank else next(others) for r in range(1, length + 1)]
            rows += [(topic, doc, float(200 - r)) for r, doc in enumerate(ranking, start=1)]
        run_import(collection, snapshot, [write_run_file(tmp_path / "runs", run, rows)],
                   submitted=date)
