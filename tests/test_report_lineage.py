"""Lineage on every report: each registered operation whose command starts with `report`, and
`snapshot diff|stats|drift`, `pool simulate`, `literature report`, returns a lineage in its JSON
naming the tcdb and ir_measures versions and the database's schema revision (from `alembic
heads`, not from tcdb), and the runs and qrels sets it read where it reads them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tcdb import api
from tcdb.operations import Database
from tcdb.operations.registry import all_operations
from tests.builders import COLLECTION, Seeded

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ALSO = {"snapshot diff", "snapshot stats", "snapshot drift", "pool simulate",
        "literature report"}
LITERATURE = ("publication,year,venue,model,category,role,metric,value,cross_validated,notes\n"
              "Alpha 2019,2019,SIGIR,BM25,probabilistic,baseline,AP,0.20,no,\n"
              "Beta 2021,2021,ECIR,monoT5,neural,best,AP,0.30,no,\n")


@pytest.fixture(scope="module")
def seeded(seeded_url: tuple[str, Seeded], tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Seeded]:
    """The seeded collection made the default, with two reported results, and the
    source-bias corpus (`cocktail/s1`, documents labelled human and llm)."""
    from tests.source_bias_corpus import ingest_twins

    url, seed = seeded_url
    os.environ["TCDB_DATABASE_URL"] = url
    path = tmp_path_factory.mktemp("literature") / "papers.csv"
    path.write_text(LITERATURE)
    api.literature_import(path, COLLECTION)
    ingest_twins(tmp_path_factory.mktemp("twins"))
    first = seed.labels[0]
    for i, tag in enumerate(r.run for r in api.runs(COLLECTION, first).runs):
        api.run_update(COLLECTION, first, [tag], submitted=f"2024-01-{i + 1:02d}")
    yield seed
    os.environ.pop("TCDB_DATABASE_URL", None)


def _requests(seed: Seeded) -> dict[str, dict[str, Any]]:
    first, last = seed.labels[0], seed.labels[-1]
    both = [first, last]
    return {
        "reusability": {"collection": COLLECTION, "snapshot": last, "vs": "expanded"},
        "leave_out": {"collection": COLLECTION, "snapshot": last, "depth": 5},
        "assessor_agreement": {"pool": seed.pool, "qrels": "original", "vs": "expanded"},
        "judge_agreement": {"collection": COLLECTION, "snapshot": last, "vs": "expanded",
                            "measure": "AP", "bootstrap": 10},
        "pool_simulation": {"collection": COLLECTION, "snapshot": last, "budgets": [20],
                            "strategies": ["depth"], "leave_out": False},
        "source_bias": {"collection": "cocktail", "snapshot": "s1"},
        "documents_by_source": {"collection": COLLECTION},
        "persistence": {"collection": COLLECTION, "snapshots": both, "pivot": "bm25"},
        "per_topic_deltas": {"collection": COLLECTION, "snapshots": both, "pivot": "bm25"},
        "ranking_agreement": {"collection": COLLECTION, "system": "bm25", "snapshots": both},
        "ranking_across_snapshots": {"collection": COLLECTION, "snapshots": both,
                                     "measures": ["AP"]},
        "diff_runs": {"collection": COLLECTION, "snapshot": first, "run_a": "bm25",
                      "run_b": seed.systems[1], "measure": "AP"},
        "topic_deltas": {"collection": COLLECTION, "system": "bm25", "snapshots": both,
                         "measure": "AP"},
        "snapshot_diff": {"collection": COLLECTION, "snapshots": both},
        "drift": {"collection": COLLECTION},
        "snapshot_stats": {"collection": COLLECTION},
        "compare": {"collection": COLLECTION, "snapshot": first, "measure": "AP",
                    "permutations": 0},
        "leaderboard": {"collection": COLLECTION, "snapshot": first, "measure": "AP",
                        "permutations": 10},
        "subset_ci": {"collection": COLLECTION, "snapshot": first, "topics": "some",
                      "bootstrap": 10},
        "literature_report": {"collection": COLLECTION, "metric": "AP",
                              "reference_run": f"{first}/bm25"},
    }


# what each report reads besides the collection
READS_QRELS = {"source_bias", "reusability", "leave_out", "assessor_agreement", "pool_simulation",
               "judge_agreement",
               "persistence", "per_topic_deltas", "topic_deltas", "snapshot_diff", "drift",
               "snapshot_stats", "compare", "leaderboard", "subset_ci", "literature_report",
               "ranking_across_snapshots", "diff_runs"}
READS_RUNS = READS_QRELS - {"snapshot_diff", "drift"} | {"ranking_agreement"}


def _alembic_head() -> str:
    out = subprocess.run([sys.executable, "-m", "alembic", "heads"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return out.split()[0]


def test_every_report_carries_lineage(seeded: Seeded) -> None:
    seed = seeded
    api.topic_set_create("some", COLLECTION, seed.labels[0],
                         topic_ids=seed.topics[seed.labels[0]][:3])
    requests = _requests(seed)
    reports = {name: op for name, op in all_operations().items()
               if op.command[0] == "report" or " ".join(op.command) in ALSO}
    assert set(reports) == set(requests), "a report without a lineage check"
    head = _alembic_head()
    for name, op in reports.items():
        result = op(op.request(**requests[name]), Database())
        lineage = result.to_data()["lineage"]
        assert lineage, name
        assert lineage["collection"] == requests[name]["collection"] if "collection" in \
            requests[name] else COLLECTION, name
        assert lineage["versions"]["tcdb"] and lineage["versions"]["ir_measures"], name
        assert lineage["schema_revision"] == head, name
        if name in READS_QRELS:
            assert lineage["qrels"] and all(q["checksum"] for q in lineage["qrels"]), name
        if name in READS_RUNS:
            assert lineage["runs"], name
        if name == "literature_report":
            assert {"Alpha 2019", "Beta 2021"} <= set(lineage["publications"])
            assert [r["run"] for r in lineage["runs"]] == ["bm25"]
