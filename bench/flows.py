"""What a flow costs over the CLI command that does the same work: Prefect's start-up, alone.

`tcdb evaluate` and `tcdb flows run evaluate` (same collection, snapshot, qrels and measures)
each on a fresh copy of the same database, as whole processes; beside them Prefect's start
alone (a flow that does nothing, in a process of its own) and the hourly flow with nothing
left to compute. Goal (issue 25): flow ≤ CLI + Prefect's start.

    python bench/flows.py [--runs 20] [--topics 50] [--depth 1000] [--repeat 3]
                          [--backends sqlite postgres]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import temporary_database  # noqa: E402
from runs import MEASURES, make_files  # noqa: E402

from tcdb.operations import Database

NOTHING = ("from tcdb.flows.prefect_env import configure_prefect; configure_prefect(); "
           "from prefect import flow; flow(name='nothing')(lambda: None)()")


def seconds(*command: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:4])} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def fill(url: str, folder: Path, runs: list[Path]) -> None:
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    os.environ["TCDB_DATABASE_URL"] = url
    add_collection(Database(), "bench")
    ingest_snapshot(Database(),
                    "bench", "s1", LocalSource(folder / "docs.trec", folder / "topics.tsv",
                                               folder / "qrels.txt"), with_text=False)
    run_import("bench", "s1", runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    args = parser.parse_args()
    tcdb = [sys.executable, "-m", "tcdb"]
    measures = [f"--measure={m}" for m in MEASURES]
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-flows-") as tmp:
        folder = Path(tmp)
        os.environ["PREFECT_HOME"] = str(folder / "prefect")
        os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
        _, _, _, runs = make_files(folder, args.runs, args.topics, args.depth, 20_000)
        print(f"evaluate {args.runs} runs × {args.topics} topics × {args.depth} documents, "
              f"{len(MEASURES)} measures; whole processes")
        seconds(sys.executable, "-c", NOTHING)  # Prefect's first start creates its database
        params = ["--param", "collection=bench", "--param", "snapshot=s1", "--param",
                  "qrels=original", "--param",
                  "measures=[" + ",".join(f'"{m}"' for m in MEASURES) + "]"]
        for backend in args.backends:
            cli, flow, hourly = [], [], []
            for _ in range(args.repeat):  # a shared machine's speed drifts: the best of N
                with temporary_database(backend) as cli_url, \
                        temporary_database(backend) as flow_url:
                    fill(cli_url, folder, runs)
                    fill(flow_url, folder, runs)
                    cli.append(seconds(*tcdb, "evaluate", "bench", "s1", "--qrels", "original",
                                       *measures, "--database-url", cli_url))
                    flow.append(seconds(*tcdb, "flows", "run", "evaluate", *params,
                                        "--database-url", flow_url))
                    hourly.append(seconds(*tcdb, "flows", "run", "evaluate", "--database-url",
                                          flow_url))
            start = min(seconds(sys.executable, "-c", NOTHING) for _ in range(args.repeat))
            cli_s, flow_s, hourly_s = min(cli), min(flow), min(hourly)
            print(f"{backend} (best of {args.repeat})")
            print(f"  Prefect's start alone          {start:6.2f} s")
            print(f"  tcdb evaluate                  {cli_s:6.2f} s")
            print(f"  tcdb flows run evaluate        {flow_s:6.2f} s  = CLI + "
                  f"{flow_s - cli_s:5.2f} s ({(flow_s - cli_s) / start:.2f}× Prefect's start)"
                  "  goal ≤ 1.00×")
            print(f"  hourly flow, nothing to do     {hourly_s:6.2f} s")


if __name__ == "__main__":
    main()
