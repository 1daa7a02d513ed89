"""Ingest speed and memory: a LongEval-shaped snapshot of N documents of ~5 KB in many files.

Printed side by side, from one run:
* docs/s of iterating the whole snapshot with ir_datasets-longeval in a fresh process (the
  baseline; from `docs_iter()` to its end, so its start-up counts once, as tcdb's does),
* docs/s of `tcdb snapshot ingest --irds longeval-web/…` into PostgreSQL and SQLite, with one
  reader process (`TCDB_READERS=1`) and with readers in parallel over the snapshot's files
  (`--readers`, default 2), and the ratio to the baseline,
* CPU µs per document of every process: the baseline's, and ingest's client, its reader
  processes together, and PostgreSQL's backend (+ WAL writer, checkpointer, background
  writer), read from /proc as bench/longitudinal.py does; the load average before and after,
* the shares of the first snapshot's wall time PostgreSQL's backend ran, waited for a core,
  and waited for the client or the disk (/proc/<pid>/schedstat),
* peak RSS of the ingesting process and its reader processes together, at N and at 4·N
  documents (PostgreSQL),
* re-ingesting the next snapshot with 80 % of the documents unchanged.

Goals (issue 3): ≥ 20,000 docs/s into PostgreSQL with text, peak RSS < 1 GB and not growing
with N, the 80 %-unchanged snapshot faster than the first; (issue 34) ≥ 4.5× the
ir_datasets-longeval rate in the same round.

This machine's speed swings by up to 2× within minutes, so every figure is the median of
`--repeat` rounds (each into fresh databases, the baseline measured once per round), printed
with its range.

    python bench/ingest.py [--docs 100000] [--docs-per-file 10000] [--repeat 3] [--skip-4n]
                           [--backends postgres sqlite] [--readers 2]
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

from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
from tcdb.operations import Database

RATE, RATIO = "{:,.0f}", "{:.1f}"  # how docs/s and ratios print
WORDS = np.array([f"w{i:04d}x" for i in range(5000)])


def _texts(rng: np.random.Generator, n: int, words_per_doc: int = 700) -> list[str]:
    out: list[str] = []
    for start in range(0, n, 10_000):
        m = min(10_000, n - start)
        idx = rng.integers(0, len(WORDS), size=(m, words_per_doc))
        out.extend(" ".join(row) for row in WORDS[idx])
    return out


def write_collection(home: Path, n: int, seed: int = 0, docs_per_file: int = 10_000) -> None:
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
                              "2022-07": LongEvalSnapshot(july(), queries, qrels_july)},
                       docs_per_file=docs_per_file)


def irds_child() -> None:
    """Iterate the first snapshot with ir_datasets-longeval in this (fresh) process."""
    from tcdb.collections.sources.ir_datasets_source import load_dataset

    dataset = load_dataset("longeval-web/2022-06")
    start, cpu = time.perf_counter(), time.process_time()
    n = sum(1 for _ in dataset.docs_iter())
    print(json.dumps({"docs": n, "seconds": time.perf_counter() - start,
                      "cpu": time.process_time() - cpu}))


def irds_rate(home: Path) -> dict:
    """docs/s of the baseline. Not a sample of the first documents: the first one takes
    ~1 s (imports, metadata cache), which made a 3,000-document sample 5× too slow."""
    env = {**os.environ, "IR_DATASETS_HOME": str(home)}
    out = subprocess.run([sys.executable, __file__, "--child-irds"], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ir_datasets-longeval iteration failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {"rate": result["docs"] / result["seconds"], "cpu_us": 1e6 * result["cpu"] /
            result["docs"]}


def child(url: str, label: str) -> None:
    """Ingest one snapshot in this (fresh) process and report time, CPU of every process and
    peak RSS as JSON."""
    os.environ["TCDB_DATABASE_URL"] = url
    from longitudinal import _postgres_cpu

    from tcdb.collections.sources.ir_datasets_source import IrdsSource
    from tcdb.ingest import ingest_snapshot

    postgres = url.startswith("postgresql")
    started = time.time()
    background = _postgres_cpu(started)["background"] if postgres else 0.0
    source = IrdsSource(f"longeval-web/{label}")
    cpu = time.process_time()  # the ingest's, not the imports'
    report = ingest_snapshot(Database(), "longeval-web", label, source)
    cpu = time.process_time() - cpu
    server = (_postgres_cpu(started) if postgres else
              {"backend": 0.0, "background": background, "running": 0.0, "queued": 0.0})
    # The readers run in forked processes (tcdb.ingest.readahead): their peak counts too.
    # ru_maxrss of children is the largest child's, which starts at this process's size at
    # fork: this process's peak plus that once per reader is an upper bound.
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    reader_mb = kids.ru_maxrss / 1024 * int(os.environ.get("TCDB_READERS", "1"))
    docs = max(report.n_documents, 1)
    print(json.dumps({"seconds": report.seconds, "docs": report.n_documents,
                      "new_contents": report.n_new_contents,
                      "rss_mb": peak_rss_mb() + reader_mb, "reader_rss_mb": reader_mb,
                      "client_us": 1e6 * cpu / docs,
                      "readers_us": 1e6 * (kids.ru_utime + kids.ru_stime) / docs,
                      "backend_us": 1e6 * server["backend"] / docs,
                      "background_us": 1e6 * (server["background"] - background) / docs,
                      "backend_running": server["running"] / report.seconds,
                      "backend_queued": server["queued"] / report.seconds}))


def run_child(url: str, label: str, home: Path, readers: int) -> dict:
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "TCDB_READERS": str(readers)}
    out = subprocess.run([sys.executable, __file__, "--child", url, label], env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"ingest of {label} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def ingest_into(backend: str, home: Path, both: bool, readers: int) -> dict[str, dict]:
    from tcdb.catalog.collections import add_collection

    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        add_collection(Database(), "longeval-web", "url", "text", id_fallback=True)
        results = {"2022-06": run_child(url, "2022-06", home, readers)}
        if both:
            results["2022-07"] = run_child(url, "2022-07", home, readers)
        return results


def _cpu(runs: list[dict]) -> str:
    """Median CPU µs per document of each process of an ingest, and their sum."""
    parts = {k: statistics.median(r[f"{k}_us"] for r in runs)
             for k in ("client", "readers", "backend", "background")}
    return (f"CPU µs/doc: client {parts['client']:.0f} + readers {parts['readers']:.0f} + "
            f"PostgreSQL backend {parts['backend']:.0f} + WAL/checkpoint/bgwriter "
            f"{parts['background']:.0f} = {sum(parts.values()):.0f}")


def _schedule(runs: list[dict]) -> str:
    """Median shares of the ingest's wall time its PostgreSQL backend ran, waited for a core,
    and waited for the client or the disk."""
    running = statistics.median(r["backend_running"] for r in runs)
    queued = statistics.median(r["backend_queued"] for r in runs)
    return (f"PostgreSQL backend over the wall time: running {running:.0%}, waiting for a "
            f"core {queued:.0%}, waiting for the client or the disk {1 - running - queued:.0%}")


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description="tcdb ingest benchmark")
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--docs-per-file", type=int, default=10_000,
                        help="documents per TREC file (LongEval ships a snapshot as many files)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; figures are medians")
    parser.add_argument("--skip-4n", action="store_true")
    parser.add_argument("--backends", nargs="+", default=["postgres", "sqlite"])
    parser.add_argument("--readers", type=int, default=2,
                        help="reader processes of the parallel ingest")
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
    modes = {"1 reader": 1, f"{args.readers} readers": args.readers}
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-ingest-") as tmp:
        home = Path(tmp) / "irds"
        os.environ["IR_DATASETS_HOME"] = str(home)
        t = time.perf_counter()
        write_collection(home, n, docs_per_file=args.docs_per_file)
        os.sync()  # the generator's dirty pages must not compete with the database's writes
        files = -(-n // args.docs_per_file)
        print(f"ingest: generated 2 LongEval-shaped snapshots of {n:,} docs (~5 KB) in "
              f"{files} files each, in {time.perf_counter() - t:.1f} s; {_load()}, "
              f"{len(os.sched_getaffinity(0))} cores")
        rounds: dict[tuple[str, str], list[dict[str, dict]]] = {
            (b, m): [] for b in args.backends for m in modes}
        bases: list[dict] = []
        for _ in range(args.repeat):
            bases.append(irds_rate(home))
            for backend in args.backends:
                for mode, readers in modes.items():
                    rounds[backend, mode].append(ingest_into(backend, home, True, readers))
        base_rates = [b["rate"] for b in bases]
        print(f"  ir_datasets-longeval docs_iter, whole snapshot: {median(base_rates, RATE)} "
              f"docs/s (baseline); CPU µs/doc "
              f"{statistics.median(b['cpu_us'] for b in bases):.0f} (one process)")
        if args.repeat > 1:
            print(f"  medians of {args.repeat} rounds (range)")
        first_rss: dict[str, float] = {}
        for backend in args.backends:
            for mode in modes:
                runs = rounds[backend, mode]
                firsts = [r["2022-06"] for r in runs]
                seconds = [r["2022-07"] for r in runs]
                rates = [f["docs"] / f["seconds"] for f in firsts]
                ratios = [r / b for r, b in zip(rates, base_rates, strict=True)]
                rss = max(f["rss_mb"] for f in firsts)
                first_rss[backend] = rss
                first_s = statistics.median(f["seconds"] for f in firsts)
                second_s = statistics.median(s["seconds"] for s in seconds)
                print(f"  tcdb ingest → {backend:<8} {mode:<10} first snapshot "
                      f"{median(rates, RATE)} docs/s ({first_s:.1f} s; "
                      f"{median(ratios, RATIO)}× baseline in the same round); peak RSS "
                      f"{rss:.0f} MB, readers ≤ {max(f['reader_rss_mb'] for f in firsts):.0f} "
                      "MB of it")
                print(f"  {'':<25} {_cpu(firsts)}")
                if backend == "postgres":
                    print(f"  {'':<25} {_schedule(firsts)}")
                print(f"  {'':<25} next snapshot, 80 % unchanged: {second_s:.1f} s "
                      f"({median([s['docs'] / s['seconds'] for s in seconds], RATE)} docs/s, "
                      f"{seconds[0]['new_contents']:,} new versions); {_cpu(seconds)}")
                if backend == "postgres":
                    ok = statistics.median(ratios) >= 4.5 and rss < 1024 and second_s < first_s
                    print(f"    goal ≥4.5× ir_datasets, RSS < 1 GB, re-ingest faster: "
                          f"{'MET' if ok else 'MISSED'}")
        print(f"  {_load()}")
        if not args.skip_4n and "postgres" in first_rss:
            write_collection(home, 4 * n, seed=1, docs_per_file=args.docs_per_file)
            os.sync()
            r4 = ingest_into("postgres", home, False, args.readers)["2022-06"]
            print(f"  peak RSS (postgres, {args.readers} readers) at N={n:,}: "
                  f"{first_rss['postgres']:.0f} MB, at 4·N={4 * n:,}: {r4['rss_mb']:.0f} MB "
                  f"({r4['docs'] / r4['seconds']:,.0f} docs/s)")


if __name__ == "__main__":
    main()
