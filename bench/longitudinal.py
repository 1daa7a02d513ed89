"""A LongEval-sized benchmark: three generated web snapshots through every longitudinal step.

Three snapshots of N documents of ~5 KB (80 % unchanged between consecutive ones, 10 %
rewritten under the same URL, 10 % replaced by new URLs; ids re-numbered in every snapshot, as
LongEval's are) are written in the layout ir-datasets-longeval reads, streamed to disk batch by
batch. Then, each step in a fresh process whose own peak RSS (VmHWM, plus the ingest's forked
reader) is printed: ir_datasets-longeval iterating the first snapshot (the baseline), ingest of
each snapshot into PostgreSQL through `IrdsSource`, `snapshot diff`, `snapshot stats` of the
first two, 50 runs × 100 topics imported and evaluated per snapshot, and the persistence
report over the three (cold, warm). Each ingest prints the disk it added to the database beside
its document files' size: unchanged texts are stored once, so later snapshots add less.

Ingest also prints CPU per document: the client's (its process and its reader process) and
PostgreSQL's (the backends serving the step, read from /proc, and the WAL writer, checkpointer
and background writer over the same time).

    python bench/longitudinal.py [--docs 1500000] [--scale 1 2] [--depth 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from _common import children_peak_rss_mb, peak_rss_mb, run_step, temporary_database

from tcdb.operations import Database

LABELS = ("2022-06", "2022-07", "2022-08")
COLLECTION = "longeval-web"
MEASURES = ["nDCG@10", "AP", "P@10"]
N_RUNS, N_TOPICS, JUDGED = 50, 100, 40
PIVOT = "sys00"
ID_BASE = 100_000_000  # snapshot s numbers slot i as (s + 1) · ID_BASE + i
DOCS_PER_FILE = 100_000
BUFFER_WORDS = 12_000_000  # the word stream texts are cut from (~80 MB)
TEXT_BYTES = (4_000, 6_000)  # a text's length is drawn from this range, cut at a word
U64 = np.uint64


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64: a text's position in the word stream from its (slot, version) key."""
    x = x + U64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


class Generated:
    """N document slots over three snapshots; every text, URL and id derives from the seed.

    Between consecutive snapshots a slot's document stays (80 %), is rewritten (10 %, same
    URL) or is replaced by a new document (10 %, new URL and text). A text is a window of a
    word stream drawn once from a fixed Zipf-weighted vocabulary (numpy), so any text is found
    again from its key without keeping it.
    """

    def __init__(self, n: int, seed: int = 0) -> None:
        from tcdb.demo.words import WORDS, make_queries, pseudo_words

        rng = np.random.default_rng(seed)
        self.n = n
        self.fate = rng.integers(0, 10, size=(len(LABELS) - 1, n), dtype=np.int8)
        self.url_gen = np.zeros((len(LABELS), n), np.int64)
        self.version = np.zeros((len(LABELS), n), np.int64)
        for s in range(1, len(LABELS)):
            self.url_gen[s] = self.url_gen[s - 1] + (self.fate[s - 1] == 0)
            self.version[s] = self.version[s - 1] + (self.fate[s - 1] <= 1)
        vocab = np.array([w.encode() for w in WORDS + pseudo_words(rng, 20_000)], dtype=object)
        weights = 1.0 / np.arange(1, len(vocab) + 1)
        stream = rng.choice(len(vocab), BUFFER_WORDS, p=weights / weights.sum())
        self.buffer = b" ".join(vocab[rng.permutation(len(vocab))][stream].tolist())
        self.starts = np.flatnonzero(np.frombuffer(self.buffer, np.uint8) == 32) + 1
        self.sites = pseudo_words(rng, 997)
        self.queries = make_queries(rng, N_TOPICS)
        self.judged = np.stack([rng.choice(n, JUDGED, replace=False) for _ in range(N_TOPICS)])
        self.grades = rng.choice(3, size=(N_TOPICS, JUDGED), p=[0.6, 0.3, 0.1])
        self.quality = np.linspace(2.5, 0.3, N_RUNS)  # how far up a system ranks relevance
        self.drift = rng.normal(0, 0.2, N_RUNS)  # its change per snapshot

    def expected_drift(self, s: int) -> dict[str, int]:
        """What `snapshot diff` must find from snapshot s to s + 1."""
        fate = self.fate[s]
        replaced = int((fate == 0).sum())
        return {"added": replaced, "removed": replaced, "changed": int((fate == 1).sum()),
                "unchanged": int((fate >= 2).sum())}

    def spans(self, s: int, lo: int, hi: int) -> tuple[list[int], list[int]]:
        """(begin, end) byte offsets in the word stream of the texts of slots lo…hi-1."""
        key = np.arange(lo, hi, dtype=U64) * U64(64) + self.version[s, lo:hi].astype(U64)
        h = _mix(key)
        begin = self.starts[(h % U64(len(self.starts) - 4_000)).astype(np.int64)]
        length = TEXT_BYTES[0] + (h >> U64(40)).astype(np.int64) % (TEXT_BYTES[1] - TEXT_BYTES[0])
        end = self.starts[np.searchsorted(self.starts, begin + length)] - 1
        return begin.tolist(), end.tolist()

    def url(self, i: int, gen: int) -> str:
        return f"https://www.{self.sites[i % 997]}.fr/page/{i}-{gen}.html"

    def topic_id(self, s: int, t: int) -> str:
        return str((s + 1) * 1_000 + t)  # re-numbered per snapshot; aligned by query text


