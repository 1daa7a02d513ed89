"""One small run into a big snapshot, as a whole process: wall time and peak memory.

A 5,000-line run imported into a snapshot of 1,000,000 documents with `python -m tcdb run
import`, measured as the user feels it (start-up included). tcdb looks up only the document
ids the run names; the baseline is the same process loading the snapshot's whole id index
first (what every import did before: forced here by replacing `_names_much_of`), measured side
by side.

Goal (issue 25): ≤ 1.5 s wall and ≤ 250 MB peak RSS.

    python bench/one_run.py [--docs 1000000] [--lines 5000] [--repeat 3]
                            [--backends postgres sqlite]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import temporary_database, timer, write_snapshot_files  # noqa: E402

# The CLI in a process of its own that reports its own peak RSS (VmHWM) on exit.
PROCESS = """
import sys
if sys.argv[1] == "whole-index":
    import tcdb.runs.importing as importing
    importing._names_much_of = lambda files, n: True
from tcdb.cli.app import run
code = run(sys.argv[2:])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print("peak_kb", line.split()[1], file=sys.stderr)
sys.exit(code)
"""


def import_once(url: str, run_file: Path, way: str) -> tuple[float, float]:
    """(seconds, peak MB) of one import in a fresh process; the run is deleted afterwards."""
    args = ["run", "import", "bench", "s1", str(run_file), "--database-url", url]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROCESS, way, *args], capture_output=True,
                          text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr)
    peak = next(int(line.split()[1]) for line in done.stderr.splitlines()
                if line.startswith("peak_kb"))
    subprocess.run([sys.executable, "-m", "tcdb", "run", "delete", "bench", "s1", "small",
                    "--yes", "--database-url", url], check=True, capture_output=True)
    return seconds, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--lines", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    args = parser.parse_args()
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.runs import write_run
    from tcdb.collections.sources import LocalSource
    from tcdb.ingest import ingest_snapshot

    topics = [str(t) for t in range(1, 51)]
    rng = random.Random(5)
    per_topic = args.lines // len(topics)
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-one-run-") as tmp:
        folder = Path(tmp)
        docs, topic_file = write_snapshot_files(folder, args.docs, topics)
        run_file = folder / "small.run"
        write_run(run_file, [(t, f"doc{d}", rank, float(per_topic - rank))
                             for t in topics for rank, d in
                             enumerate(rng.sample(range(args.docs), per_topic), start=1)],
                  "small")
        print(f"a {per_topic * len(topics):,}-line run into a snapshot of {args.docs:,} "
              f"documents; median of {args.repeat}; {os.cpu_count()} CPUs")
        for backend in args.backends:
            with temporary_database(backend) as url:
                os.environ["TCDB_DATABASE_URL"] = url
                add_collection("bench")
                with timer() as ingest:
                    ingest_snapshot("bench", "s1", LocalSource(docs, topic_file),
                                    with_text=False)
                print(f"{backend}: snapshot ingested in {ingest[0]:.1f}s")
                results = {way: [import_once(url, run_file, way) for _ in range(args.repeat)]
                           for way in ("named-ids", "whole-index")}
                for way, runs in results.items():
                    seconds = statistics.median(s for s, _ in runs)
                    peak = statistics.median(p for _, p in runs)
                    goal = "  goal ≤ 1.5 s, ≤ 250 MB" if way == "named-ids" else ""
                    print(f"  {way:<12} {seconds:6.2f} s  {peak:6.0f} MB peak{goal}")
                named = statistics.median(s for s, _ in results["named-ids"])
                whole = statistics.median(s for s, _ in results["whole-index"])
                print(f"  whole-index / named-ids: {whole / named:.1f}× the time")


if __name__ == "__main__":
    main()
