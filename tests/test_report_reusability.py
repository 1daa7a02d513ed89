"""Reusability reports and leave-one-group-out, on a synthetic collection with a hidden truth.

The collection: 6 topics, 100 documents; each topic has 6 relevant documents every system can
find and 8 that only a "magical" run finds. Five contributing runs make the original qrels (their
top 10, judged by the hidden truth); a depth-10 pool over every run (`tcdb.pools`) is judged by
the same truth and expanded. The magical run, unfairly low under the original qrels, must jump to
the top under the expanded ones — and every figure must equal `tcdb.analysis` applied directly to
the files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C, S = "reuse", "s1"
TOPICS = [f"t{i}" for i in range(1, 7)]
DOCS = [f"d{i:03d}" for i in range(100)]
DEPTH = 10
# tag → (group, manual, skill: how many common relevant documents it ranks near the top)
CONTRIBUTORS = {"alpha": ("g1", False, 5), "beta": ("g1", False, 3), "gamma": ("g2", False, 4),
                "delta": ("g3", True, 2), "eps": ("g3", True, 1)}
MAGIC = "magic"


def common_relevant(t: int) -> list[str]:
    return [DOCS[(t * 7 + i) % 40] for i in range(6)]


def hidden_relevant(t: int) -> list[str]:
    return [DOCS[40 + (t * 5 + i) % 60] for i in range(8)]


TRUTH = {topic: set(common_relevant(t)) | set(hidden_relevant(t))
         for t, topic in enumerate(TOPICS, start=1)}


def ranking(tag: str, t: int) -> list[str]:
    """A run's 20 documents for topic t (deterministic, no duplicates)."""
    rel = common_relevant(t)
    junk = [DOCS[i] for i in range(40) if DOCS[i] not in rel]
    offset = sum(map(ord, tag)) % 7
    if tag == MAGIC:
        docs = hidden_relevant(t) + rel[:2] + junk[offset:offset + 10]
    else:
        skill = CONTRIBUTORS[tag][2]
        docs = []
        for i in range(20):
            docs.append(rel[i // 2] if i % 2 == 0 and i // 2 < skill else junk[(offset + i) % 34])
        docs = list(dict.fromkeys(docs))
        docs += [d for d in junk if d not in docs][: 20 - len(docs)]
    return docs[:20]


def run_rows(tag: str) -> list[tuple[str, str, int, float]]:
    return [(topic, doc, rank, 100.0 - rank) for t, topic in enumerate(TOPICS, start=1)
            for rank, doc in enumerate(ranking(tag, t), start=1)]


def judge(pairs: dict[str, set[str]]) -> list[tuple[str, str, int]]:
    return [(topic, doc, int(doc in TRUTH[topic])) for topic in sorted(pairs)
            for doc in sorted(pairs[topic])]


def original_pairs() -> dict[str, set[str]]:
    pairs: dict[str, set[str]] = {topic: set() for topic in TOPICS}
    for tag in CONTRIBUTORS:
        for t, topic in enumerate(TOPICS, start=1):
            pairs[topic].update(ranking(tag, t)[:DEPTH])
    return pairs


def build(tmp_path: Path) -> dict[str, Any]:
    """Ingest the snapshot with the original qrels, import runs, pool, judge and expand."""
    from tcdb.api import pool_build, pool_import_judgments, run_import
    from tcdb.pools import pool_documents

    build_snapshot(tmp_path, C, S, {d: f"text of {d}" for d in DOCS},
                   {t: f"query {t}" for t in TOPICS}, judge(original_pairs()))
    paths = {}
    for tag in [*CONTRIBUTORS, MAGIC]:
        paths[tag] = write_run_file(tmp_path / "runs", tag, run_rows(tag))
        group, manual, _ = CONTRIBUTORS.get(tag, ("wizards", False, 0))
        run_import(C, S, [paths[tag]], group=group, run_type="manual" if manual else "automatic",
                   contributed=tag != MAGIC)
    pool_build(C, S, "p1", depth=DEPTH, all_runs=True, exclude_judged="original")
    pooled = pool_documents(Database(), "p1")
    judgments = write_qrels_file(tmp_path / "pool-judgments.txt", judge(pooled))
    pool_import_judgments("p1", judgments, expand="original", expanded_name="expanded")
    expanded = {topic: set(docs) for topic, docs in original_pairs().items()}
    for topic, docs in pooled.items():
        expanded[topic] |= docs
    return {"runs": paths, "qrels_a": judge(original_pairs()), "qrels_b": judge(expanded)}


def per_topic(qrels: list[tuple[str, str, int]], measure: str, topics: list[str],
              tags: list[str]) -> Any:
    """ir_measures' per-topic values of the run files, as the analysis takes them."""
    import ir_measures
    import pandas as pd

    q = pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"])
    rows = []
    for tag in tags:
        run = pd.DataFrame([(t, d, s) for t, d, _, s in run_rows(tag)],
                           columns=["query_id", "doc_id", "score"])
        for m in ir_measures.iter_calc([ir_measures.parse_measure(measure)], q, run):
            rows.append((tag, m.query_id, m.value))
    frame = pd.DataFrame(rows, columns=["run", "topic", "value"])
    return frame[frame["topic"].isin(topics)]


def direct(data: dict[str, Any], measure: str, topics: list[str], depth: int = DEPTH
           ) -> dict[str, Any]:
    """The analysis functions applied to the files: ir_measures per-topic scores, top-K rows."""
    import pandas as pd

    from tcdb.analysis.reusability import reusability_report, unjudged_and_new_relevant

    tags = [*CONTRIBUTORS, MAGIC]
    top = pd.DataFrame([(tag, t, d, r) for tag in tags
                        for t, d, r, _ in run_rows(tag) if r <= depth and t in topics],
                       columns=["run", "topic", "doc", "rank"])
    qa = pd.DataFrame(data["qrels_a"], columns=["topic", "doc", "grade"])
    qb = pd.DataFrame(data["qrels_b"], columns=["topic", "doc", "grade"])
    qa, qb = qa[qa["topic"].isin(topics)], qb[qb["topic"].isin(topics)]
    figures = reusability_report(per_topic(data["qrels_a"], measure, topics, tags),
                                 per_topic(data["qrels_b"], measure, topics, tags),
                                 topics=topics)
    counts = unjudged_and_new_relevant(top, qa, qb).set_index("run")
    for entry in figures["runs"]:
        entry["unjudged_top_k"] = int(counts.loc[entry["run"], "unjudged_a"])
        entry["new_relevant_top_k"] = int(counts.loc[entry["run"], "new_relevant_b"])
    return figures


def same(report: Any, expected: dict[str, Any]) -> None:
    """A measure of the reusability result (typed) against the analysis' dict."""
    for key in ("kendall_tau", "tau_b", "tau_ap", "n_runs"):
        assert getattr(report, key) == pytest.approx(expected[key]), key
    ours, theirs = report.per_topic_tau, expected["per_topic_tau"]
    assert ours.below_threshold == theirs["below_threshold"]
    assert (ours.min, ours.median) == pytest.approx((theirs["min"], theirs["median"]))
    by_run = {r.run: r for r in report.runs}
    for entry in expected["runs"]:
        got = by_run[entry["run"]]
        for key in ("score_a", "score_b"):
            assert getattr(got, key) == pytest.approx(entry[key]), (entry["run"], key)
        for key in ("rank_a", "rank_b", "rank_change", "unjudged_top_k", "new_relevant_top_k"):
            assert getattr(got, key) == entry[key], (entry["run"], key)


def test_magical_run_is_flagged_and_figures_equal_the_analysis(db: str, tmp_path: Path) -> None:
    from tcdb import api

    data = build(tmp_path)
    report = api.reusability(C, S, qrels="original", vs="expanded", measures=["AP", "P@10"],
                             depth=DEPTH)
    assert report.n_topics == len(TOPICS)
    for measure in ("AP", "P@10"):
        result = report.measures[measure]
        same(result, direct(data, measure, TOPICS))
        magic = next(r for r in result.runs if r.run == MAGIC)
        assert magic.rank_a > 1 and magic.rank_b == 1 and magic.rank_change >= 3
        assert magic.moved == "climbed"
        # Its top 10: 8 hidden relevant (unjudged in A, relevant in B) + 2 judged relevant.
        assert magic.new_relevant_top_k == 8 * len(TOPICS)
        assert magic.unjudged_top_k >= magic.new_relevant_top_k
        assert result.largest_rank_changes[0].run == MAGIC
        assert result.tau_ap < 1.0
    contributors = [r for r in report.measures["AP"].runs if r.run != MAGIC]
    assert all(r.new_relevant_top_k == 0 for r in contributors)
    frame = report.to_frame()
    assert len(frame) == 2 * len([*CONTRIBUTORS, MAGIC])
    assert set(frame["measure"]) == {"AP", "P@10"}


def test_topic_set_restricts_the_report(db: str, tmp_path: Path) -> None:
    from tcdb import api

    data = build(tmp_path)
    subset = ["t2", "t3", "t5"]
    listed = tmp_path / "subset.txt"
    listed.write_text("\n".join(subset) + "\n")
    api.topic_set_create("three", C, S, from_file=listed)
    report = api.reusability(C, S, qrels="original", vs="expanded", measures=["AP"],
                             topics="three", depth=DEPTH)
    assert report.n_topics == 3 and report.topics == "three"
    same(report.measures["AP"], direct(data, "AP", subset))
    magic = next(r for r in report.measures["AP"].runs if r.run == MAGIC)
    assert magic.new_relevant_top_k == 8 * 3


def test_core_topics_are_the_judged_ones_of_one_snapshot(db: str, tmp_path: Path) -> None:
    """`topics="core"` means what it means in persistence: the topics every compared snapshot
    has, judged in each; on one snapshot, every topic both sets judge."""
    from tcdb import api

    build(tmp_path)
    core = api.reusability(C, S, qrels="original", vs="expanded", topics="core", depth=DEPTH)
    every = api.reusability(C, S, qrels="original", vs="expanded", depth=DEPTH)
    assert core.n_topics == every.n_topics == len(TOPICS)
    assert core.measures == every.measures


def test_run_subset_and_bootstrap(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.analysis.bootstrap import tau_ci

    data = build(tmp_path)
    report = api.reusability(C, S, qrels="original", vs="expanded", measures=["AP"],
                             runs=["alpha", "gamma", MAGIC], bootstrap=200, seed=3)
    result = report.measures["AP"]
    assert result.n_runs == 3
    assert {r.run for r in result.runs} == {"alpha", "gamma", MAGIC}
    assert result.bootstrap is not None
    ci = result.bootstrap["kendall_tau"]
    assert ci.n_samples == 200
    assert ci.low <= result.kendall_tau <= ci.high
    # The interval is tau_ci's on the same per-topic scores.
    tags = ["alpha", "gamma", MAGIC]
    frames = [per_topic(data[key], "AP", TOPICS, tags) for key in ("qrels_a", "qrels_b")]
    assert tau_ci(*frames, topics=TOPICS, n_samples=200, seed=3) == ci.model_dump()


@pytest.mark.parametrize("kwargs, error, words", [
    ({"vs": "nope"}, "NotFoundError", "no qrels set 'nope'"),
    ({"vs": "original"}, "FieldError", "vs: compare two different qrels sets.*itself"),
    ({"depth": 0}, "FieldError", "depth: must be at least 1"),
    ({"topics": "missing"}, "NotFoundError", "no topic set 'missing'"),
    ({"runs": ["ghost"]}, "NotFoundError", "no run 'ghost'"),
    ({"measures": ["NotAMeasure"]}, "InputError", "NotAMeasure"),
])
def test_reusability_errors(db: str, tmp_path: Path, kwargs: dict[str, Any], error: str,
                            words: str) -> None:
    from tcdb import api, errors

    build(tmp_path)
    args: dict[str, Any] = {"qrels": "original", "vs": "expanded", "measures": ["AP"]}
    args.update(kwargs)
    with pytest.raises(getattr(errors, error), match=words):
        api.reusability(C, S, **args)


def test_leave_out_stores_derived_qrels_and_reuses_them(db: str, tmp_path: Path) -> None:
    import pandas as pd

    from tcdb import api
    from tcdb.analysis.reusability import uniques_leave_out
    from tcdb.judging.qrels import list_qrels
    from tcdb.reports.leave_out import derived_name

    data = build(tmp_path)
    report = api.leave_out(C, S, qrels="original", depth=DEPTH, by="group",
                           measures=["AP", "P@10"], save="loo")
    groups = {g.group: g for g in report.measures["AP"].groups}
    assert set(groups) == {"g1", "g2", "g3"}
    sets = {q["name"]: q for q in list_qrels(Database(), C, S)}
    top = pd.DataFrame([(tag, CONTRIBUTORS[tag][0], t, d) for tag in CONTRIBUTORS
                        for t, d, r, _ in run_rows(tag) if r <= DEPTH],
                       columns=["run", "group", "topic", "doc"])
    qrels = pd.DataFrame(data["qrels_a"], columns=["topic", "doc", "grade"])
    for group, result in groups.items():
        name = derived_name("loo", group)
        assert result.qrels == name
        assert sets[name]["kind"] == "derived" and sets[name]["parent"] == "original"
        expected = uniques_leave_out(top, qrels, group)
        assert sets[name]["n_judgments"] == len(expected)
        assert result.n_removed == len(qrels) - len(expected)
        assert {r.run for r in result.runs} == {
            t for t, (g, _, _) in CONTRIBUTORS.items() if g == group}
        for run in result.runs:
            assert run.rank_change == run.rank_full - run.rank_reduced
        precision = next(g for g in report.measures["P@10"].groups if g.group == group)
        # Fewer relevant documents can only lower a left-out run's precision.
        assert all(r.score_reduced <= r.score_full for r in precision.runs)
        assert -1.0 <= result.kendall_tau <= 1.0
    assert any(g.n_removed > 0 for g in groups.values())
    precision_groups = report.measures["P@10"].groups
    assert any(r.score_reduced < r.score_full for g in precision_groups for r in g.runs)
    again = api.leave_out(C, S, qrels="original", depth=DEPTH, by="group",
                          measures=["AP", "P@10"], save="loo")
    assert len(list_qrels(Database(), C, S)) == len(sets)
    assert again.measures == report.measures


def test_leave_out_reads_unless_saved(db: str, tmp_path: Path) -> None:
    """Without `save` the report stores no qrels set and no score on one, and its figures are
    those of the saved sets."""
    from tcdb import api
    from tcdb.judging.qrels import list_qrels

    build(tmp_path)
    before = len(list_qrels(Database(), C, S))
    report = api.leave_out(C, S, qrels="original", depth=DEPTH, measures=["AP", "P@10"])
    assert len(list_qrels(Database(), C, S)) == before
    assert all(g.qrels is None for m in report.measures.values() for g in m.groups)
    with Database().session() as session:
        n_scores = session.connection().exec_driver_sql("SELECT COUNT(*) FROM score").scalar()
    saved = api.leave_out(C, S, qrels="original", depth=DEPTH, measures=["AP", "P@10"],
                          save="loo")
    for measure, result in report.measures.items():
        for read, stored in zip(result.groups, saved.measures[measure].groups, strict=True):
            assert read.model_copy(update={"qrels": stored.qrels}) == stored
    with Database().session() as session:
        assert session.connection().exec_driver_sql("SELECT COUNT(*) FROM score").scalar() \
            > n_scores


def test_leave_out_by_manual_and_its_errors(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    build(tmp_path)
    report = api.leave_out(C, S, qrels="original", depth=DEPTH, by="run-type")
    assert {g.group for g in report.measures["AP"].groups} == {"manual", "automatic"}
    with pytest.raises(InputError, match="single category"):
        api.leave_out(C, S, qrels="original", depth=DEPTH, by="category")
    with pytest.raises(InputError, match="group runs by one of"):
        api.leave_out(C, S, qrels="original", depth=DEPTH, by="colour")
    with pytest.raises(InputError, match="depth: must be at least 1"):
        api.leave_out(C, S, qrels="original", depth=0)


def test_leave_out_needs_contributing_runs(db: str, tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.api import run_import
    from tcdb.errors import InputError

    build_snapshot(tmp_path, C, S, {d: d for d in DOCS}, {t: t for t in TOPICS},
                   judge(original_pairs()))
    run_import(C, S, [write_run_file(tmp_path / "runs", MAGIC, run_rows(MAGIC))])
    with pytest.raises(InputError, match="contributing"):
        api.leave_out(C, S, qrels="original", depth=DEPTH)


def test_cli_reusability_and_leave_out(db: str, tmp_path: Path, cli: Any) -> None:
    build(tmp_path)
    code, out, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                         "expanded", "--measure", "AP", "--measure", "P@10", "--depth", DEPTH,
                         "--json")
    assert code == 0, err
    report = json.loads(out)
    for measure in ("AP", "P@10"):
        result = report["measures"][measure]
        assert {"kendall_tau", "tau_b", "tau_ap", "n_runs", "per_topic_tau", "runs"} <= set(result)
        assert {"min", "median", "below_threshold"} <= set(result["per_topic_tau"])
        assert {"run", "score_a", "rank_a", "score_b", "rank_b", "unjudged_top_k",
                "new_relevant_top_k"} <= set(result["runs"][0])
    code, out, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                         "expanded", "--measure", "AP", "--all-runs")
    assert code == 0, err
    assert "largest rank changes: magic" in out and "τ_AP" in out
    code, _, err = cli("report", "reusability", C, S, "--qrels", "original", "--vs",
                       "expanded", "--measure", "AP", "--all-runs", "--run", "alpha")
    assert code == 1 and "not both" in err
    code, out, err = cli("report", "leave-out", C, S, "--qrels", "original", "--depth", DEPTH,
                         "--by", "group", "--json")
    assert code == 0, err
    assert {g["group"] for g in json.loads(out)["measures"]["AP"]["groups"]} == {"g1", "g2",
                                                                                 "g3"}
    code, out, err = cli("report", "leave-out", C, S, "--qrels", "original", "--depth", DEPTH,
                         "--by", "run-type")
    assert code == 0, err
    assert "manual" in out and "automatic" in out


def test_top_k_follows_trec_eval_order_not_the_file_ranks(db: str, tmp_path: Path) -> None:
    """With tied scores the file's ranks and trec_eval's order (doc id descending) differ;
    the top K is the one evaluation sees."""
    from tcdb.api import run_import
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import document_ids, load_top_k
    from tcdb.runs import get_runs

    build_snapshot(tmp_path, C, S, {d: d for d in DOCS[:5]}, {"t1": "q"}, [("t1", "d000", 1)])
    rows = [("t1", d, rank, 1.0) for rank, d in enumerate(DOCS[:5], start=1)]
    run_import(C, S, [write_run_file(tmp_path / "runs", "tied", rows)])
    with Database().session() as session:
        snap = get_snapshot(session, C, S)
        run_id = get_runs(session, snap)[0].id or 0
        names = {v: k for k, v in document_ids(session, snap.id or 0).items()}
        conn = session.connection()
        top = load_top_k(conn, snap.id or 0, [run_id], 2)
    assert {names[d] for d in top["doc"]} == {"d004", "d003"}
