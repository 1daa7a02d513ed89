"""Source-bias report (Cocktail): 100 runs × 50 topics × 1,000 documents, half LLM twins.

Builds a synthetic mixed corpus — human documents, each with an LLM twin (`twin_of`) — judged on
the human originals only, and runs that rank to depth 1,000 with a run-specific preference for
LLM text (some prefer the human originals). Then times `tcdb report source-bias`:

* in memory (no stored sets: every run read and scored with ir_measures three times),
* with `--save` the first time (sets stored, every run evaluated and its scores stored),
* warm: with `--save` again, reading the stored scores — the goal (issue 20): ≤ 2 s on
  PostgreSQL;

and the Cocktail-sized case: `--datasets` collections × `--models` runs each, reported across
collections (Cocktail's Table 3), warm.

    python bench/source_bias.py [--runs 100] [--topics 50] [--depth 1000] [--docs 20000]
                                [--datasets 20] [--models 10] [--backends postgres sqlite]
                                [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import median, peak_rss_mb, temporary_database, timer  # noqa: E402

from tcdb.operations import Database

MEASURES = ["nDCG@1", "nDCG@10"]
GOAL_SECONDS = 2.0


def make_files(folder: Path, n_runs: int, n_topics: int, depth: int, n_docs: int,
               seed: int = 20) -> tuple[Path, Path, Path, list[Path]]:
    """corpus.jsonl (n_docs / 2 human documents and their LLM twins), queries, qrels judged on
    the originals, and run files; run r's preference for LLM text is planted."""
    from tcdb.collections.qrels.formats import write_qrels
    from tcdb.collections.runs.trec import write_run
    from tcdb.collections.sources.records import QrelRecord

    rng = random.Random(seed)
    n_human = n_docs // 2
    corpus = folder / "corpus.jsonl"
    with corpus.open("w") as out:
        for i in range(n_human):
            out.write(json.dumps({"_id": f"h{i}", "text": f"human text {i}",
                                  "source": "human"}) + "\n")
            # every tenth rewrite is refused: the same text as its original
            text = f"human text {i}" if i % 10 == 0 else f"generated text {i}"
            out.write(json.dumps({"_id": f"l{i}", "text": text, "source": "llm",
                                  "twin_of": f"h{i}"}) + "\n")
    queries = folder / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": f"q{t}", "text": f"query {t}"}) + "\n"
                               for t in range(n_topics)))
    relevant = {t: rng.sample(range(n_human), 30) for t in range(n_topics)}
    qrels = folder / "qrels.txt"
    write_qrels(qrels, [QrelRecord(f"q{t}", f"h{d}", 1 + (d % 2)) for t in range(n_topics)
                        for d in sorted(relevant[t])])
    runs = []
    for r in range(n_runs):
        skill, prefer_llm = rng.uniform(0.1, 0.7), rng.uniform(-0.4, 0.6)
        rows = []
        for t in range(n_topics):
            scored: dict[str, float] = {}
            for d in relevant[t]:
                if rng.random() < skill:
                    base = rng.uniform(5, 10)
                    scored[f"h{d}"] = base
                    scored[f"l{d}"] = base + prefer_llm * rng.uniform(0, 2)
            while len(scored) < depth:
                d = rng.randrange(n_human)
                scored.setdefault(f"{'hl'[rng.random() < 0.5]}{d}", rng.uniform(0, 8))
            ranked = sorted(scored.items(), key=lambda item: -item[1])[:depth]
            rows += [(f"q{t}", doc, rank, round(score, 6))
                     for rank, (doc, score) in enumerate(ranked, start=1)]
        path = folder / f"run{r:03d}.txt"
        write_run(path, rows, f"run{r:03d}")
        runs.append(path)
    return corpus, queries, qrels, runs


def load(collection: str, files: tuple[Path, Path, Path, list[Path]]) -> None:
    from tcdb.api import run_import
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    corpus, queries, qrels, runs = files
    add_collection(Database(), collection)
    ingest_snapshot(Database(),
                    collection, "s1", LocalSource(corpus, queries, qrels), with_text=False)
    run_import(collection, "s1", runs)


