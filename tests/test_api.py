"""The Python API: DataFrames with readable columns, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcdb.errors import FieldError
from tests.builders import build_snapshot, write_run_file

DOCS = {f"d{i}": f"text {i}" for i in range(6)}


@pytest.fixture
def two_snapshots(db: str, tmp_path: Path) -> None:
    """Collection `lx` keyed by query text: snapshot s2 renumbers the topics of s1."""
    from tcdb.api import run_import

    build_snapshot(tmp_path, "lx", "s1", DOCS, {"1": "cheap flights", "2": "weather paris"},
                   [("1", "d1", 1), ("2", "d2", 1)], topic_identity="text")
    build_snapshot(tmp_path, "lx", "s2", DOCS, {"10": "weather paris", "11": "cheap flights"},
                   [("10", "d2", 1), ("11", "d3", 1)], topic_identity="text")
    runs = tmp_path / "runs"
    run_import("lx", "s1", [write_run_file(runs / "s1", "bm25-s1",
                                          [("1", "d1", 2.0), ("1", "d2", 1.0),
                                           ("2", "d3", 1.0)])],
               system="BM25")
    run_import("lx", "s2", [write_run_file(runs / "s2", "bm25-s2",
                                          [("10", "d2", 2.0), ("11", "d1", 1.0)])],
               system="BM25")


def test_runs_and_qrels_frames(two_snapshots: None) -> None:
    from tcdb import api

    runs = api.runs("lx").to_frame()
    assert list(runs["run"]) == ["bm25-s1", "bm25-s2"]
    assert list(runs["snapshot"]) == ["s1", "s2"] and set(runs["system"]) == {"BM25"}
    assert list(api.runs("lx", "s2").to_frame()["run"]) == ["bm25-s2"]
    qrels = api.qrels("lx", "s2").to_frame()
    assert list(qrels.columns) == ["collection", "snapshot", "qrels", "topic", "doc", "grade"]
    assert sorted(zip(qrels["topic"], qrels["doc"], strict=True)) == [("10", "d2"), ("11", "d3")]
    sets = api.qrels_sets("lx").to_frame()
    assert list(sets["snapshot"]) == ["s1", "s2"] and set(sets["name"]) == {"original"}


def test_scores_frame_means_and_per_topic(two_snapshots: None) -> None:
    from tcdb import api

    means = api.scores("lx", "s1", measures=["P@1", "RR"]).to_frame()
    assert list(means.columns[:7]) == ["collection", "snapshot", "qrels", "run", "system",
                                       "measure", "value"]
    got = dict(zip(means["measure"], means["value"], strict=True))
    assert got == {"P@1": pytest.approx(0.5), "RR": pytest.approx(0.5)}
    topics = api.scores("lx", "s1", measures="RR", per_topic=True).to_frame()
    assert dict(zip(topics["topic"], topics["value"], strict=True)) == {"1": 1.0, "2": 0.0}


def test_per_topic_scores_match_topics_across_snapshots(two_snapshots: None) -> None:
    from tcdb import api

    frame = api.per_topic_scores("lx", ["s1", "s2"], qrels="original", measure="RR").to_frame()
    assert set(frame["snapshot"]) == {"s1", "s2"}
    by_key = frame.pivot_table(index="topic_key", columns="snapshot", values="value")
    assert by_key.loc["cheap flights"].tolist() == [1.0, 0.0]
    assert by_key.loc["weather paris"].tolist() == [0.0, 1.0]
    external = dict(zip(zip(frame["snapshot"], frame["topic_key"], strict=True), frame["topic"],
                        strict=True))
    assert external[("s2", "cheap flights")] == "11"
    only = api.per_topic_scores("lx", ["s1", "s2"], qrels="original", measure="RR",
                                runs=["bm25-s2"]).to_frame()
    assert set(only["snapshot"]) == {"s2"}


def test_one_string_is_one_label_and_any_iterable_is_many(two_snapshots: None) -> None:
    from tcdb import api

    one = api.per_topic_scores("lx", "s2", qrels="original", measure="RR",
                               runs="bm25-s2").to_frame()
    assert set(one["snapshot"]) == {"s2"} and set(one["run"]) == {"bm25-s2"}
    means = api.scores("lx", "s1", measures="RR", runs=("bm25-s1",)).to_frame()
    assert list(means["measure"]) == ["RR"]
    report = api.persistence("lx", snapshots=(s for s in ["s1", "s2"]), pivot="BM25",
                             measures="RR", systems="BM25")
    assert report.snapshots == ["s1", "s2"] and list(report.measures) == ["RR"]
    assert [r.system for r in report.measures["RR"].systems] == ["BM25"]
    per_snapshot = api.persistence("lx", snapshots=["s1", "s2"], pivot="BM25", measures=["RR"],
                                   qrels={"s1": "original", "s2": "original"})
    assert per_snapshot.qrels == {"s1": "original", "s2": "original"}
    deltas = api.per_topic_deltas("lx", snapshots=["s1", "s2"], pivot="BM25", measures="RR",
                                  systems=("BM25",)).to_frame()
    assert deltas.empty and "delta" in deltas.columns  # the pivot alone: no one to compare


def _field_error(call: Any) -> FieldError:
    with pytest.raises(FieldError) as info:
        call()
    return info.value


def test_errors_name_the_api_parameters_not_cli_options(two_snapshots: None) -> None:
    from tcdb import api

    # one string with a space is one (unknown) label, never its characters
    error = _field_error(lambda: api.persistence("lx", snapshots="s1 s2", pivot="BM25",
                                                 measures="RR"))
    assert str(error) == "snapshots: name at least two snapshots"
    assert error.field == "snapshots"
    error = _field_error(lambda: api.persistence("lx", snapshots=["s1", "s2"], pivot="BM25",
                                                 measures=[]))
    assert str(error) == "measures: give at least one measure"
    error = _field_error(lambda: api.persistence("lx", snapshots=["s1", "s2"], pivot="BM25",
                                                 measures="RR", bootstrap=-1))
    assert str(error).startswith("bootstrap: ")
    error = _field_error(lambda: api.persistence("lx", snapshots=["s1", "s2"], pivot="BM25",
                                                 measures="RR", systems="nobody"))
    assert str(error) == ("systems: no system 'nobody' has runs in snapshots s1, s2 of 'lx' "
                          "(systems: BM25)")
    error = _field_error(lambda: api.per_topic_scores("lx", ["s1", 2], qrels="original",
                                                      measure="RR"))
    assert str(error) == "snapshots: labels are text, not int 2"
    error = _field_error(lambda: api.reusability("lx", "s1", qrels="original", vs="original",
                                                 measures="RR"))
    assert str(error).startswith("vs: compare two different qrels sets")
    error = _field_error(lambda: api.scores("lx", "s1", measures="nonsense"))
    assert str(error).startswith("measures: 'nonsense' is not a measure")


def test_combined_and_argument_fields_are_said_as_flags_part_by_part() -> None:
    """The core names fields; the CLI says them as its flags by the one rule, with no message
    rewriting: several fields part by part, an argument as its metavar, a kept spelling."""
    from tcdb.cli.derive import flags_of
    from tcdb.operations import get_operation

    evaluate = get_operation("evaluate").request
    assert flags_of(evaluate, "run_from/topics") == "--run-from/--topics"
    assert flags_of(evaluate, "runs/residual_of") == "--run/--residual-of"
    assert flags_of(evaluate, "snapshot") == "SNAPSHOT"
    assert flags_of(get_operation("reusability").request, "vs") == "--vs"


def test_scores_reads_one_snapshot_and_says_so(two_snapshots: None) -> None:
    """A list of snapshots was a raw SQL error; now a FieldError naming `snapshot`."""
    from tcdb import api

    with pytest.raises(FieldError) as info:
        api.scores("lx", ["s1", "s2"], measures="RR")
    assert info.value.field == "snapshot" and "per_topic_scores" in str(info.value)


def test_qrels_show_and_per_topic_scores_on_the_command_line(two_snapshots: None,
                                                            cli: Any) -> None:
    import json

    code, out, err = cli("qrels", "show", "lx", "s2", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert sorted((j["topic"], j["doc"], j["grade"]) for j in data["judgments"]) == [
        ("10", "d2", 1), ("11", "d3", 1)]
    code, out, err = cli("scores", "per-topic", "lx", "s1", "s2", "-m", "RR", "--json")
    assert code == 0, err
    rows = json.loads(out)["scores"]
    assert {(r["snapshot"], r["topic_key"]): r["value"] for r in rows} == {
        ("s1", "cheap flights"): 1.0, ("s1", "weather paris"): 0.0,
        ("s2", "cheap flights"): 0.0, ("s2", "weather paris"): 1.0}
    code, _, err = cli("scores", "lx", "s1", "s2", "-m", "RR")
    assert code != 0
