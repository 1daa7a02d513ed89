"""A command killed after its commit but before it exited looks failed to whoever ran it, who
runs it again: that must complete and change nothing. The kill suite found one that did not —
`pool import-judgments … --expand BASE --expanded-name NAME` refused its own expanded set
("already has a qrels set") — so here, deterministically: the same import twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.reliability.rows import database_state

TOPICS = {"q1": "first", "q2": "second"}


@pytest.fixture
def pool(db: str, cli, tmp_path: Path) -> str:
    """Pool `p` (depth 5, minus the original judgments) over two runs of snapshot c/s1."""
    docs = write_documents(tmp_path / "docs.trec", {f"d{i}": f"text {i}" for i in range(20)})
    topics = write_topics(tmp_path / "topics.tsv", TOPICS)
    qrels = write_qrels_file(tmp_path / "qrels.txt", [(t, "d0", 1) for t in TOPICS])
    runs = [write_run_file(tmp_path / "runs", tag, [(t, f"d{(i + k) % 20}", 20.0 - i)
                                                     for t in TOPICS for i in range(10)])
            for k, tag in enumerate(["r1", "r2"])]
    for command in (["collection", "add", "c", "--grades", "0:2"],
                    ["snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics,
                     "--qrels", qrels],
                    ["run", "import", "c", "s1", *runs],
                    ["pool", "build", "c", "s1", "p", "--depth", "5", "--all-runs",
                     "--exclude-judged", "original"]):
        code, _, err = cli(*command)
        assert code == 0, err
    return db


def test_the_same_judgment_import_with_expand_again_completes_and_changes_nothing(
        pool: str, cli, tmp_path: Path) -> None:
    judged = write_qrels_file(tmp_path / "judged.txt", [("q1", "d1", 2), ("q2", "d2", 0)])
    command = ["pool", "import-judgments", "p", judged, "--expand", "original",
               "--expanded-name", "expanded", "--json"]
    code, out, err = cli(*command)
    assert code == 0, err
    assert json.loads(out)["expanded"]["status"] == "created"
    after = database_state(pool)
    code, out, err = cli(*command)
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_new"], report["n_repeated"], report["expanded"]["status"],
            report["expanded"]["n_judgments"]) == (0, 2, "unchanged", 4)
    assert database_state(pool) == after
    code, out, _ = cli(*command[:-1])
    assert code == 0 and "(already stored: unchanged)" in out


def test_a_later_batch_still_cannot_overwrite_an_expanded_set(pool: str, cli,
                                                              tmp_path: Path) -> None:
    """Sets are immutable: a name taken by another union stays a conflict."""
    first = write_qrels_file(tmp_path / "first.txt", [("q1", "d1", 2)])
    later = write_qrels_file(tmp_path / "later.txt", [("q2", "d2", 1)])
    expand = ["--expand", "original", "--expanded-name", "expanded"]
    assert cli("pool", "import-judgments", "p", first, *expand)[0] == 0
    before = database_state(pool)
    code, _, err = cli("pool", "import-judgments", "p", later, *expand)
    assert code == 1
    assert err == ("error: snapshot 's1' already has a qrels set 'expanded'; qrels sets are "
                   "immutable: choose another name\n")
    assert database_state(pool) == before
