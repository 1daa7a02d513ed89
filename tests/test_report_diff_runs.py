"""`report diff-runs`: two runs topic by topic (ordered by |A − B| of the measure, scores checked
against ir_measures on the same run and qrels dicts), and one topic's rankings side by side
(trec_eval's order computed here by hand, grades from the qrels the test wrote, the other run's
rank, the text's start), through the API, the CLI, its JSON with lineage and a paper table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import build_snapshot, write_run_file

C, S = "diffc", "s1"
LONG = " ".join(f"word{i}" for i in range(80))  # 80 words: cut
DOCS = {f"d{i}": f"text of document {i}" for i in range(1, 13)}
DOCS["d5"] = LONG
DOCS["d7"] = "line one\n\tline   two"  # whitespace runs: one space in the snippet
TOPICS = {"t1": "first query", "t2": "second query", "t3": "third query", "t10": "tenth"}
QRELS = [("t1", "d1", 2), ("t1", "d2", 1), ("t1", "d3", 0), ("t1", "d9", 1),
         ("t2", "d4", 1), ("t2", "d5", 2), ("t2", "d6", 0),
         ("t3", "d7", 1), ("t3", "d8", 1),
         ("t10", "d10", 1)]
# (topic, doc, score); ties on a score are broken by trec_eval (document id descending).
RUN_A = [("t1", "d1", 9.0), ("t1", "d3", 8.0), ("t1", "d2", 7.0), ("t1", "d11", 6.0),
         ("t2", "d6", 5.0), ("t2", "d4", 4.0), ("t2", "d12", 4.0),
         ("t3", "d7", 3.0), ("t3", "d8", 2.0),
         ("t10", "d1", 1.0)]
RUN_B = [("t1", "d3", 5.0), ("t1", "d11", 5.0), ("t1", "d1", 4.0), ("t1", "d9", 1.0),
         ("t2", "d5", 9.0), ("t2", "d4", 8.0),
         ("t3", "d8", 3.0), ("t3", "d7", 2.0),
         ("t10", "d10", 2.0)]
MEASURE = "nDCG@10"


def _expected() -> dict[str, tuple[float, float]]:
    """topic → (A, B) nDCG@10 by ir_measures on the test's own dicts."""
    import ir_measures

    qrels = {}
    for topic, doc, grade in QRELS:
        qrels.setdefault(topic, {})[doc] = grade
    scores: dict[str, dict[str, float]] = {}
    for tag, rows in (("a", RUN_A), ("b", RUN_B)):
        run: dict[str, dict[str, float]] = {}
        for topic, doc, score in rows:
            run.setdefault(topic, {})[doc] = score
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(MEASURE)], qrels, run):
            scores.setdefault(metric.query_id, {})[tag] = metric.value
    return {t: (v.get("a", 0.0), v.get("b", 0.0)) for t, v in scores.items()}


def _ranking(rows: list[tuple[str, str, float]], topic: str) -> list[str]:
    """trec_eval's order by hand: score descending, then document id descending."""
    mine = [(doc, score) for t, doc, score in rows if t == topic]
    return [doc for doc, _ in sorted(mine, key=lambda x: (x[1], x[0]), reverse=True)]


@pytest.fixture
def seeded(db: str, tmp_path: Path) -> str:
    from tcdb import api

    build_snapshot(tmp_path, C, S, DOCS, TOPICS, QRELS)
    api.run_import(C, S, [write_run_file(tmp_path / "runs", "runA", RUN_A),
                          write_run_file(tmp_path / "runs", "runB", RUN_B)])
    return db


