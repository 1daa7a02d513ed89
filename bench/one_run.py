"""One small run into a big snapshot, as a whole process: wall time, peak memory and the split.

A 5,000-line run imported into a snapshot of 1,000,000 documents with `python -m tcdb run
import`, measured as the user feels it (start-up included), side by side in one run:

* `named-ids`: this checkout, which looks up only the document ids the run names;
* `whole-index`: this checkout made to load the snapshot's whole id index first (what every
  import did before issue 25: forced by replacing `_names_much_of`);
* `baseline`: with `--baseline DIR`, another checkout (its own `.venv`, e.g. a `git worktree`
  of the commit before a change) on a database it ingested itself, so its schema is its own.

Each import's wall time is split into start-up (interpreter, imports, building the command,
settings: until the operation is called), the operation itself, and the rest (printing, exit).
Rounds alternate between the ways, so a shared machine's drift falls on all of them alike.

Goal (issues 25 and 41): ≤ 1.5 s wall and ≤ 250 MB peak RSS.

    python bench/one_run.py [--docs 1000000] [--lines 5000] [--repeat 3]
                            [--backends postgres sqlite] [--baseline ../wt-base]
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
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import temporary_database, write_snapshot_files  # noqa: E402

# The CLI in a process of its own that reports, on exit, when the operation started and ended
# (seconds since the process started) and its own peak RSS (VmHWM).
PROCESS = """
import time
started = time.perf_counter()
import sys
if sys.argv[1] == "whole-index":
    import tcdb.runs.importing as importing
    importing._names_much_of = lambda files, n: True
from tcdb.operations.registry import Operation
spans = []
call = Operation.__call__
def timed(self, request, db=None):
    spans.append(time.perf_counter() - started)
    try:
        return call(self, request, db)
    finally:
        spans.append(time.perf_counter() - started)
Operation.__call__ = timed
from tcdb.cli.app import run
code = run(sys.argv[2:])
print("operation", *spans[:2], file=sys.stderr)
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print("peak_kb", line.split()[1], file=sys.stderr)
sys.exit(code)
"""


# Processes start in a neutral folder: `python -m tcdb` in a checkout would import that
# checkout's `tcdb/` whatever the interpreter's own install is.
NEUTRAL = tempfile.gettempdir()


def cli(python: str, *args: str) -> None:
    """A tcdb command of one checkout, checked."""
    done = subprocess.run([python, "-m", "tcdb", *args], capture_output=True, text=True,
                          cwd=NEUTRAL)
    if done.returncode:
        raise SystemExit(f"{' '.join(args[:2])}: {done.stderr.strip()}")


def import_once(python: str, url: str, run_file: Path, way: str) -> dict[str, float]:
    """Seconds (wall, start-up, operation, rest) and peak MB of one import in a fresh process;
    the run is deleted afterwards."""
    args = ["run", "import", "bench", "s1", str(run_file), "--database-url", url]
    started = time.perf_counter()
    done = subprocess.run([python, "-c", PROCESS, way, *args], capture_output=True, text=True,
                          cwd=NEUTRAL)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr)
    said = {line.split()[0]: line.split()[1:] for line in done.stderr.splitlines()
            if line.split() and line.split()[0] in ("operation", "peak_kb")}
    begin, end = (float(s) for s in said["operation"])
    cli(python, "run", "delete", "bench", "s1", "small", "--yes", "--database-url", url)
    return {"wall": wall, "start-up": begin, "operation": end - begin, "rest": wall - end,
            "peak": int(said["peak_kb"][0]) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--lines", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    parser.add_argument("--baseline", type=Path, help="Another checkout with its own .venv.")
    args = parser.parse_args()
    from tcdb.collections.runs.trec import write_run

    here = sys.executable
    ways = {"named-ids": here, "whole-index": here}
    if args.baseline is not None:
        ways["baseline"] = str((args.baseline / ".venv" / "bin" / "python").absolute())
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
              f"documents; median of {args.repeat}, rounds alternating; {os.cpu_count()} "
              f"CPUs; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for backend in args.backends:
            with ExitStack() as stack:
                urls: dict[str, str] = {}
                for python in dict.fromkeys(ways.values()):  # one database per checkout
                    url = stack.enter_context(temporary_database(backend, migrate=False))
                    cli(python, "db", "upgrade", "--database-url", url)
                    cli(python, "collection", "add", "bench", "--database-url", url)
                    cli(python, "snapshot", "ingest", "bench", "s1", "--docs", str(docs),
                        "--topics", str(topic_file), "--no-text", "--database-url", url)
                    urls[python] = url
                results: dict[str, list[dict[str, float]]] = {way: [] for way in ways}
                for _ in range(args.repeat):
                    for way, python in ways.items():
                        results[way].append(import_once(python, urls[python], run_file, way))
                print(f"{backend}:")
                print(f"  {'':<12} {'wall':>6}  {'start-up':>8}  {'operation':>9}  "
                      f"{'rest':>5}  {'peak':>7}")
                for way, rounds in results.items():
                    m = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
                    goal = "  goal ≤ 1.5 s, ≤ 250 MB" if way == "named-ids" else ""
                    print(f"  {way:<12} {m['wall']:5.2f}s  {m['start-up']:7.2f}s  "
                          f"{m['operation']:8.2f}s  {m['rest']:4.2f}s  {m['peak']:4.0f} MB"
                          f"{goal}")
                named = statistics.median(r["wall"] for r in results["named-ids"])
                for way in ways:
                    if way != "named-ids":
                        other = statistics.median(r["wall"] for r in results[way])
                        other_peak = statistics.median(r["peak"] for r in results[way])
                        named_peak = statistics.median(r["peak"] for r in results["named-ids"])
                        print(f"  {way} / named-ids: {other / named:.2f}× the time, "
                              f"{other_peak / named_peak:.2f}× the peak memory")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