def write_collection(gen: Generated, home: Path) -> list[int]:
    """The three snapshots in ir-datasets-longeval's layout; returns each one's bytes of
    documents.

    `write_longeval_web` writes the skeleton (all 15 snapshot folders, metadata, queries,
    qrels, the URL table); the documents are streamed here in its format, since its writer
    keeps every id and URL of the collection in memory for the mapping.
    """
    from tcdb.collections.sources.records import QrelRecord, TopicRecord
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web

    snapshots = {}
    for s, label in enumerate(LABELS):
        topics = [TopicRecord(gen.topic_id(s, t), q) for t, q in enumerate(gen.queries)]
        qrels = [QrelRecord(gen.topic_id(s, t), str((s + 1) * ID_BASE + int(d)), int(g))
                 for t in range(N_TOPICS)
                 for d, g in zip(gen.judged[t], gen.grades[t], strict=True)]
        snapshots[label] = LongEvalSnapshot(documents=(), queries=topics, qrels=qrels)
    layout = write_longeval_web(home, snapshots)
    with sqlite3.connect(layout.url_db) as mapping:
        sizes = [_write_documents(gen, s, layout.trec_dir(label), mapping, label)
                 for s, label in enumerate(LABELS)]
    mapping.close()
    return sizes


def database_bytes(url: str) -> int:
    """The database's size on disk (every table, index and TOAST file)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        size = int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
    engine.dispose()
    return size


def _write_documents(gen: Generated, s: int, folder: Path, mapping: sqlite3.Connection,
                     label: str) -> int:
    """One snapshot's TREC files (`DOCNO` prefixed `doc`, as LongEval's) and URL rows."""
    written, date, buffer = 0, json.dumps([label]), gen.buffer
    for part, lo in enumerate(range(0, gen.n, DOCS_PER_FILE)):
        hi = min(gen.n, lo + DOCS_PER_FILE)
        with open(folder / f"part-{part:05d}.trec", "wb") as out:
            for a in range(lo, hi, 10_000):
                b = min(hi, a + 10_000)
                begin, end = gen.spans(s, a, b)
                ids = range((s + 1) * ID_BASE + a, (s + 1) * ID_BASE + b)
                chunk = b"".join(
                    b"<DOC>\n<DOCNO>doc%d</DOCNO>\n<TEXT>\n%b\n</TEXT>\n</DOC>\n"
                    % (d, buffer[x:y]) for d, x, y in zip(ids, begin, end, strict=True))
                out.write(chunk)
                written += len(chunk)
                mapping.executemany(
                    "INSERT INTO mapping VALUES (?, ?, '[]', ?)",
                    ((str(d), gen.url(i, g), date) for d, i, g in
                     zip(ids, range(a, b), gen.url_gen[s, a:b].tolist(), strict=True)))
    return written


def write_runs(gen: Generated, s: int, folder: Path, depth: int, seed: int = 0) -> list[Path]:
    """50 TREC run files of one snapshot, `depth` documents for each of the 100 topics.

    Each topic has a candidate pool (its judged documents and 2·depth random ones); a system
    ranks it by grade × its quality in this snapshot + noise and keeps the top `depth`.
    """
    rng = np.random.default_rng(seed * 10 + s)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"sys{k:02d}.run" for k in range(N_RUNS)]
    quality = gen.quality * (1 + gen.drift * s)
    files = [open(p, "w", encoding="ascii") for p in paths]  # noqa: SIM115
    try:
        for t in range(N_TOPICS):
            pool = np.unique(np.concatenate([gen.judged[t],
                                             rng.choice(gen.n, 2 * depth, replace=False)]))
            rel = np.zeros(len(pool))
            rel[np.searchsorted(pool, gen.judged[t])] = gen.grades[t]
            score = quality[:, None] * rel[None, :] + rng.standard_normal((N_RUNS, len(pool)))
            top = np.argsort(-score, axis=1)[:, :depth]
            qid, base = gen.topic_id(s, t), (s + 1) * ID_BASE
            for k, out in enumerate(files):
                docs = (pool[top[k]] + base).tolist()
                values = score[k, top[k]].tolist()
                out.write("".join(f"{qid} Q0 {d} {r} {v:.4f} sys{k:02d}\n"
                                  for r, (d, v) in enumerate(zip(docs, values, strict=True), 1)))
    finally:
        for out in files:
            out.close()
    return paths


# ------------------------------------------------------------------ steps, each in a process

def _postgres_cpu(since: float) -> dict[str, float]:
    """CPU seconds of the backends this process opened (started after `since`) and of the
    server's background writers (cumulative since they started), from /proc; and the seconds
    those backends ran and waited, runnable, for a core (`running`, `queued`:
    /proc/<pid>/schedstat) — the rest of the wall time they waited for the client or the
    disk."""
    from sqlalchemy import text

    with Database().engine().connect() as conn:
        rows = conn.execute(text(
            "SELECT pid, backend_type, backend_start >= to_timestamp(:t) FROM pg_stat_activity "
            "WHERE (datname = current_database() AND backend_type = 'client backend') "
            "OR backend_type IN ('walwriter', 'checkpointer', 'background writer')"),
            {"t": since}).all()
    out = {"backend": 0.0, "background": 0.0, "running": 0.0, "queued": 0.0}
    for pid, kind, ours in rows:
        if kind == "client backend" and not ours:
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out["backend" if kind == "client backend" else "background"] += seconds
        if kind == "client backend":  # a kernel without schedstat still counts the CPU above
            with contextlib.suppress(OSError, ValueError):
                run_ns, wait_ns, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
                out["running"] += int(run_ns) / 1e9
                out["queued"] += int(wait_ns) / 1e9
    return out


def step(name: str, arg: str) -> None:
    """Run one step in this (fresh) process; print its figures as JSON."""
    import resource

    started, wall = time.time(), time.perf_counter()
    out: dict[str, Any] = {}
    if name == "irds":
        from tcdb.collections.sources.ir_datasets_source import load_dataset

        dataset = load_dataset(f"longeval-web/{arg}")
        out["docs"] = sum(1 for _ in dataset.docs_iter())
    elif name == "ingest":
        from tcdb.collections.sources.ir_datasets_source import IrdsSource
        from tcdb.ingest import ingest_snapshot

        before = _postgres_cpu(started)["background"]
        report = ingest_snapshot(Database(), COLLECTION, arg, IrdsSource(f"longeval-web/{arg}"),
                                 date=dt.date.fromisoformat(arg + "-01"))
        server = _postgres_cpu(started)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.update(docs=report.n_documents, new_contents=report.n_new_contents,
                   client_cpu=time.process_time(), reader_cpu=kids.ru_utime + kids.ru_stime,
                   backend_cpu=server["backend"], background_cpu=server["background"] - before,
                   reader_rss_mb=children_peak_rss_mb())
    elif name == "diff":
        import tcdb.api

        out["diffs"] = []
        for a, b in zip(LABELS, LABELS[1:], strict=False):
            t0 = time.perf_counter()
            documents = tcdb.api.snapshot_diff(COLLECTION, [a, b]).documents.model_dump()
            out["diffs"].append({"seconds": time.perf_counter() - t0, **documents})
    elif name == "stats":
        import tcdb.api

        t0 = time.perf_counter()
        stats = tcdb.api.snapshot_stats(COLLECTION, list(LABELS[:2]), rankings=False)
        out["stats_seconds"] = time.perf_counter() - t0
        out["present_in_all"] = stats.present_in_all
    elif name == "runs":
        from tcdb.api import run_import

        reports = run_import(COLLECTION, Path(arg).name, sorted(Path(arg).glob("*.run"))).runs
        out["entries"] = sum(r.n_entries for r in reports)
        out["unresolved"] = sum(r.n_unresolved for r in reports)
    elif name == "evaluate":
        from tcdb.scoring.evaluate import evaluate

        report = evaluate(Database(), COLLECTION, arg, "original", MEASURES)
        out.update(scores=report.n_scores, pairs=report.n_computed)
    elif name == "persistence":
        t0 = time.perf_counter()
        import tcdb.api

        times = []
        for _ in range(2):
            report = tcdb.api.persistence(COLLECTION, snapshots=list(LABELS), pivot=PIVOT,
                                          measures=MEASURES)
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
        out.update(cold=times[0], warm=times[1],
                   systems=len(report.measures["nDCG@10"].systems))
    out.update(seconds=time.perf_counter() - wall, rss_mb=peak_rss_mb())
    print(json.dumps(out))


# ------------------------------------------------------------------------------ the driver

def one_scale(n: int, depth: int, keep: Path | None) -> dict[str, Any]:
    """Generate, then run every step on a fresh PostgreSQL database; print as it goes."""
    from tcdb.catalog.collections import add_collection

    folder = keep / f"n{n}" if keep else Path(tempfile.mkdtemp(prefix="tcdb-bench-long-"))
    home, runs = folder / "irds", folder / "runs"
    results: dict[str, Any] = {"n": n, "steps": {}}
    try:
        t0 = time.perf_counter()
        gen = Generated(n)
        sizes = write_collection(gen, home)
        size = sum(sizes)
        for s, label in enumerate(LABELS):
            write_runs(gen, s, runs / label, depth)
        os.sync()  # the generator's dirty pages must not compete with the steps' writes
        print(f"\nN = {n:,} documents per snapshot × {len(LABELS)} ({size / 3 / n / 1e3:.1f} KB "
              f"each, {size / 1e9:.1f} GB), {N_RUNS} runs × {N_TOPICS} topics × depth {depth} "
              f"per snapshot; generated in {time.perf_counter() - t0:.0f} s")
        steps = results["steps"]
        env = {"IR_DATASETS_HOME": str(home)}
        _, steps["irds"] = run_step([__file__, "--step", "irds", LABELS[0]], env)
        _show("ir_datasets-longeval docs_iter " + LABELS[0], steps["irds"],
              f"{steps['irds']['docs'] / steps['irds']['seconds']:>9,.0f} docs/s (baseline)")
        with temporary_database("postgres") as url:
            env["TCDB_DATABASE_URL"] = url
            os.environ["TCDB_DATABASE_URL"] = url
            add_collection(Database(),
                           COLLECTION, "url", "text", id_fallback=True, grade_min=0, grade_max=2)
            for s, label in enumerate(LABELS):
                disk = database_bytes(url)
                r = steps[f"ingest {label}"] = run_step([__file__, "--step", "ingest", label],
                                                        env)[1]
                r["disk_bytes"], r["text_bytes"] = database_bytes(url) - disk, sizes[s]
                docs = r["docs"]
                _show(f"ingest {label}", r, f"{docs / r['seconds']:>9,.0f} docs/s",
                      f"+ reader {r['reader_rss_mb']:.0f} MB; CPU µs/doc: client "
                      f"{1e6 * r['client_cpu'] / docs:.0f} + reader "
                      f"{1e6 * r['reader_cpu'] / docs:.0f}, PostgreSQL backend "
                      f"{1e6 * r['backend_cpu'] / docs:.0f} + WAL/checkpoint/bgwriter "
                      f"{1e6 * r['background_cpu'] / docs:.0f}")
                print(f"  {'':<34}disk +{r['disk_bytes'] / 1e9:.2f} GB for "
                      f"{r['text_bytes'] / 1e9:.2f} GB of document files "
                      f"({r['disk_bytes'] / r['text_bytes']:.2f}×; "
                      f"{r['new_contents']:,} new texts of {docs:,})")
            r = steps["diff"] = run_step([__file__, "--step", "diff", "-"], env)[1]
            for s, d in enumerate(r["diffs"]):
                expected = gen.expected_drift(s)
                found = {k: d[k] for k in expected}
                check = "as generated" if found == expected else f"EXPECTED {expected}"
                print(f"  {'diff ' + LABELS[s] + ' → ' + LABELS[s + 1]:<34}{d['seconds']:>7.2f} s"
                      f"   {found} {check}")
            _show("diff process (both calls)", r)
            r = steps["stats"] = run_step([__file__, "--step", "stats", "-"], env)[1]
            _show(f"snapshot stats {LABELS[0]} {LABELS[1]}", r,
                  f"stats call {r['stats_seconds']:.2f} s")
            for label in LABELS:
                r = steps[f"runs {label}"] = run_step(
                    [__file__, "--step", "runs", str(runs / label)], env)[1]
                _show(f"import runs {label}", r, f"{r['entries'] / r['seconds']:>9,.0f} rows/s",
                      f"{r['entries']:,} entries, {r['unresolved']:,} unresolved")
            for label in LABELS:
                r = steps[f"evaluate {label}"] = run_step(
                    [__file__, "--step", "evaluate", label], env)[1]
                _show(f"evaluate {label}", r, f"{r['scores']:>9,} scores")
            r = steps["persistence"] = run_step([__file__, "--step", "persistence", "-"], env)[1]
            _show("persistence report", r, f"cold {r['cold']:.2f} s, warm {r['warm']:.2f} s",
                  f"{r['systems']} systems × {len(MEASURES)} measures")
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    return results


def _show(what: str, r: dict[str, Any], rate: str = "", note: str = "") -> None:
    print(f"  {what:<34}{r['seconds']:>7.1f} s {rate:<28} peak RSS {r['rss_mb']:>5.0f} MB "
          f"{note}".rstrip())


def goals(results: list[dict[str, Any]]) -> None:
    """Each goal as a ratio (≥ 1 met) at every N; RSS at every step, and its growth with N."""
    print("\ngoals (ratio ≥ 1.00 is met):")
    for res in results:
        steps, n = res["steps"], res["n"]
        base = steps["irds"]["docs"] / steps["irds"]["seconds"]
        rates = [steps[f"ingest {x}"]["docs"] / steps[f"ingest {x}"]["seconds"] for x in LABELS]
        # tcdb's steps only: the baseline's memory is ir_datasets', not tcdb's
        rss = {k: v["rss_mb"] + v.get("reader_rss_mb", 0) for k, v in steps.items()
               if k != "irds"}
        worst = max(rss, key=lambda k: rss[k])
        diff = max(d["seconds"] for d in steps["diff"]["diffs"])
        print(f"  N = {n:,}: ingest ≥ 20,000 docs/s {min(rates) / 20_000:.2f} (slowest "
              f"snapshot {min(rates):,.0f}); ≥ 3× ir_datasets {min(rates) / base / 3:.2f} "
              f"({min(rates) / base:.1f}×); RSS < 1 GB {1024 / rss[worst]:.2f} (largest "
              f"{rss[worst]:.0f} MB, {worst}); diff ≤ 2 s {2 / diff:.2f} ({diff:.2f} s); "
              f"stats ≤ 2 s {2 / steps['stats']['stats_seconds']:.2f} "
              f"({steps['stats']['stats_seconds']:.2f} s); "
              f"persistence warm ≤ 2 s {2 / steps['persistence']['warm']:.2f} "
              f"({steps['persistence']['warm']:.2f} s)")
    if len(results) > 1:
        first, last = results[0], results[-1]
        k = last["n"] / first["n"]
        print(f"  peak RSS at N = {last['n']:,} / at N = {first['n']:,} ({k:g}× the documents):")
        for name, r in first["steps"].items():
            a = r["rss_mb"] + r.get("reader_rss_mb", 0)
            b = last["steps"][name]["rss_mb"] + last["steps"][name].get("reader_rss_mb", 0)
            print(f"    {name:<22} {a:>6.0f} → {b:>6.0f} MB  ({b / a:.2f}×)")


def main() -> None:
    parser = argparse.ArgumentParser(description="tcdb LongEval-sized longitudinal benchmark")
    parser.add_argument("--docs", type=int, default=1_500_000, help="N, documents per snapshot")
    parser.add_argument("--scale", type=int, nargs="+", default=[1],
                        help="run at these multiples of N (e.g. 1 2)")
    parser.add_argument("--depth", type=int, default=1000, choices=[100, 1000])
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this folder")
    parser.add_argument("--step", nargs=2, metavar=("NAME", "ARG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        step(*args.step)
        return
    results = [one_scale(k * args.docs, args.depth, args.keep) for k in args.scale]
    goals(results)


if __name__ == "__main__":
    main()