def test_topics_by_difference_and_one_topic_side_by_side(seeded: str) -> None:
    from tcdb import api

    expected = _expected()
    result = api.diff_runs(C, S, "runA", "runB", measure=MEASURE)
    got = {t.topic: (t.score_a, t.score_b) for t in result.topics}
    assert set(got) == set(expected)
    for topic, (a, b) in expected.items():
        assert got[topic] == pytest.approx((a, b), abs=1e-12)
    order = sorted(expected, key=lambda t: (-abs(round(expected[t][0] - expected[t][1], 12)),
                                            -(expected[t][0] - expected[t][1])))
    assert [t.topic for t in result.topics] == order
    differences = [a - b for a, b in expected.values()]
    assert (result.a_better, result.b_better) == (sum(d > 1e-12 for d in differences),
                                                  sum(d < -1e-12 for d in differences))
    assert result.mean_a == pytest.approx(sum(a for a, _ in expected.values()) / len(expected))
    # Without --topic: the topic that differs most, side by side.
    assert result.rankings is not None and result.rankings.topic == order[0]
    frame = result.to_frame()
    assert list(frame.columns) == ["topic", "score_a", "score_b", "difference"]
    assert result.lineage is not None
    assert {r.run for r in result.lineage.runs} == {"runA", "runB"}


def test_rankings_with_grades_other_ranks_and_text(seeded: str) -> None:
    from tcdb import api

    grades = {(t, d): g for t, d, g in QRELS}
    for topic in TOPICS:
        result = api.diff_runs(C, S, "runA", "runB", topic=topic, depth=3, snippet=40)
        ranks = result.rankings
        assert ranks is not None and ranks.topic == topic and ranks.query == TOPICS[topic]
        a_order, b_order = _ranking(RUN_A, topic), _ranking(RUN_B, topic)
        assert [p.a.document for p in ranks.ranks if p.a] == a_order[:3]
        assert [p.b.document for p in ranks.ranks if p.b] == b_order[:3]
        assert ranks.n_relevant == sum(1 for (t, _), g in grades.items() if t == topic and g > 0)
        for pair in ranks.ranks:
            for doc, other in ((pair.a, b_order), (pair.b, a_order)):
                if doc is None:
                    continue
                assert doc.grade == grades.get((topic, doc.document))  # None: unjudged
                assert doc.other_rank == (other.index(doc.document) + 1
                                          if doc.document in other else None)
                text = " ".join(DOCS[doc.document].split())
                if len(text) <= 40:
                    assert doc.snippet == text
                else:
                    assert doc.snippet is not None and doc.snippet.endswith("…")
                    assert len(doc.snippet) <= 40 and text.startswith(doc.snippet[:-1].rstrip())
    # t2: d5 (the long one) is B's first; d12 is unjudged; A's tie at 4.0: "d4" > "d12" as
    # trec_eval compares ids (strcmp), so d4 first.
    t2 = api.diff_runs(C, S, "runA", "runB", topic="t2").rankings
    assert t2 is not None
    assert [p.a.document for p in t2.ranks if p.a] == ["d6", "d4", "d12"]
    assert t2.ranks[2].a is not None and t2.ranks[2].a.grade is None
    assert t2.ranks[0].b is not None and t2.ranks[0].b.other_rank is None


def test_bad_requests_name_their_field(seeded: str) -> None:
    from tcdb import api
    from tcdb.errors import FieldError, InputError

    with pytest.raises(FieldError, match="run_b"):
        api.diff_runs(C, S, "runA", "runA")
    with pytest.raises(FieldError, match="topic"):
        api.diff_runs(C, S, "runA", "runB", topic="t99")
    with pytest.raises(InputError, match="depth"):
        api.diff_runs(C, S, "runA", "runB", depth=0)


