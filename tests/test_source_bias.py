"""Source bias (Cocktail): labels and twins at ingest, qrels per source, Relative Δ per run.

A tiny corpus of human documents and their LLM twins, in BEIR files with the quirks real ones
have (a title, a numeric id, a twin named by a JSON number, BEIR's `metadata`, a blank line, an
LLM twin whose text equals its original's — a refused rewrite), judged on the originals only,
and three runs whose Relative Δ is known by hand: one ranks every LLM twin first, one every
human original first, one is indifferent. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pytest
from scipy import stats
from sqlalchemy import func, select, text

from tcdb.catalog.collections import add_collection
from tcdb.collections.sources.snapshot import open_source
from tcdb.errors import ConflictError, InputError
from tcdb.ingest import ingest_snapshot
from tcdb.operations import Database
from tcdb.schema import Snapshot, SnapshotDocument
from tcdb.storage.db import get_engine
from tests.source_bias_corpus import (
    HUMAN_QRELS,
    LLM_QRELS,
    RUNS,
    write_corpus,
)


def _labels(label: str = "s1") -> dict[str, tuple[str | None, str | None, int]]:
    with Database().engine().connect() as conn:
        rows = conn.execute(
            select(SnapshotDocument.external_id, SnapshotDocument.source_label,
                   SnapshotDocument.twin_of, SnapshotDocument.content_id)
            .join(Snapshot, Snapshot.id == SnapshotDocument.snapshot_id)
            .where(Snapshot.label == label)).all()
    return {e: (s, t, c) for e, s, t, c in rows}


def test_an_identical_twin_keeps_its_own_label(twins: Path) -> None:
    labels = _labels()
    assert {e: (s, t) for e, (s, t, _) in labels.items()} == {
        "h1": ("human", None), "l1": ("llm", "h1"), "h2": ("human", None),
        "l2": ("llm", "h2"), "7": ("human", None), "7-llm": ("llm", "7")}
    # The refused rewrite shares its original's text version, not its label.
    assert labels["l2"][2] == labels["h2"][2]
    assert labels["l1"][2] != labels["h1"][2]


def test_relative_delta_is_the_one_known_by_hand(twins: Path) -> None:
    from tcdb import api

    report = api.source_bias("cocktail", "s1", measures=["nDCG@1"], bootstrap=200)
    assert report.documents == {"human": 3, "llm": 3}
    assert report.sets["llm"].model_dump() == {"name": None, "n_judgments": 3, "n_copied": 2}
    runs = {r.run: r.model_dump() for r in report.measures["nDCG@1"].runs}
    # every LLM twin first: human 0, llm 1 → (0 − 1) / 0.5 × 100
    assert (runs["llm-first"]["human"], runs["llm-first"]["llm"]) == (0.0, 1.0)
    assert runs["llm-first"]["relative_delta"] == -200.0
    assert (runs["human-first"]["human"], runs["human-first"]["llm"]) == (1.0, 0.0)
    assert runs["human-first"]["relative_delta"] == 200.0
    assert (runs["indifferent"]["human"], runs["indifferent"]["llm"]) == (0.5, 0.5)
    assert runs["indifferent"]["relative_delta"] == 0.0
    assert [t["delta"] for t in runs["indifferent"]["per_topic"]] == [200.0, -200.0]
    assert runs["indifferent"]["ci_low"] <= 0.0 <= runs["indifferent"]["ci_high"]
    assert runs["llm-first"]["ci_low"] == runs["llm-first"]["ci_high"] == -200.0
    average = report.measures["nDCG@1"].average
    assert (average.n_runs, average.human, average.llm,
            average.relative_delta) == (3, 0.5, 0.5, 0.0)
    carried = [c.model_dump() for c in report.measures["nDCG@1"].first_stage]
    assert carried == [{"run": "indifferent", "first_stage": "llm-first",
                        "delta_first_stage": -200.0, "delta": 0.0, "change": 200.0}]


def test_scores_equal_ir_measures_on_hand_written_qrels(twins: Path) -> None:
    """nDCG@3 per source against ir_measures on the qrels written out by hand, and Relative Δ
    by the paper's formula on those means."""
    from tcdb import api

    report = api.source_bias("cocktail", "s1", measures=["nDCG@3"], bootstrap=0)
    measure = ir_measures.parse_measure("nDCG@3")
    for row in (r.model_dump() for r in report.measures["nDCG@3"].runs):
        run = {t: {d: 10.0 - r for r, d in enumerate(docs)}
               for t, docs in RUNS[row["run"]].items()}
        human = ir_measures.calc_aggregate([measure], HUMAN_QRELS, run)[measure]
        llm = ir_measures.calc_aggregate([measure], LLM_QRELS, run)[measure]
        assert row["human"] == pytest.approx(human, abs=1e-12)
        assert row["llm"] == pytest.approx(llm, abs=1e-12)
        assert row["relative_delta"] == pytest.approx(
            (human - llm) / ((human + llm) / 2) * 100, abs=1e-9)
        per_topic_h = [t["human"] for t in row["per_topic"]]
        per_topic_l = [t["llm"] for t in row["per_topic"]]
        expected_p = stats.ttest_rel(per_topic_h, per_topic_l).pvalue
        assert row["p_t"] == (None if math.isnan(expected_p) else pytest.approx(expected_p))


