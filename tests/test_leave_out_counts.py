"""Leave-out's figures of a count follow `trec_eval -c` like every other report: a judged topic a
run did not answer adds its relevant documents to NumRel (and 1 to NumQ), under the full qrels
and under each group's reduced qrels. Expected values counted by hand from the files below."""

from __future__ import annotations

import json
from pathlib import Path


def _runs(data: dict) -> dict[str, dict]:
    return {run["run"]: run for group in data["measures"]["NumRel"]["groups"]
            for run in group["runs"]}


def test_leave_out_numrel_counts_unanswered_topics(cli, db: str, tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(f'{{"_id": "d{i}", "text": "text {i}"}}\n' for i in range(1, 9)))
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tone\nq2\ttwo\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 0\nq1 0 d5 1\n"
                     "q2 0 d4 1\nq2 0 d6 1\nq2 0 d7 0\n")
    a1 = tmp_path / "a1.run"  # group A: q1 only
    a1.write_text("q1 Q0 d1 1 3 a1\nq1 Q0 d3 2 2 a1\nq1 Q0 d2 3 1 a1\n")
    b1 = tmp_path / "b1.run"  # group B: both topics
    b1.write_text("q1 Q0 d5 1 2 b1\nq1 Q0 d1 2 1 b1\n"
                  "q2 Q0 d4 1 3 b1\nq2 Q0 d7 2 2 b1\nq2 Q0 d6 3 1 b1\n")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics,
               "--qrels", qrels)[0] == 0
    for run, group in ((a1, "A"), (b1, "B")):
        code, _, err = cli("run", "import", "c", "s1", run, "--contributed", "--group", group)
        assert code == 0, err
    code, out, err = cli("report", "leave-out", "c", "s1", "--depth", "10", "--measure",
                         "NumRel", "--json")
    assert code == 0, err
    runs = _runs(json.loads(out))
    # relevant in the qrels: q1 d1 d2 d5, q2 d4 d6 = 5 for every run under trec_eval -c
    assert runs["a1"]["score_full"] == 5 and runs["b1"]["score_full"] == 5
    # without A's unique relevant d2: q1 d1 d5 + q2 d4 d6 = 4 (a1 answers q1 only)
    assert runs["a1"]["score_reduced"] == 4
    # without B's unique relevant d5 (q1) and d4 d6 (q2): q1 d1 d2 = 2
    assert runs["b1"]["score_reduced"] == 2
