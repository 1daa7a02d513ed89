"""`--topics` and `--qrels` mean one thing in every report (issue 31, item 4): the selection is
echoed as given (`all`, `core` or a set's name), a topic set that is itself named `core` is
`set:core`, and `original` is the snapshot's designated original qrels whatever its name."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from tests.builders import build_snapshot, write_run_file

pytestmark = pytest.mark.slow

C = "echo"
DOCS = {f"d{i}": f"text {i}" for i in range(10)}
TOPICS = {str(t): f"query {t}" for t in range(1, 6)}
QRELS = [(str(t), f"d{t}", 1) for t in range(1, 6)]
# P@1 by hand: A hits topics 1, 2, 3 (3/5); B hits 4, 5 (2/5)
RUN_A = [("1", "d1", 3.0), ("2", "d2", 3.0), ("3", "d3", 3.0), ("4", "d9", 3.0)]
RUN_B = [("1", "d9", 2.0), ("4", "d4", 2.0), ("5", "d5", 2.0)]


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    """One snapshot whose original qrels are stored as `trec-qrels` (not `original`), runs A
    and B dated, and topic sets `core` = {1, 2} and `pair` = {4, 5}."""
    from tcdb import api
    from tcdb.api import run_import

    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, QRELS, qrels_name="trec-qrels")
    run_import(C, "s1", [write_run_file(tmp_path / "runs", "A", RUN_A)],
               submitted=dt.date(2020, 1, 1))
    run_import(C, "s1", [write_run_file(tmp_path / "runs", "B", RUN_B)],
               submitted=dt.date(2021, 1, 1))
    api.topic_set_create(collection=C, name="core", snapshot="s1", topic_ids=["1", "2"])
    api.topic_set_create(collection=C, name="pair", snapshot="s1", topic_ids=["4", "5"])
    return tmp_path


def _means(frame: Any) -> dict[str, float]:
    return dict(zip(frame["run"], frame["value"], strict=True))


def test_original_is_the_designated_original_set(snap: Path) -> None:
    from tcdb import api

    default = api.scores(C, "s1", measures="P@1")
    named = api.scores(C, "s1", qrels="trec-qrels", measures="P@1")
    assert _means(default.to_frame()) == pytest.approx({"A": 0.6, "B": 0.4})
    assert _means(default.to_frame()) == _means(named.to_frame())
    # the lineage finds the set behind `original`: its checksum, not "unknown"
    assert default.lineage is not None and named.lineage is not None
    assert default.lineage.qrels[0].kind == "original"
    assert default.lineage.qrels[0].checksum == named.lineage.qrels[0].checksum


@pytest.mark.parametrize("given, set_name, means", [
    ("all", None, {"A": 0.6, "B": 0.4}),
    ("core", None, {"A": 0.6, "B": 0.4}),  # on one snapshot the core topics are every topic
    ("set:core", "core", {"A": 1.0, "B": 0.0}),  # the set named core: topics 1 and 2
    ("pair", "pair", {"A": 0.0, "B": 1.0}),
])
def test_scores_and_evaluate_echo_the_selection(snap: Path, given: str, set_name: str | None,
                                                means: dict[str, float]) -> None:
    from tcdb import api

    result = api.scores(C, "s1", measures="P@1", topics=given)
    assert result.topics == given
    frame = result.to_frame()
    assert _means(frame) == pytest.approx(means)
    assert list(frame["topic_set"].where(frame["topic_set"].notna(), None)) == [set_name] * 2
    assert api.evaluate(C, "s1", measures=["P@1"], topics=given).topics == given


@pytest.mark.parametrize("given, n_topics", [("all", 5), ("core", 5), ("set:core", 2),
                                             ("pair", 2)])
def test_compare_and_leaderboard_echo_the_selection(snap: Path, given: str,
                                                    n_topics: int) -> None:
    from tcdb import api

    compared = api.compare(C, "s1", measure="P@1", topics=given)
    assert compared.topic_set == given and compared.n_topics == n_topics
    assert compared.to_data()["topic_set"] == given
    board = api.leaderboard(C, "s1", measure="P@1", topics=given)
    assert board.topic_set == given and board.n_topics == n_topics


def test_cli_echoes_core_in_json(snap: Path, cli: Any) -> None:
    code, out, err = cli("report", "compare", C, "s1", "-m", "P@1", "--topics", "core",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["topic_set"] == "core"


@pytest.mark.parametrize("given", ["all", "core"])
def test_topic_deltas_and_ranking_agreement_echo_the_selection(db: str, tmp_path: Path,
                                                               given: str) -> None:
    """Both report over the core topics of two snapshots: `all` and `core` alike, echoed."""
    from tcdb.api import ranking_agreement, topic_deltas
    from tests.longitudinal import COLLECTION, build_web

    build_web(tmp_path)
    deltas = topic_deltas(COLLECTION, system="noisy", snapshots=["s1", "s2"],
                          measure="nDCG@10", topics=given)
    assert deltas.topic_set == given and deltas.n_topics == 4
    agreement = ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"],
                                  topics=given)
    assert agreement.topic_set == given and agreement.n_topics == 4


@pytest.fixture
def two(snap: Path) -> Path:
    """A second snapshot s2 of the same collection: topics 1–4 and 6 (5 gone, 6 new), each
    judged, run A in both. The core topics of s1 and s2 are 1–4."""
    from tcdb.api import run_import

    topics = {t: f"query {t}" for t in ("1", "2", "3", "4", "6")}
    build_snapshot(snap, C, "s2", DOCS, topics, [(t, f"d{t}", 1) for t in topics])
    run_import(C, "s2", [write_run_file(snap / "runs2", "A", RUN_A + [("6", "d6", 3.0)])])
    return snap


@pytest.mark.parametrize("given, s1, s2", [
    ("all", {"1", "2", "3", "4", "5"}, {"1", "2", "3", "4", "6"}),
    ("core", {"1", "2", "3", "4"}, {"1", "2", "3", "4"}),  # in both snapshots, judged in both
    ("set:core", {"1", "2"}, {"1", "2"}),  # the topic set named core
    ("pair", {"4", "5"}, {"4"}),  # topic 5 is not in s2
])
def test_per_topic_scores_take_the_shared_selection(two: Path, cli: Any, given: str,
                                                    s1: set[str], s2: set[str]) -> None:
    from tcdb import api

    result = api.per_topic_scores(C, ["s1", "s2"], measure="P@1", runs=["A"], topics=given)
    assert result.topics == given and result.to_data()["topics"] == given
    frame = result.to_frame()
    assert set(frame.loc[frame["snapshot"] == "s1", "topic"]) == s1
    assert set(frame.loc[frame["snapshot"] == "s2", "topic"]) == s2
    # A's P@1 by hand: it ranks d1…d3 first on topics 1–3 (and d6 on s2's topic 6)
    hits = {"1", "2", "3"} | ({"6"} if given == "all" else set())
    assert {(s, t): v for s, t, v in frame[["snapshot", "topic", "value"]].itertuples(
        index=False)} == {(s, t): float(t in hits) for s, ts in (("s1", s1), ("s2", s2))
                          for t in ts}
    assert result.lineage is not None and result.lineage.topics.selection == given
    assert [(q.snapshot, q.kind) for q in result.lineage.qrels] == [("s1", "original"),
                                                                    ("s2", "original")]
    if given == "set:core":  # the lineage names the set's members, not "no such set"
        assert result.lineage.topics.n_members == 2
    code, out, err = cli("scores", "per-topic", C, "s1", "s2", "-m", "P@1", "--run", "A",
                         "--topics", given, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["topics"] == given and data["lineage"]["topics"]["selection"] == given
    assert len(data["scores"]) == len(s1) + len(s2)


@pytest.mark.parametrize("given, subset, means", [
    ("core", 5, {"A": 0.6, "B": 0.4}),  # on one snapshot the core topics are every topic
    ("all", 5, {"A": 0.6, "B": 0.4}),
    ("set:core", 2, {"A": 1.0, "B": 0.0}),
    ("pair", 2, {"A": 0.0, "B": 1.0}),
])
def test_subset_takes_the_shared_selection(snap: Path, cli: Any, given: str, subset: int,
                                           means: dict[str, float]) -> None:
    from tcdb import api

    result = api.subset_ci(C, "s1", topics=given, measure="P@1", bootstrap=200)
    assert result.topic_set == given and (result.n_topics, result.n_subset) == (5, subset)
    assert {r.run: r.subset_mean for r in result.runs} == pytest.approx(means)
    assert {r.run: r.mean for r in result.runs} == pytest.approx({"A": 0.6, "B": 0.4})
    assert result.lineage is not None and result.lineage.topics.selection == given
    code, out, err = cli("report", "subset", C, "s1", "--topics", given, "-m", "P@1",
                         "--samples", "200", "--json")
    assert code == 0, err
    assert json.loads(out)["topic_set"] == given


def test_subset_still_needs_a_selection_and_a_level(snap: Path) -> None:
    from tcdb import api
    from tcdb.errors import FieldError
    from tcdb.reports.subset import SubsetRequest

    with pytest.raises(FieldError) as info:  # a subset of what: no default
        SubsetRequest.of(collection=C, snapshot="s1", measure="P@1")
    assert info.value.field == "topics"
    for bad in (0.0, 1.0, 1.5):  # one alpha rule for subset, compare and leaderboard
        for call in (lambda a: api.subset_ci(C, "s1", topics="pair", measure="P@1", alpha=a),
                     lambda a: api.compare(C, "s1", measure="P@1", alpha=a),
                     lambda a: api.leaderboard(C, "s1", measure="P@1", alpha=a)):
            with pytest.raises(FieldError) as info:
                call(bad)
            assert info.value.field == "alpha"