def test_qrels_by_source_are_derived_sets_with_lineage(twins: Path, cli) -> None:
    from tcdb.judging.qrels import list_qrels
    from tcdb.queries import qrels_frame

    code, out, err = cli("qrels", "by-source", "cocktail", "s1", "src", "--json")
    assert code == 0, err
    rows = {r["source"]: r for r in json.loads(out)["sets"]}
    assert {s: (r["n_judgments"], r["n_copied"]) for s, r in rows.items()} == {
        "human": (3, 0), "llm": (3, 2), "mixed": (6, 2)}
    sets = {q["name"]: q for q in list_qrels(Database(), "cocktail", "s1")}
    assert sets["src-llm"]["kind"] == "derived" and sets["src-llm"]["parent"] == "original"
    assert sets["src-llm"]["method"] == "by-source:llm+twins"
    assert "2 of its 3 judgments copied" in sets["src-llm"]["description"]
    with Database().engine().connect() as conn:
        ids = dict(conn.execute(text("SELECT name, id FROM qrels_set")).tuples().all())
        for name, expected in (("src-human", HUMAN_QRELS), ("src-llm", LLM_QRELS)):
            frame = qrels_frame(conn, ids[name])
            got: dict[str, dict[str, int]] = {}
            for t, d, g in frame.itertuples(index=False):
                got.setdefault(t, {})[d] = g
            assert got == expected
    assert cli("qrels", "by-source", "cocktail", "s1", "src")[0] == 0  # the same again: no-op
    code, _, err = cli("qrels", "by-source", "cocktail", "s1", "src", "--no-twins")
    assert code != 0 and "immutable" in err


def test_saved_sets_give_the_same_report_from_stored_scores(twins: Path) -> None:
    from tcdb import api

    def report(**save: str) -> Any:
        return api.source_bias("cocktail", "s1", measures=["nDCG@3", "RR"], bootstrap=100,
                               **save)

    fresh, saved, again = report(), report(save="sb"), report(save="sb")
    assert saved.sets["human"].name == "sb-human"
    with Database().engine().connect() as conn:
        n_scores = conn.execute(text("SELECT COUNT(*) FROM score")).scalar_one()
    assert n_scores == 3 * 3 * 2 * 2  # runs × sets × measures × topics
    for result in (saved, again):
        assert result.measures == fresh.measures


