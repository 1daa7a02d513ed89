"""The Judge agreement page (issue 44, Build 5) through `streamlit.testing.v1.AppTest`, on
SQLite and PostgreSQL: the confusion heatmap's cells are the count of the two qrels files made
with the `csv` module, κ per topic equals `sklearn.metrics.cohen_kappa_score`, the ranking
scatter's points are the runs' means under each set as the report gives them, and an empty
database says how to fill it."""

from __future__ import annotations

import csv
import random
from collections import defaultdict
from pathlib import Path

import pytest

from tests.builders import build_snapshot, write_qrels_file, write_run_file
from tests.dashboard_pages import chart_with, clear_cache, open_page, table_with

N_TOPICS = 6
N_RUNS = 8


@pytest.fixture
def judged(db: str, tmp_path: Path) -> dict[str, Path]:
    """Snapshot `rag/s1` judged by `nist` and by `llm` (grades 0–4), eight runs evaluated by
    nDCG@10 under both."""
    from tcdb.api import qrels_import, run_import
    from tcdb.operations import Database
    from tcdb.scoring.evaluate import evaluate

    rng = random.Random(4)
    docs = {f"d{i:02d}": f"text {i}" for i in range(30)}
    topics = {str(t): f"query {t}" for t in range(1, N_TOPICS + 1)}
    nist, llm = [], []
    for t in topics:
        for d in rng.sample(sorted(docs), 20):
            grade = rng.choice([0, 0, 1, 2, 3, 4])
            nist.append((t, d, grade))
            llm.append((t, d, min(4, max(0, grade + rng.choice([0, 0, 1, -1, 2])))))
    paths = {"nist": write_qrels_file(tmp_path / "nist.txt", nist),
             "llm": write_qrels_file(tmp_path / "llm.txt", llm)}
    build_snapshot(tmp_path, "rag", "s1", docs, topics)
    qrels_import("rag", "s1", "nist", paths["nist"])
    qrels_import("rag", "s1", "llm", paths["llm"])
    files = [write_run_file(tmp_path / "runs", f"run{r}", [
        (t, d, round(rng.random(), 6)) for t in topics for d in rng.sample(sorted(docs), 15)])
        for r in range(N_RUNS)]
    run_import("rag", "s1", files)
    for name in ("nist", "llm"):
        evaluate(Database(), "rag", "s1", name, ["nDCG@10"])
    clear_cache()
    return paths


def _grades(path: Path) -> dict[tuple[str, str], int]:
    with path.open(newline="") as handle:
        return {(row[0], row[2]): int(row[3]) for row in csv.reader(handle, delimiter=" ")}


def test_page_shows_what_the_files_and_the_report_say(judged: dict[str, Path]) -> None:
    from sklearn.metrics import cohen_kappa_score

    from tcdb import api

    at = open_page("judges", collection="rag", snapshot="s1", qrels="nist", vs="llm",
                   measure="nDCG@10", k="5")
    assert at.title[0].value == "Judge agreement"
    nist, llm = _grades(judged["nist"]), _grades(judged["llm"])
    both = sorted(set(nist) & set(llm))
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for key in both:
        counts[str(nist[key]), str(llm[key])] += 1
    cells = chart_with(at, "grade_a", "grade_b", "pairs")
    assert {(r.grade_a, r.grade_b): r.pairs for r in cells.itertuples()} == {
        (str(a), str(b)): counts[str(a), str(b)] for a in range(5) for b in range(5)}
    a = [nist[key] for key in both]
    b = [llm[key] for key in both]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["κ quadratic"] == f"{cohen_kappa_score(a, b, weights='quadratic'):.3f}"
    assert metrics["Pairs judged by both"] == f"{len(both):,}"
    per_topic = table_with(at, "topic", "kappa")
    for row in per_topic.itertuples():
        keys = [key for key in both if key[0] == row.topic]
        assert row.kappa == pytest.approx(cohen_kappa_score(
            [nist[k] for k in keys], [llm[k] for k in keys], labels=list(range(5))), abs=1e-12)
    report = api.judge_agreement("rag", "s1", qrels="nist", vs="llm", k=5, compute=False)
    points = chart_with(at, "run", "score_a", "score_b", "rank_change")
    want = {r.run: (r.score_a, r.score_b) for r in report.runs}
    assert {r.run: (r.score_a, r.score_b) for r in points.itertuples()} == want
    assert len(want) == N_RUNS
    assert metrics["τ-b"] == f"{report.ranking['tau_b']:.3f}"


def test_empty_database_says_how_to_fill_it(db: str) -> None:
    clear_cache()
    at = open_page("judges")
    text = " ".join(i.value for i in at.info)
    assert "The database is empty" in text and "make demo" in text


def test_hostile_names_are_plain_text(db: str, tmp_path: Path) -> None:
    """Run tags, a collection description and a qrels set name that would render as Markdown
    or HTML (tests/hostile.py) reach no Markdown string of the page outside a code span, and
    the CSV downloads are the page's own tables."""
    import re

    from tcdb import api
    from tcdb.operations import Database
    from tcdb.scoring.evaluate import evaluate
    from tests.hostile import COLLECTION, LABELS, TAGS, seed_hostile

    seed_hostile(tmp_path / "hostile")
    last = LABELS[-1]
    second = "<b>llm</b>"
    original = (tmp_path / "hostile" / last / "qrels.txt").read_text().splitlines()
    flipped = [f"{t} 0 {d} {(int(g) + 1) % 3 if i % 3 == 0 else g}"
               for i, (t, _, d, g) in enumerate(line.split() for line in original)]
    (tmp_path / "llm.txt").write_text("\n".join(flipped) + "\n")
    api.qrels_import(COLLECTION, last, second, tmp_path / "llm.txt")
    evaluate(Database(), COLLECTION, last, second, ["nDCG@10"])
    clear_cache()
    at = open_page("judges", collection=COLLECTION, snapshot=last, qrels="original", vs=second,
                   measure="nDCG@10")
    texts = [e.value for kind in ("markdown", "caption", "info", "warning", "subheader",
                                  "title") for e in at.get(kind)]
    texts += [m.label for m in at.metric] + [w.label for w in at.selectbox]
    rendered = re.compile(r"(?<!\\)!(?<!\\)\[|(?<!\\)\]\(|(?<!\\)<[a-z/]")  # unescaped
    for text in texts:
        outside = re.sub(r"`[^`]*`", "", text)
        assert not rendered.search(outside), text
    assert second in {o for w in at.selectbox for o in w.options}
    points = chart_with(at, "run", "score_a", "score_b")
    assert set(points["run"]) == set(TAGS.values())
