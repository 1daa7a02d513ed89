"""Dashboard page times: seed 134 runs × 50 topics × 3 snapshots, then run every page through
`streamlit.testing.v1.AppTest` and print its server-side script time, cold and warm, as ratios
against the goals.

Goals (issues 9 and 23): every page ≤ 1.5 s warm (its cached figures in memory, as a second
visitor sees it) and ≤ 4 s cold (nothing cached: the first visitor after the cache expired),
on SQLite and on PostgreSQL. Cold times the entry script and the page after clearing every
cached figure; warm is the best of three runs after it. A ratio ≤ 1 meets the goal.

    .venv/bin/python bench/dashboard.py [--runs 134] [--topics 50] [--documents 1000]
                                        [--backend sqlite --backend postgres]

PostgreSQL runs on a throw-away database on TCDB_BENCH_POSTGRES_URL (default: the local server).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from _common import temporary_database  # noqa: E402

from tests.builders import COLLECTION, PAGES, seed_collection  # noqa: E402

APP = ROOT / "dashboard" / "app.py"
WARM_GOAL = 1.5
COLD_GOAL = 4.0


def run_page(page: str, params: dict[str, str], *, cold: bool) -> float:
    """Seconds of one AppTest run of `page` (entry script + page), failing on any exception;
    `cold`: every cached figure forgotten first."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    # AppTest runs pages without a server and warns about it on stderr at every run.
    with contextlib.redirect_stderr(io.StringIO()):
        at = AppTest.from_file(str(APP), default_timeout=600)
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        if cold:
            st.cache_data.clear()
        started = time.perf_counter()
        if page == "overview":
            at.run()
        else:
            at.switch_page(f"views/{page}.py").run()
        seconds = time.perf_counter() - started
    if at.exception:
        raise SystemExit(f"{page}: {at.exception[0].value}")
    return seconds


def bench(backend: str, url: str, args: argparse.Namespace, folder: Path) -> bool:
    os.environ["TCDB_DATABASE_URL"] = url
    started = time.perf_counter()
    seeded = seed_collection(folder, n_runs=args.runs, n_topics=args.topics,
                             n_documents=args.documents, depth=args.depth, progress=True)
    print(f"== {backend}: seeded {args.runs} runs × {args.topics} topics × "
          f"{len(seeded.labels)} snapshots (depth {args.depth}, {args.documents} documents) in "
          f"{time.perf_counter() - started:.1f} s")
    params = {"collection": COLLECTION, "snapshot": seeded.labels[-1], "measure": "nDCG@10",
              "pivot": "bm25", "runs": ",".join(seeded.systems[:4]), "depth": "100"}
    run_page("overview", params, cold=True)  # imports and engine: not any page's cost
    ok = True
    print(f"{'page':<14}{'cold s':>8}{'÷ ' + str(COLD_GOAL):>8}{'warm s':>9}"
          f"{'÷ ' + str(WARM_GOAL):>8}")
    for page in PAGES:
        cold = run_page(page, params, cold=True)
        warm = min(run_page(page, params, cold=False) for _ in range(3))
        over = [f"cold over {COLD_GOAL} s"] * (cold > COLD_GOAL) + \
            [f"warm over {WARM_GOAL} s"] * (warm > WARM_GOAL)
        ok &= not over
        print(f"{page:<14}{cold:>8.3f}{cold / COLD_GOAL:>8.2f}{warm:>9.3f}"
              f"{warm / WARM_GOAL:>8.2f}" + (f"  {', '.join(over)}" if over else ""))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=134)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--backend", action="append", choices=["sqlite", "postgres"],
                        help="Database to run on (repeat; default: both)")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-dashboard-") as tmp:
        for backend in args.backend or ["sqlite", "postgres"]:
            folder = Path(tmp) / backend
            if backend == "sqlite":  # a file in this folder, which goes with it
                from tcdb.storage import migrate

                folder.mkdir()
                url = f"sqlite:///{folder / 'bench.sqlite'}"
                migrate.upgrade(url)
                ok &= bench(backend, url, args, folder)
                continue
            with temporary_database(backend) as url:
                ok &= bench(backend, url, args, folder)
    print(f"goals: every page ≤ {COLD_GOAL} s cold and ≤ {WARM_GOAL} s warm — "
          + ("met" if ok else "NOT met"))
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
