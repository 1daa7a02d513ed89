"""A TREC-COVID-shaped campaign's runs with their metadata: one call per round, or per group.

Five rounds of 143, 136, 79, 72 and 126 runs (556, as TREC-COVID) from ~40 groups, each run
automatic, manual or feedback, judged or not. The organiser imports each round either with
one `tcdb run import … --metadata round.csv` (this issue's way), or — the only way before — one
`tcdb run import … --group G --run-type T [--contributed]` per combination, each a process of
its own that pays Python's start-up. Both are run as the user runs them (`python -m tcdb`
processes), side by side on one database kind, and must store the same metadata.

    python bench/run_metadata.py [--topics 50] [--depth 100] [--rounds 5]
                                 [--backends sqlite postgres]
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import rate, temporary_database, timer, write_snapshot_files  # noqa: E402

ROUNDS = [143, 136, 79, 72, 126]  # TREC-COVID's runs per round
N_GROUPS = 40
N_DOCS = 20_000


def make_round(folder: Path, n_runs: int, n_topics: int, depth: int, rng: random.Random
               ) -> tuple[list[Path], Path, dict[tuple[str, str, bool], list[Path]]]:
    """A round's run files, its metadata table, and the files per (group, type, judged)."""
    from tcdb.collections.runs.trec import write_run

    folder.mkdir(parents=True)
    files, rows = [], []
    combos: dict[tuple[str, str, bool], list[Path]] = {}
    for r in range(n_runs):
        group = f"team{rng.randrange(N_GROUPS):02d}"
        run_type = rng.choices(["automatic", "manual", "feedback"], [6, 1, 2])[0]
        judged = rng.random() < 0.4
        tag = f"{group}-r{r:03d}"
        entries = [(f"{t}", f"doc{d}", rank, float(depth - rank))
                   for t in range(1, n_topics + 1)
                   for rank, d in enumerate(rng.sample(range(N_DOCS), depth), start=1)]
        path = folder / f"{tag}.run"
        write_run(path, entries, tag)
        files.append(path)
        rows.append((tag, group, run_type, "yes" if judged else "no"))
        combos.setdefault((group, run_type, judged), []).append(path)
    table = folder / "runs.csv"
    with table.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("tag", "group", "runtype", "contributed"), *rows])
    return files, table, combos


def tcdb(url: str, *args: str | Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tcdb", "--database-url", url,
                           *map(str, args)], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"tcdb {' '.join(map(str, args[:3]))} failed:\n{done.stderr}")


def stored_metadata(url: str) -> list[tuple[object, ...]]:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(text(
            "SELECT s.label, r.tag, r.group_name, r.run_type, r.contributed, r.n_entries "
            "FROM run r JOIN snapshot s ON s.id = r.snapshot_id ORDER BY s.label, r.tag")).all()
    engine.dispose()
    return [tuple(row) for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=len(ROUNDS), help="Only the first N.")
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    args = parser.parse_args()
    rng = random.Random(556)
    sizes = ROUNDS[:args.rounds]
    n_rows = sum(sizes) * args.topics * args.depth
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-metadata-") as tmp:
        folder = Path(tmp)
        docs, topics = write_snapshot_files(folder, N_DOCS,
                                            [str(t) for t in range(1, args.topics + 1)])
        rounds = [make_round(folder / f"round{i}", n, args.topics, args.depth, rng)
                  for i, n in enumerate(sizes, start=1)]
        n_calls = sum(len(combos) for _, _, combos in rounds)
        print(f"{sum(sizes)} runs in {len(sizes)} rounds from {N_GROUPS} groups · "
              f"{args.topics} topics × {args.depth} documents = {n_rows:,} rows · "
              f"{n_calls} (group, run type, judged) combinations · {os.cpu_count()} CPUs")
        for backend in args.backends:
            seconds, stored = {}, {}
            for way in ("per round", "per group"):
                with temporary_database(backend) as url:
                    tcdb(url, "collection", "add", "covid")
                    for i in range(1, len(sizes) + 1):
                        tcdb(url, "snapshot", "ingest", "covid", f"round{i}", "--docs", docs,
                             "--topics", topics)
                    with timer() as t:
                        for i, (files, table, combos) in enumerate(rounds, start=1):
                            if way == "per round":
                                tcdb(url, "run", "import", "covid", f"round{i}", *files,
                                     "--metadata", table)
                                continue
                            for (group, run_type, judged), paths in combos.items():
                                tcdb(url, "run", "import", "covid", f"round{i}", *paths,
                                     "--group", group, "--run-type", run_type,
                                     "--contributed" if judged else "--not-contributed")
                    seconds[way], stored[way] = t[0], stored_metadata(url)
            assert stored["per round"] == stored["per group"], "the two ways stored different runs"
            calls = {"per round": len(sizes), "per group": n_calls}
            print(f"{backend}")
            for way, s in seconds.items():
                print(f"  one call {way:<9} {calls[way]:4d} calls {s:7.1f}s {rate(n_rows, s)}")
            print(f"  per round is {seconds['per group'] / seconds['per round']:.1f}× faster; "
                  "both stored the same metadata")


if __name__ == "__main__":
    main()
