"""`tcdb report ranking-agreement` and `topic-deltas` on SQLite and PostgreSQL, on a generated
three-snapshot collection whose answers are known by construction (`tests.longitudinal`):
documents renamed in every snapshot but kept by URL, topics re-numbered but kept by text.

KTU and RBO are checked against repro_eval 0.5.0 (`repro_eval.measure.document_order`) on the
same rankings, named by URL, to 1e-9; per-topic deltas against ir_measures on the run files.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import ir_measures
import pytest
from repro_eval.measure.document_order import KTU, RBO

from tcdb.errors import ConflictError, FieldError, NotFoundError
from tests.longitudinal import COLLECTION, DEPTH, QUERIES, Web, build_web


@pytest.fixture
def web(db: str, tmp_path: Path) -> Web:
    return build_web(tmp_path)


def _repro_run(web: Web, system: str, label: str, queries: list[str]
               ) -> dict[str, OrderedDict[str, float]]:
    """A ranking as repro_eval takes it: topic → {doc: score} in rank order, docs by URL."""
    return {q: OrderedDict((u, float(DEPTH - r))
                           for r, u in enumerate(web.rankings[system][label][q]))
            for q in queries}


def test_unchanged_ranking_gives_ktu_and_rbo_one_reversed_gives_ktu_minus_one(web: Web) -> None:
    from tcdb.api import ranking_agreement

    steady = ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"])
    assert steady.runs == {"s1": "steady-s1", "s2": "steady-s2"}
    assert steady.n_topics == 4  # the core topics of s1 and s2: four of s1's, by text
    assert [r.ktu for r in steady.topics] == [1.0] * 4
    assert [r.rbo for r in steady.topics] == pytest.approx([1.0] * 4, abs=1e-12)
    assert steady.mean_ktu == 1.0 and steady.mean_rbo == pytest.approx(1.0, abs=1e-12)
    assert all(r.common == DEPTH for r in steady.topics)
    # topics re-numbered: s1's 1 is s2's 11, matched by query text
    assert steady.topics[0].topic == {"s1": "1", "s2": "11"}
    assert steady.topics[0].topic_key == "solar power"

    flip = ranking_agreement(COLLECTION, system="flip", snapshots=["s1", "s2"])
    assert [r.ktu for r in flip.topics] == [-1.0] * 4
    assert flip.mean_ktu == -1.0
    back = ranking_agreement(COLLECTION, system="flip", snapshots=["s1", "s3"])  # s3 as s1 again
    assert back.n_topics == 3 and back.mean_ktu == 1.0


@pytest.mark.parametrize("depth, p", [(1000, 0.8), (10, 0.95), (5, 0.5)])
def test_ktu_and_rbo_equal_repro_eval(web: Web, depth: int, p: float) -> None:
    from tcdb.api import ranking_agreement

    checked = 0
    for system, (a, b) in [("noisy", ("s1", "s2")), ("noisy", ("s2", "s3")),
                           ("flip", ("s1", "s2")), ("steady", ("s1", "s3"))]:
        report = ranking_agreement(COLLECTION, system=system, snapshots=[a, b], depth=depth,
                                   rbo_p=p)
        core = [q for q in QUERIES if q in web.topics[a].values() and q in web.topics[b].values()]
        orig, rep = _repro_run(web, system, a, core), _repro_run(web, system, b, core)
        ktu = KTU(orig, rep, trim_thresh=depth, per_topic=True)
        # RBO to depth, never past the rankings (all DEPTH long here): the report's rbo_depth
        rbo_depth = min(depth, DEPTH)
        rbo = RBO(_repro_run(web, system, a, core), _repro_run(web, system, b, core), p=p,
                  depth=rbo_depth, pbar=False, per_topic=True)
        got = {r.topic_key: r for r in report.topics}
        assert sorted(got) == sorted(core)
        for q in core:
            assert got[q].ktu == pytest.approx(ktu[q], abs=1e-9, rel=0)
            assert got[q].rbo == pytest.approx(rbo[q], abs=1e-9, rel=0)
            assert got[q].rbo_depth == rbo_depth
            checked += 1
        assert report.mean_ktu == pytest.approx(
            KTU(orig, rep, trim_thresh=depth), abs=1e-9, rel=0)
        assert report.mean_rbo == pytest.approx(
            RBO(_repro_run(web, system, a, core), _repro_run(web, system, b, core), p=p,
                depth=rbo_depth, pbar=False, per_topic=False), abs=1e-9, rel=0)
    assert checked == 15
    noisy = ranking_agreement(COLLECTION, system="noisy", snapshots=["s1", "s2"], depth=depth,
                              rbo_p=p)
    assert -1 < noisy.mean_ktu < 1  # random rankings: neither equal nor reversed


def test_shorter_ranking_is_compared_on_its_length(web: Web) -> None:
    """`short` answers 15 documents in s2 and 20 in s1: KTU on the top 15 of both (repro_eval
    on the two cut lists), RBO on the rankings as they are."""
    from tcdb.api import ranking_agreement

    report = ranking_agreement(COLLECTION, system="short", snapshots=["s1", "s2"], rbo_p=0.9)
    row = report.topics[0]
    assert (row.n_first, row.n_later, row.n_compared) == (DEPTH, DEPTH - 5, DEPTH - 5)
    assert row.ktu == 1.0  # the same 15 documents in the same order
    q = row.topic_key
    full = _repro_run(web, "short", "s1", [q])
    cut = {q: OrderedDict(list(full[q].items())[:DEPTH - 5])}
    rbo = RBO(full, _repro_run(web, "short", "s2", [q]), p=0.9, depth=DEPTH, pbar=False,
              per_topic=True)
    assert row.rbo_depth == DEPTH
    assert row.rbo == pytest.approx(rbo[q], abs=1e-9, rel=0) and row.rbo < 1
    assert row.ktu == pytest.approx(
        KTU(cut, _repro_run(web, "short", "s2", [q]), per_topic=True)[q], abs=1e-9)


def test_wrong_input_names_the_option(web: Web, tmp_path: Path) -> None:
    from tcdb.api import ranking_agreement

    with pytest.raises(FieldError, match="exactly two snapshots"):
        ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2", "s3"])
    with pytest.raises(FieldError, match="^rbo_p: "):
        ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"], rbo_p=1.0)
    with pytest.raises(FieldError, match="^depth: "):
        ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"], depth=0)
    with pytest.raises(NotFoundError, match="no system 'bm25'.*steady"):
        ranking_agreement(COLLECTION, system="bm25", snapshots=["s1", "s2"])
    from tcdb.api import run_import
    from tests.builders import write_run_file

    rows = [(r.query_id, r.doc_id, r.score)
            for r in ir_measures.read_trec_run(str(web.runs["noisy"]["s2"]))]
    run_import(COLLECTION, "s2", [write_run_file(tmp_path / "more", "again", rows)],
               system="steady")
    with pytest.raises(ConflictError, match="2 runs in snapshot 's2' \\(again, steady-s2\\)"):
        ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"])


def test_topic_deltas_equal_ir_measures_on_the_files(web: Web) -> None:
    from tcdb.api import topic_deltas

    report = topic_deltas(COLLECTION, system="noisy", snapshots=["s1", "s2"], measure="nDCG@10",
                          pivot="steady")
    measure = ir_measures.parse_measure("nDCG@10")

    def per_topic(system: str, label: str) -> dict[str, float]:
        qrels = [ir_measures.Qrel(t, d, g) for t, d, g in web.qrels[label]]
        run = list(ir_measures.read_trec_run(str(web.runs[system][label])))
        return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}

    expected = {}
    for system in ("noisy", "steady"):
        s1, s2 = per_topic(system, "s1"), per_topic(system, "s2")
        expected[system] = {q: s2[web.topic_of("s2", q)] - s1[web.topic_of("s1", q)]
                            for q in QUERIES[:4]}
    assert report.n_topics == 4 and report.runs == {"s1": "noisy-s1", "s2": "noisy-s2"}
    got = {r.topic_key: r for r in report.topics}
    for q in QUERIES[:4]:
        assert got[q].delta == pytest.approx(expected["noisy"][q], abs=1e-9)
        assert got[q].pivot_delta == pytest.approx(expected["steady"][q], abs=1e-9)
    deltas = [r.delta for r in report.topics]
    assert deltas == sorted(deltas, reverse=True)
    assert report.improved + report.declined + report.unchanged == 4
    assert report.mean_delta == pytest.approx(sum(expected["noisy"].values()) / 4, abs=1e-9)
    with pytest.raises(NotFoundError, match="pivot 'nobody'"):
        topic_deltas(COLLECTION, system="noisy", snapshots=["s1", "s2"], measure="nDCG@10",
                     pivot="nobody")


def test_cli_prints_tables_and_json(web: Web, cli) -> None:
    code, out, err = cli("report", "ranking-agreement", COLLECTION, "--system", "flip",
                         "--snapshots", "s1", "s2", "--depth", "10", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["mean_ktu"] == -1.0 and report["depth"] == 10 and report["rbo_p"] == 0.8
    code, out, err = cli("report", "ranking-agreement", COLLECTION, "--system", "steady",
                         "--snapshots", "s1", "s3")
    assert code == 0, err
    assert "mean KTU 1.0000 over 3 topics" in out and "chess" not in out
    code, out, err = cli("report", "topic-deltas", COLLECTION, "--system", "noisy",
                         "--snapshots", "s2", "s3", "--measure", "AP", "--pivot", "steady")
    assert code == 0, err
    assert "s3 − s2 · 4 core topics · pivot steady" in out and "pivot Δ" in out
    code, out, err = cli("report", "topic-deltas", COLLECTION, "--system", "noisy",
                         "--snapshots", "s2", "s3", "--json")
    assert code == 0, err
    assert json.loads(out)["pivot"] is None
    code, _, err = cli("report", "ranking-agreement", COLLECTION, "--system", "steady",
                       "--snapshots", "s1")
    assert code != 0 and "exactly two snapshots" in err


def test_python_api_returns_frames(web: Web) -> None:
    from tcdb import api

    frame = api.ranking_agreement(COLLECTION, system="steady", snapshots=["s1", "s2"],
                                  depth=10).to_frame()
    assert list(frame["topic_a"]) == ["1", "2", "3", "4"]
    assert list(frame["topic_b"]) == ["11", "12", "13", "14"]
    assert frame["ktu"].tolist() == [1.0] * 4 and frame["rbo_depth"].tolist() == [10] * 4
    deltas = api.topic_deltas(COLLECTION, system="noisy", snapshots=("s1", "s2"), measure="AP",
                              pivot="steady").to_frame()
    assert len(deltas) == 4 and deltas["delta"].is_monotonic_decreasing
    assert set(deltas["topic_key"]) == set(QUERIES[:4])
    with pytest.raises(FieldError, match="^snapshots: name exactly two"):
        api.ranking_agreement(COLLECTION, system="steady", snapshots="s1")