def test_report_cli_text_and_json(twins: Path, cli) -> None:
    code, out, err = cli("report", "source-bias", "cocktail", "s1", "-m", "nDCG@1",
                         "--bootstrap", "50", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [r["relative_delta"] for r in report["measures"]["nDCG@1"]["runs"]] == [
        200.0, 0.0, -200.0]  # human-first, indifferent, llm-first
    code, out, err = cli("report", "source-bias", "cocktail", "s1", "-m", "nDCG@1",
                         "--run", "llm-first", "--run", "human-first")
    assert code == 0, err
    assert "-200.00" in out and "200.00" in out and "indifferent" not in out
    code, _, err = cli("report", "source-bias", "cocktail", "s1", "-m", "nDCG@1",
                       "--llm", "gpt")
    assert code != 0 and "no document is labelled 'gpt'" in err


def test_side_file_labels_trec_documents_and_diff_counts_per_source(db: str,
                                                                    tmp_path: Path) -> None:
    from tcdb.api import snapshot_diff

    docs = {"h1": "cats purr", "l1": "cats purr", "h2": "dogs bark", "x": "unlabelled"}
    trec = tmp_path / "docs.trec"
    trec.write_text("".join(f"<DOC>\n<DOCNO> {d} </DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                            for d, t in docs.items()), encoding="utf-8")
    labels = tmp_path / "labels.tsv"
    labels.write_text("doc_id\tsource\ttwin_of\n# who wrote what\n\nh1\thuman\nl1\tllm\th1\r\n"
                      "h2\thuman\t\n", encoding="utf-8")
    add_collection(Database(), "side")
    report = ingest_snapshot(Database(), "side", "a", open_source(docs=trec, labels=labels))
    assert report.n_by_source == {"human": 2, "llm": 1, "unlabelled": 1}
    assert {e: (s, t) for e, (s, t, _) in _labels("a").items()} == {
        "h1": ("human", None), "l1": ("llm", "h1"), "h2": ("human", None), "x": (None, None)}
    # b: h2 is rewritten by an LLM now (relabelled), l1 removed, a new LLM document
    (tmp_path / "b").mkdir()
    trec_b = tmp_path / "b" / "docs.trec"
    docs_b = {"h1": "cats purr", "h2": "dogs bark", "x": "unlabelled", "l3": "new"}
    trec_b.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                              for d, t in docs_b.items()), encoding="utf-8")
    labels_b = tmp_path / "b" / "labels.tsv"
    labels_b.write_text("h1\thuman\nh2\tllm\nl3\tllm\th1\n", encoding="utf-8")
    ingest_snapshot(Database(), "side", "b", open_source(docs=trec_b, labels=labels_b))
    diff = snapshot_diff("side", ["a", "b"])
    assert {label: counts.model_dump() for label, counts in diff.sources.items()} == {
        "human": {"added": 0, "removed": 0, "changed": 0, "unchanged": 1, "relabelled": 0,
                  "before": 2, "after": 1},
        "llm": {"added": 1, "removed": 1, "changed": 0, "unchanged": 1, "relabelled": 1,
                "before": 1, "after": 2},
        "unlabelled": {"added": 0, "removed": 0, "changed": 0, "unchanged": 1,
                       "relabelled": 0, "before": 1, "after": 1}}


def _nothing_written() -> None:
    with Database().engine().connect() as conn:
        members = conn.execute(select(func.count()).select_from(SnapshotDocument)).scalar_one()
        snaps = conn.execute(select(func.count()).select_from(Snapshot)).scalar_one()
    assert (members, snaps) == (0, 0)


@pytest.mark.parametrize(("corpus", "labels", "reason"), [
    ([{"_id": "a", "text": "x", "source": "llm", "twin_of": "gone"}], None,
     "document 'a' is the twin of 'gone', which is not in snapshot 's'"),
    ([{"_id": "a", "text": "x", "source": "llm", "twin_of": "a"}], None, "names itself"),
    ([{"_id": "a", "text": "x", "source": "l" * 33}], None, "longer than 32 characters"),
    ([{"_id": "a", "text": "x", "twin_of": ["b"]}], None, "twin_of is not a document id"),
    ([{"_id": "a", "text": "x"}], "a\thuman\nb\tllm\ta\n",
     "labels.tsv:2: document 'b' is not in"),
    ([{"_id": "a", "text": "x", "source": "human"}], "a\tllm\n",
     "labels.tsv:1: document 'a' is labelled 'llm' here but 'human' by its own fields"),
    ([{"_id": "a", "text": "x"}], "a\thuman\na\tllm\n", "labels.tsv:2: document 'a' labelled "
     "twice"),
    ([{"_id": "a", "text": "x"}], "a human\n", "labels.tsv:1: expected doc_id<TAB>source"),
    ([{"_id": "a", "text": "x", "source": "human"}, {"_id": "a", "text": "x", "source": "llm"}],
     None, "document id 'a' occurs twice in the snapshot with different texts (or source "
     "labels)"),
])
def test_bad_labels_write_nothing(db: str, tmp_path: Path, corpus: list[dict[str, object]],
                                  labels: str | None, reason: str) -> None:
    folder = write_corpus(tmp_path, corpus)
    label_file = None
    if labels is not None:
        label_file = tmp_path / "labels.tsv"
        label_file.write_text(labels, encoding="utf-8")
    add_collection(Database(), "bad")
    with pytest.raises(InputError) as caught:
        ingest_snapshot(Database(),
                        "bad", "s", open_source(docs=folder / "corpus.jsonl", labels=label_file))
    assert reason in str(caught.value)
    _nothing_written()


def test_a_stored_set_with_other_judgments_is_refused(twins: Path) -> None:
    from tcdb import api

    api.source_bias("cocktail", "s1", measures=["nDCG@1"], bootstrap=0, save="x")
    with pytest.raises(ConflictError):
        api.source_bias("cocktail", "s1", measures=["nDCG@1"], bootstrap=0, save="x",
                        twins=False)


def test_relative_delta_and_correlation_are_the_papers_and_scipys() -> None:
    from tcdb.analysis.source_bias import bias_correlation, relative_delta, run_bias

    assert float(relative_delta(0.6, 0.4)) == pytest.approx(40.0)
    assert math.isnan(float(relative_delta(0.0, 0.0)))
    effectiveness, deltas = [0.2, 0.4, 0.5, 0.7], [10.0, -5.0, -12.0, -30.0]
    got = bias_correlation(effectiveness, deltas)
    expected = stats.pearsonr(effectiveness, deltas)
    assert got["r"] == pytest.approx(expected.statistic) and got["n_runs"] == 4
    assert got["p"] == pytest.approx(expected.pvalue)
    assert bias_correlation([0.1, 0.2], [1.0, 2.0])["r"] is None
    rng = np.random.default_rng(1)
    human, llm = rng.random(40), rng.random(40)
    bias = run_bias(human, llm, n_samples=500)
    assert bias["ci_low"] <= bias["relative_delta"] <= bias["ci_high"]
    assert bias["p_wilcoxon"] == pytest.approx(stats.wilcoxon(human, llm).pvalue)


def test_the_migration_moves_labels_from_versions_to_memberships(db: str) -> None:
    """0010 moves `content.source_label` onto every membership of the version, and back."""
    from tcdb.storage import migrate
    from tcdb.storage.guard import unguarded

    migrate.downgrade("0009", db)
    with unguarded(), get_engine(db).begin() as conn:
        conn.execute(text("INSERT INTO content (id, hash, length, text, source_label) VALUES "
                          "(1, :a, 3, 'abc', 'llm'), (2, :b, 3, 'def', NULL)"),
                     {"a": b"\x01" * 16, "b": b"\x02" * 16})
        conn.execute(text("INSERT INTO snapshot_document (snapshot_id, document_id, "
                          "external_id, content_id) VALUES (1, 1, 'a', 1), (2, 1, 'a', 1), "
                          "(1, 2, 'b', 2)"))
    migrate.upgrade(db)
    with unguarded(), get_engine(db).connect() as conn:
        rows = conn.execute(text("SELECT snapshot_id, external_id, source_label, twin_of FROM "
                                 "snapshot_document ORDER BY snapshot_id, external_id")).all()
    assert [tuple(r) for r in rows] == [(1, "a", "llm", None), (1, "b", None, None),
                                        (2, "a", "llm", None)]
    migrate.downgrade("0009", db)
    with unguarded(), get_engine(db).connect() as conn:
        labels = conn.execute(text("SELECT id, source_label FROM content ORDER BY id")).all()
    assert [tuple(r) for r in labels] == [(1, "llm"), (2, None)]
    migrate.upgrade(db)


def test_api_frames_and_the_average_across_collections(twins: Path, tmp_path: Path,
                                                        cli) -> None:
    from tcdb import api
    from tcdb.api import run_import

    frame = api.source_bias("cocktail", "s1", measures=["nDCG@1"], bootstrap=0).to_frame()
    assert list(frame["run"]) == ["human-first", "indifferent", "llm-first"]
    assert list(frame["relative_delta"]) == [200.0, 0.0, -200.0]
    assert frame["first_stage"].isna().tolist() == [True, False, True]
    assert frame["first_stage"][1] == "llm-first"
    docs = api.documents_by_source("cocktail").to_frame()
    assert docs.to_dict("records") == [{"snapshot": "s1", "source": "human", "documents": 3},
                                       {"snapshot": "s1", "source": "llm", "documents": 3}]
    # A second collection where only the LLM-first run is run: averages per collection, then
    # across them (Cocktail's Table 3), and per run tag across the collections it ran on.
    folder = write_corpus(tmp_path / "second")
    add_collection(Database(), "other")
    ingest_snapshot(Database(), "other", "t", open_source(docs=folder / "corpus.jsonl",
                                              topics=folder / "queries.jsonl",
                                              qrels=folder / "qrels" / "test.tsv"))
    run_import("other", "t", [tmp_path / "runs" / "llm-first.run"])
    code, out, err = cli("report", "source-bias", "cocktail", "s1", "-m", "nDCG@1",
                         "--bootstrap", "0", "--with", "other/t", "--json")
    assert code == 0, err
    across = json.loads(out)["across"]["nDCG@1"]
    assert [c["relative_delta"] for c in across["collections"]] == [0.0, -200.0]
    assert across["relative_delta"] == -100.0
    assert {r["run"]: (r["n_collections"], r["relative_delta"]) for r in across["runs"]} == {
        "human-first": (1, 200.0), "indifferent": (1, 0.0), "llm-first": (2, -200.0)}
