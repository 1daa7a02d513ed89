"""Ingest speed and memory: a LongEval-shaped snapshot of N documents of ~5 KB.

Printed side by side, from one run:
* docs/s of iterating the whole snapshot with ir_datasets-longeval in a fresh process (the
  baseline; from `docs_iter()` to its end, so its start-up counts once, as tcdb's does),
* docs/s of `tcdb snapshot ingest --irds longeval-web/…` into PostgreSQL and SQLite, and the
  ratio to the baseline,
* peak RSS of the ingesting process and its reader process together, at N and at 4·N
  documents (PostgreSQL),
* re-ingesting the next snapshot with 80 % of the documents unchanged.

Goals (issue 3): ≥ 20,000 docs/s into PostgreSQL with text, ≥ 10× the ir_datasets-longeval
rate, peak RSS < 1 GB and not growing with N, the 80 %-unchanged snapshot faster than the first.

This machine's speed swings by up to 2× within minutes, so every figure is the median of
`--repeat` rounds (each into fresh databases, the baseline measured once per round), printed
with its range.

    python bench/ingest.py [--docs 100000] [--repeat 3] [--skip-4n] [--backends postgres sqlite]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from _common import median, peak_rss_mb, temporary_database

from tcdb.collections.demo.longeval_files import LongEvalSnapshot, write_longeval_web
from tcdb.collections.records import DocumentRecord, QrelRecord, TopicRecord

RATE, RATIO = "{:,.0f}", "{:.1f}"  # how docs/s and ratios print
WORDS = np.array([f"w{i:04d}x" for i in range(5000)])


def _texts(rng: np.random.Generator, n: int, words_per_doc: int = 700) -> list[str]:
    out: list[str] = []
    for start in range(0, n, 10_000):
        m = min(10_000, n - start)
        idx = rng.integers(0, len(WORDS), size=(m, words_per_doc))
        out.extend(" ".join(row) for row in WORDS[idx])
    return out


def write_collection(home: Path, n: int, seed: int = 0) -> None:
    """2022-06 with n documents; 2022-07 keeps 80 % unchanged, rewrites 10 %, drops 10 % and
    adds 10 % new ones (same URLs for the documents that stay)."""
    rng = np.random.default_rng(seed)
    texts = _texts(rng, n)
    n_new = n // 10
    rewritten = _texts(rng, n_new)
    extra = _texts(rng, n_new)

    def june():
        for i in range(n):
            url = f"https://site{i % 997}.fr/p{i}"
            yield DocumentRecord(str(10_000_000 + i), texts[i], url=url)

    def july():
        for i in range(n):
            if i % 10 == 0:  # dropped
                continue
            text = rewritten[i // 10] if i % 10 == 1 else texts[i]
            yield DocumentRecord(str(20_000_000 + i), text, url=f"https://site{i % 997}.fr/p{i}")
        for j in range(n_new):
            yield DocumentRecord(str(30_000_000 + j), extra[j], url=f"https://new.fr/p{j}")

    queries = [TopicRecord(f"q{i}", f"query number {i}") for i in range(50)]
    qrels = [QrelRecord(f"q{i}", str(10_000_000 + i * 7), 1) for i in range(50)]
    qrels_july = [QrelRecord(f"q{i}", str(20_000_000 + i * 10 + 3), 1) for i in range(50)]
    write_longeval_web(home, {"2022-06": LongEvalSnapshot(june(), queries, qrels),
                              "2022-07": LongEvalSnapshot(july(), queries, qrels_july)})


def irds_child() -> None:
    """Iterate the first snapshot with ir_datasets-longeval in this (fresh) process."""
    from tcdb.collections.ir_datasets_source import load_dataset

    dataset = load_dataset("longeval-web/2022-06")
    start = time.perf_counter()
    n = sum(1 for _ in dataset.docs_iter())
    print(json.dumps({"docs": n, "seconds": time.perf_counter() - start}))


def irds_rate(home: Path) -> float:
    """docs/s of the baseline. Not a sample of the first documents: the first one takes
    ~1 s (imports, metadata cache), which made a 3,000-document sample 5× too slow."""
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    out = subprocess.run([sys.executable, __file__, "--child-irds"], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ir_datasets-longeval iteration failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["docs"] / result["seconds"]


def child(url: str, label: str) -> None:
    """Ingest one snapshot in this (fresh) process and report time and peak RSS as JSON."""
    os.environ["TCDB_DATABASE_URL"] = url
    from tcdb.collections.ir_datasets_source import IrdsSource
    from tcdb.ingest import ingest_snapshot

    report = ingest_snapshot("longeval-web", label, IrdsSource(f"longeval-web/{label}"))
    # The reader runs in a forked process (tcdb.ingest.readahead): its peak counts too. ru_maxrss of
    # children starts at this process's size at fork, so the sum is an upper bound.
    reader_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": report.seconds, "docs": report.n_documents,
                      "new_contents": report.n_new_contents,
                      "rss_mb": peak_rss_mb() + reader_mb, "reader_rss_mb": reader_mb}))


def run_child(url: str, label: str, home: Path) -> dict:
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    out = subprocess.run([sys.executable, __file__, "--child", url, label], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ingest of {label} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def ingest_into(backend: str, home: Path, both: bool) -> dict[str, dict]:
    from tcdb.catalog.collections import add_collection

    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        add_collection("longeval-web", "url", "text", id_fallback=True)
        results = {"2022-06": run_child(url, "2022-06", home)}
        if both:
            results["2022-07"] = run_child(url, "2022-07", home)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description="tcdb ingest benchmark")
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; figures are medians")
    parser.add_argument("--skip-4n", action="store_true")
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    parser.add_argument("--child", nargs=2, metavar=("URL", "LABEL"))
    parser.add_argument("--child-irds", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.child_irds:
        irds_child()
        return
    n = args.docs
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-ingest-") as tmp:
        home = Path(tmp) / "irds"
        os.environ["IR_DATASETS_HOME"] = str(home)
        t = time.perf_counter()
        write_collection(home, n)
        os.sync()  # the generator's dirty pages must not compete with the database's writes
        print(f"ingest: generated 2 LongEval-shaped snapshots of {n:,} docs (~5 KB) in "
              f"{time.perf_counter() - t:.1f} s")
        rounds: dict[str, list[dict[str, dict]]] = {b: [] for b in args.backends}
        bases: list[float] = []
        for _ in range(args.repeat):
            bases.append(irds_rate(home))
            for backend in args.backends:
                rounds[backend].append(ingest_into(backend, home, both=True))
        print(f"  ir_datasets-longeval docs_iter, whole snapshot: {median(bases, RATE)} docs/s "
              "(baseline)")
        if args.repeat > 1:
            print(f"  medians of {args.repeat} rounds (range)")
        first_rss: dict[str, float] = {}
        for backend in args.backends:
            firsts = [r["2022-06"] for r in rounds[backend]]
            seconds = [r["2022-07"] for r in rounds[backend]]
            rates = [f["docs"] / f["seconds"] for f in firsts]
            rate = statistics.median(rates)
            ratios = [r / b for r, b in zip(rates, bases, strict=True)]
            rss = max(f["rss_mb"] for f in firsts)
            first_rss[backend] = rss
            first_s = statistics.median(f["seconds"] for f in firsts)
            second_s = statistics.median(s["seconds"] for s in seconds)
            print(f"  tcdb ingest → {backend:<8} first snapshot {median(rates, RATE)} docs/s "
                  f"({first_s:.1f} s; {median(ratios, RATIO)}× baseline in the same round); "
                  f"peak RSS {rss:.0f} MB, reader ≤ "
                  f"{max(f['reader_rss_mb'] for f in firsts):.0f} MB of it")
            print(f"  {'':<25} next snapshot, 80 % unchanged: {second_s:.1f} s "
                  f"({median([s['docs'] / s['seconds'] for s in seconds], RATE)} docs/s, "
                  f"{seconds[0]['new_contents']:,} new versions)")
            if backend == "postgres":
                ok = rate >= 20_000 and statistics.median(ratios) >= 10 and rss < 1024 \
                    and second_s < first_s
                print(f"    goal ≥20,000 docs/s, ≥10×, RSS < 1 GB, re-ingest faster: "
                      f"{'MET' if ok else 'MISSED'}")
        if not args.skip_4n and "postgres" in first_rss:
            write_collection(home, 4 * n, seed=1)
            os.sync()
            r4 = ingest_into("postgres", home, both=False)["2022-06"]
            print(f"  peak RSS (postgres) at N={n:,}: {first_rss['postgres']:.0f} MB, at "
                  f"4·N={4 * n:,}: {r4['rss_mb']:.0f} MB ({r4['docs'] / r4['seconds']:,.0f} "
                  "docs/s)")


if __name__ == "__main__":
    main()