def test_cli_prints_rankings_and_text_and_json_with_lineage(seeded: str, cli) -> None:
    code, out, err = cli("report", "diff-runs", C, S, "runA", "runB", "--topic", "t3")
    assert code == 0, err
    assert "topic t3 “third query”" in out and "runA" in out and "runB" in out
    assert "line one line two" in out  # d7's text, whitespace collapsed
    assert "unjudged" not in out  # every document of t3 is judged
    code, out, err = cli("report", "diff-runs", C, S, "runA", "runB", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["measure"] == MEASURE and data["lineage"]["runs"]
    assert [t["topic"] for t in data["topics"]][0] == data["rankings"]["topic"]
    code, out, err = cli("report", "diff-runs", C, S, "runA", "runB", "--format", "markdown")
    assert code == 0, err
    assert "| topic |" in out.replace("  ", " ")


def test_dashboard_view_shows_the_report(seeded: str) -> None:
    """The Diff runs page: the report's topic table, the chosen topic's two rankings, and each
    run's metadata, as plain text."""
    from tcdb import api
    from tcdb.dashboard.widgets import plain
    from tests.dashboard_pages import clear_cache, open_page, table_with

    report = api.diff_runs(C, S, "runA", "runB", measure=MEASURE, topic="t2")  # stores scores
    clear_cache()
    at = open_page("diff_runs", collection=C, snapshot=S, run_a="runA", run_b="runB",
                   measure=MEASURE, qrels="original", topic="t2")
    assert at.title[0].value == "Diff runs"
    shown = table_with(at, "topic", "score_a", "score_b", "difference")
    assert shown["topic"].tolist() == [t.topic for t in report.topics]
    assert shown["difference"].tolist() == pytest.approx([t.difference for t in report.topics])
    sides = [e.value for e in at.dataframe if "other" in e.value.columns]
    assert len(sides) == 2
    assert report.rankings is not None
    assert sides[0]["document"].tolist() == [p.a.document for p in report.rankings.ranks if p.a]
    assert sides[1]["document"].tolist() == [p.b.document for p in report.rankings.ranks if p.b]
    assert "unjudged" in sides[0]["grade"].tolist()  # d12
    # the documents' text: a heading and the whole snippet per document, never a table cell
    # that cuts it at the column's edge
    assert not [e for e in at.dataframe if "text" in e.value.columns]
    documents = {p.a.document for p in report.rankings.ranks if p.a} | {
        p.b.document for p in report.rankings.ranks if p.b}
    headings = {m.value.split("**")[1] for m in at.markdown if m.value.startswith("**d")}
    assert documents <= headings
    captions = [c.value for c in at.caption]
    assert plain(DOCS["d4"]) in captions
    (d5,) = [c for c in captions if c.startswith(plain(DOCS["d5"][:20]))]
    assert d5.endswith("…")


def test_unscored_runs_read_without_computing_are_told_how_to_score_them(seeded: str,
                                                                          tmp_path: Path,
                                                                          cli) -> None:
    """Read without computing (the dashboard, --no-compute), a run whose entries are stored but
    not yet scored is named with the command that scores them, not told it has no entries; a
    run of published scores only (no entries) still is."""
    from tcdb import api
    from tcdb.errors import NotFoundError

    with pytest.raises(NotFoundError) as caught:
        api.diff_runs(C, S, "runA", "runB", compute=False)
    message = str(caught.value)
    assert "no stored entries" not in message
    assert "its 10 entries are not scored yet" in message
    assert "`tcdb evaluate diffc s1 --qrels original --measure nDCG@10` scores them" in message
    code, _, err = cli("report", "diff-runs", C, S, "runA", "runB", "--no-compute")
    assert code != 0 and "tcdb evaluate diffc s1" in err
    code, _, err = cli("evaluate", C, S, "--qrels", "original", "--measure", MEASURE)
    assert code == 0, err
    assert api.diff_runs(C, S, "runA", "runB", compute=False).n_topics == len(TOPICS)

    scores = tmp_path / "pub.score"
    scores.write_text("runid\tall\tpub\nndcg_cut_10\tt1\t0.5\n", encoding="utf-8")
    api.scores_import(C, S, scores)
    with pytest.raises(NotFoundError, match=r"run 'pub' .*no stored entries to compute them "
                                            r"from; import them with `tcdb scores import`"):
        api.diff_runs(C, S, "runA", "pub")