def bench_backend(backend: str, files: tuple[Path, Path, Path, list[Path]],
                  cocktail: list[tuple[Path, Path, Path, list[Path]]], repeat: int
                  ) -> dict[str, float]:
    from tcdb.operations import get_operation

    def source_bias_report(collection: str, snapshot: str, measures: list[str],
                           save: str | None = None) -> dict:
        return get_operation("source_bias").run(
            Database(),
            collection=collection, snapshot=snapshot, measures=measures, save=save).to_data()

    with temporary_database(backend) as url:
        os.environ["TCDB_DATABASE_URL"] = url
        with timer() as setup:
            load("bench", files)
        with timer() as memory:
            report = source_bias_report("bench", "s1", MEASURES)
        with timer() as first:
            source_bias_report("bench", "s1", MEASURES, save="sb")
        warm = []
        for _ in range(repeat):
            with timer() as t:
                again = source_bias_report("bench", "s1", MEASURES, save="sb")
            warm.append(t[0])
        assert again["measures"] == report["measures"], "stored scores differ from in-memory"
        result = report["measures"]["nDCG@1"]
        print(f"  {backend:<9} set-up {setup[0]:6.1f}s · nDCG@1 mean Relative Δ "
              f"{result['average']['relative_delta']:+.1f} % · Pearson r "
              f"{result['correlation']['r']:+.2f} over {result['average']['n_runs']} runs")
        print(f"  {backend:<9} in memory {memory[0]:.2f}s · first --save {first[0]:.2f}s · "
              f"warm {median(warm)}s")
        cocktail_warm = float("nan")
        if cocktail:
            names = [f"dataset{i:02d}" for i in range(len(cocktail))]
            with timer() as loaded:
                for name, data in zip(names, cocktail, strict=True):
                    load(name, data)
                    source_bias_report(name, "s1", MEASURES, save="sb")
            times = []
            for _ in range(repeat):
                with timer() as t:
                    across = get_operation("source_bias").run(
                        Database(),
                        collection=names[0], snapshot="s1", measures=MEASURES, save="sb",
                        also=[f"{n}/s1" for n in names[1:]]).to_data()["across"]
                times.append(t[0])
            cocktail_warm = min(times)
            print(f"  {backend:<9} Cocktail-sized: {len(names)} datasets loaded and saved in "
                  f"{loaded[0]:.1f}s · across-collection report warm {median(times)}s · "
                  f"nDCG@1 mean Relative Δ {across['nDCG@1']['relative_delta']:+.1f} %")
    return {"warm": min(warm), "memory": memory[0], "cocktail": cocktail_warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--datasets", type=int, default=20)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", nargs="+", default=["postgres"])
    args = parser.parse_args()
    n_rows = args.runs * args.topics * args.depth
    print(f"{args.runs} runs × {args.topics} topics × {args.depth} documents = {n_rows:,} run "
          f"entries; {args.docs:,} documents, half LLM twins; measures {', '.join(MEASURES)}; "
          f"Cocktail-sized: {args.datasets} datasets × {args.models} runs; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="tcdb-bench-bias-") as tmp:
        with timer() as made:
            (Path(tmp) / "main").mkdir()
            files = make_files(Path(tmp) / "main", args.runs, args.topics, args.depth,
                               args.docs)
            cocktail = []
            for i in range(args.datasets):
                folder = Path(tmp) / f"d{i}"
                folder.mkdir()
                cocktail.append(make_files(folder, args.models, args.topics, 100,
                                           args.docs // 4, seed=100 + i))
        print(f"  files written in {made[0]:.1f}s")
        results = {b: bench_backend(b, files, cocktail, args.repeat) for b in args.backends}
    print()
    for backend, result in results.items():
        print(f"source-bias report on {backend}, warm: {result['warm']:.2f}s = "
              f"{result['warm'] / GOAL_SECONDS:.2f} × the goal (≤ {GOAL_SECONDS:.0f} s); in "
              f"memory {result['memory']:.2f}s = {result['memory'] / GOAL_SECONDS:.2f} × the "
              f"goal; Cocktail-sized across {args.datasets} datasets warm "
              f"{result['cocktail']:.2f}s")
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
