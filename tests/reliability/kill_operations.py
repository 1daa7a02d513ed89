"""What the kill suite kills: six commands, the files they read, and the database each starts
from (a *stage*: collections → snapshot → runs → pool, built once per backend and copied for
every trial).

Sizes are chosen so that a clean run takes one to two seconds on a loaded two-core machine,
over half of it writing: tens of thousands of small documents, ten runs of 50 × 500.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tcdb.operations import Database
from tests.builders import write_qrels_file, write_topics
from tests.reliability.kill_harness import Backend

N_BASE_DOCS = 2_000
N_BIG_DOCS = 30_000
N_TOPICS = 50
N_RUNS, RUN_DEPTH = 10, 500
TOPICS = {f"q{t}": f"query {t} words" for t in range(1, N_TOPICS + 1)}
QRELS = [(t, f"d{i}", i % 3) for t in TOPICS for i in range(0, 400, 10)]


@dataclass(frozen=True)
class Inputs:
    """The files, written once per test module."""

    folder: Path
    base_docs: Path
    big_docs: Path
    topics: Path
    qrels: Path
    runs: list[Path]
    irds_home: Path


def _write_trec(path: Path, n: int, prefix: str) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\n{prefix} {i} about topic {i % 50} "
                      f"and words {i * 7} {i * 13}\n</TEXT>\n</DOC>\n")
    return path


def _write_runs(folder: Path) -> list[Path]:
    """Ten runs, each topic ranking 500 of the base documents (distinct scores)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(19)
    paths = []
    for r in range(N_RUNS):
        lines = []
        for topic in TOPICS:
            docs = rng.permutation(N_BASE_DOCS)[:RUN_DEPTH]
            noise = rng.random(RUN_DEPTH)
            lines += [f"{topic} Q0 d{d} {k + 1} {RUN_DEPTH - k + noise[k]:.6f} r{r:02d}\n"
                      for k, d in enumerate(docs.tolist())]
        path = folder / f"r{r:02d}.run"
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


def _write_irds(home: Path) -> Path:
    from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web

    docs = (DocumentRecord(str(i + 1), f"page {i} about topic {i % 50} words {i * 7}",
                           url=f"https://example.org/{i}") for i in range(N_BIG_DOCS))
    queries = [TopicRecord(t, q) for t, q in TOPICS.items()]
    qrels = [QrelRecord(t, str(i + 1), i % 3) for t in TOPICS for i in range(0, 400, 10)]
    write_longeval_web(home, {"2022-06": LongEvalSnapshot(docs, queries, qrels)})
    return home


def write_inputs(folder: Path) -> Inputs:
    return Inputs(folder, _write_trec(folder / "base.trec", N_BASE_DOCS, "document"),
                  _write_trec(folder / "big.trec", N_BIG_DOCS, "text"),
                  write_topics(folder / "topics.tsv", TOPICS),
                  write_qrels_file(folder / "qrels.txt", QRELS), _write_runs(folder / "runs"),
                  _write_irds(folder / "irds"))


@contextmanager
def default_database(url: str) -> Iterator[None]:
    """Make `url` the database of in-process tcdb calls for a while."""
    from tcdb.storage.db import dispose_engine

    before = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = url
    try:
        yield
    finally:
        if before is None:
            del os.environ["TCDB_DATABASE_URL"]
        else:
            os.environ["TCDB_DATABASE_URL"] = before
        dispose_engine(url)


def _collections(inputs: Inputs) -> None:
    from tcdb.catalog.collections import add_collection

    add_collection(Database(), "c", grade_min=0, grade_max=2)
    add_collection(Database(), "web", "url", id_fallback=True, grade_min=0, grade_max=2)


def _snapshot(inputs: Inputs) -> None:
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    ingest_snapshot(Database(),
                    "c", "base", LocalSource(inputs.base_docs, inputs.topics, inputs.qrels))


def _runs(inputs: Inputs) -> None:
    from tcdb.api import run_import

    run_import("c", "base", inputs.runs)


def _pool(inputs: Inputs) -> None:
    from tcdb.api import pool_build

    pool_build("c", "base", "judge", depth=100, all_runs=True)


STAGES: dict[str, tuple[str | None, Callable[[Inputs], None]]] = {
    "collections": (None, _collections), "snapshot": ("collections", _snapshot),
    "runs": ("snapshot", _runs), "pool": ("runs", _pool),
}


@dataclass
class Stages:
    """The saved databases of one backend, built on first use, each from the one before."""

    backend: Backend
    inputs: Inputs
    saved: dict[str, str] = field(default_factory=dict)

    def get(self, stage: str) -> str:
        if stage not in self.saved:
            before, build = STAGES[stage]
            url = self.backend.restore(self.get(before)) if before else self.backend.new()
            with default_database(url):
                build(self.inputs)
            self.saved[stage] = self.backend.save(url)
        return self.saved[stage]


def judged_file(inputs: Inputs, url: str) -> Path:
    """An assessor's answer to pool `judge`: every pooled document graded (same on both
    backends: the pool is the same)."""
    from sqlalchemy import text

    from tcdb.storage.db import get_engine

    path = inputs.folder / "judged.txt"
    if path.exists():
        return path
    with get_engine(url).connect() as conn:
        rows = conn.execute(text(
            "SELECT st.external_id, sd.external_id FROM pool_entry pe JOIN pool p ON p.id = "
            "pe.pool_id JOIN snapshot_topic st ON st.snapshot_id = p.snapshot_id AND "
            "st.topic_id = pe.topic_id JOIN snapshot_document sd ON sd.snapshot_id = "
            "p.snapshot_id AND sd.document_id = pe.document_id WHERE p.name = 'judge' "
            "ORDER BY 1, 2")).all()
    write_qrels_file(path, [(t, d, len(d) % 3) for t, d in rows])
    return path


@dataclass(frozen=True)
class Operation:
    """A command to kill, and the stage its database starts from."""

    name: str
    stage: str
    args: Callable[[Inputs, str], list[str]]  # (inputs, a database of its stage) → arguments
    irds: bool = False  # needs IR_DATASETS_HOME

    def env(self, inputs: Inputs) -> dict[str, str]:
        return {"IR_DATASETS_HOME": str(inputs.irds_home)} if self.irds else {}


OPERATIONS = [
    Operation("ingest local", "collections", lambda i, _: [
        "snapshot", "ingest", "c", "big", "--docs", str(i.big_docs), "--topics", str(i.topics),
        "--qrels", str(i.qrels), "--json"]),
    Operation("ingest --irds", "collections", lambda i, _: [
        "snapshot", "ingest", "web", "2022-06", "--irds", "longeval-web/2022-06", "--json"],
        irds=True),
    Operation("run import", "snapshot", lambda i, _: [
        "run", "import", "c", "base", *map(str, i.runs), "--json"]),
    Operation("evaluate", "runs", lambda i, _: [
        "evaluate", "c", "base", "--qrels", "original", "--measure", "AP", "--measure",
        "nDCG@10", "--json"]),
    Operation("pool build", "runs", lambda i, _: [
        "pool", "build", "c", "base", "p500", "--depth", "500", "--all-runs",
        "--exclude-judged", "original", "--json"]),
    Operation("judgment import", "pool", lambda i, url: [
        "pool", "import-judgments", "judge", str(judged_file(i, url)), "--format", "trec",
        "--assessor", "A1", "--expand", "original", "--expanded-name", "expanded", "--json"]),
]
