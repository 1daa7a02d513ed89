"""The demo generator: deterministic, LongEval-shaped, and its planted behaviours really hold.

Everything is read back through the real readers (ir_datasets' LongEval layout via `IrdsSource`,
`read_run`, ir_measures) and measured with the same analysis code the reports use.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, nDCG

from tcdb.analysis.persistence import persistence_table
from tcdb.collections.runs.trec import read_run, write_run
from tcdb.collections.sources.ir_datasets_source import IrdsSource
from tcdb.demo.generate import DemoCollection, generate_demo
from tcdb.demo.longeval_files import longeval_web_layout

SMALL = {"n_documents": 4000, "n_topics": 50, "depth": 200}
TINY = {"n_documents": 1000, "n_topics": 10, "depth": 50}
SEED = 11


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoCollection:
    return generate_demo(tmp_path_factory.mktemp("demo"), SEED, **SMALL)


@pytest.fixture
def irds_home(demo: DemoCollection, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("IR_DATASETS_HOME", str(demo.ir_datasets_home))
    return demo.ir_datasets_home


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _qrels(demo: DemoCollection, label: str) -> list[ir_measures.Qrel]:
    return list(ir_measures.read_trec_qrels(str(demo.snapshot(label).qrels_path)))


def _per_topic(demo: DemoCollection, measure: object,
               qrels_by_label: dict[str, list[ir_measures.Qrel]] | None = None) -> pd.DataFrame:
    """Per-topic scores of every run: [snapshot, system, topic, value]; by default in every
    snapshot under its original qrels, else in the snapshots `qrels_by_label` names."""
    rows = []
    for snap in demo.snapshots:
        if qrels_by_label is not None and snap.label not in qrels_by_label:
            continue
        qrels = qrels_by_label[snap.label] if qrels_by_label else _qrels(demo, snap.label)
        for tag, path in snap.run_paths.items():
            run = list(ir_measures.read_trec_run(str(path)))
            rows.extend((snap.label, tag, m.query_id, m.value)
                        for m in ir_measures.iter_calc([measure], qrels, run))
    return pd.DataFrame(rows, columns=["snapshot", "system", "topic", "value"])


def _top(path: Path, k: int) -> dict[str, list[str]]:
    """topic → its top-k documents of a run file."""
    run = read_run(path)
    top: dict[str, list[str]] = defaultdict(list)
    for topic, doc, rank in zip(run.topics, run.docs, run.ranks.tolist(), strict=True):
        if rank <= k:
            top[topic].append(doc)
    return top


def test_same_seed_writes_identical_files_and_another_seed_does_not(tmp_path: Path) -> None:
    first = generate_demo(tmp_path / "first", SEED, **TINY)
    again = generate_demo(tmp_path / "again", SEED, **TINY)
    digests = _digests(first.out_dir)
    assert len(digests) > 40  # 15 snapshot folders, 30 runs, qrels, URL db, manifest
    assert digests == _digests(again.out_dir)
    assert again.churn == first.churn and again.topic_drift == first.topic_drift
    other = generate_demo(tmp_path / "other", SEED + 1, **TINY)
    run = "runs/2022-06/bm25.run"
    assert _digests(other.out_dir)[run] != digests[run]


def test_a_second_run_reuses_matching_files_untouched(tmp_path: Path) -> None:
    first = generate_demo(tmp_path / "demo", SEED, **TINY)
    assert not first.reused
    written = _digests(first.out_dir)
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "demo").rglob("*") if p.is_file()}
    cache = longeval_web_layout(first.ir_datasets_home).trec_dir("2022-06") / "metadata.pklz4"
    cache.write_bytes(b"what ir_datasets caches after an ingest")

    again = generate_demo(tmp_path / "demo", SEED, **TINY)
    assert again.reused
    assert all(p.stat().st_mtime_ns == m for p, m in mtimes.items())
    assert again.churn == first.churn and again.snapshots == first.snapshots
    topic, doc = next((q.query_id, q.doc_id) for q in _qrels(first, "2022-07"))
    assert again.judge(topic, doc) == first.judge(topic, doc)

    run = first.run_path("2022-06", "bm25")
    run.write_bytes(run.read_bytes().replace(b" bm25\n", b" bm25 \n", 1))  # edited by hand
    repaired = generate_demo(tmp_path / "demo", SEED, **TINY)
    assert not repaired.reused
    assert _digests(first.out_dir) == written  # rewritten: the same bytes, the cache gone
    assert not generate_demo(tmp_path / "demo", SEED, **TINY, reuse=False).reused
    assert not generate_demo(tmp_path / "demo", SEED, **{**TINY, "depth": 40}).reused


def test_layout_reads_back_through_ir_datasets(demo: DemoCollection, irds_home: Path) -> None:
    for snap in demo.snapshots:
        source = IrdsSource(snap.irds_id)
        docs = list(source.documents())
        assert len(docs) == snap.n_documents
        assert all(d.url and d.url.startswith("https://www.") for d in docs)
        assert all(d.doc_id.isdigit() for d in docs)
        topics = list(source.topics())
        assert len(topics) == snap.n_topics
        qrels = list(source.qrels() or [])
        assert len(qrels) == snap.n_judgments
        assert {q.grade for q in qrels} == {0, 1, 2}


def test_run_files_are_valid_and_byte_identical_to_write_run(
    demo: DemoCollection, tmp_path: Path
) -> None:
    for snap in demo.snapshots:
        assert set(snap.run_paths) == set(demo.planted)
        for tag, path in snap.run_paths.items():
            run = read_run(path)
            assert run.tag == tag
            per_topic = pd.Series(run.topics).value_counts()
            assert len(per_topic) == snap.n_topics
            assert (per_topic == demo.depth).all()
    path = demo.run_path("2022-07", "magic")
    run = read_run(path)
    rows = zip(run.topics, run.docs, run.ranks.tolist(), run.scores.tolist(), strict=True)
    write_run(tmp_path / "magic.run", rows, "magic")
    assert (tmp_path / "magic.run").read_bytes() == path.read_bytes()
    # scores strictly decrease with rank, so no evaluator can reorder a run on ties
    frame = run.to_frame()
    assert (frame.groupby("topic")["score"].diff().dropna() < 0).all()


def test_document_churn_is_as_designed(demo: DemoCollection, irds_home: Path) -> None:
    by_url = {
        snap.label: {d.url: (d.doc_id, d.text) for d in IrdsSource(snap.irds_id).documents()}
        for snap in demo.snapshots
    }
    labels = demo.labels
    assert demo.snapshots[0].n_documents == SMALL["n_documents"]
    for before, after in zip(labels, labels[1:], strict=False):
        old, new = by_url[before], by_url[after]
        survivors = old.keys() & new.keys()
        rewritten = {u for u in survivors if old[u][1] != new[u][1]}
        renumbered = {u for u in survivors - rewritten if old[u][0] != new[u][0]}
        churn = demo.churn[after]
        assert len(old.keys() - new.keys()) == churn.removed == round(0.06 * len(old))
        assert len(new.keys() - old.keys()) == churn.added == round(0.06 * len(old))
        assert len(rewritten) == churn.rewritten == round(0.10 * len(survivors))
        assert len(renumbered) == churn.renumbered > 0
        assert len(survivors) - len(rewritten) - len(renumbered) == churn.unchanged
        # a rewritten document keeps its URL but is re-crawled under a new id
        assert all(old[u][0] != new[u][0] for u in rewritten)
        # ids never name two different URLs
        ids = [doc_id for doc_id, _ in new.values()]
        assert len(set(ids)) == len(ids)


def test_topics_drift_and_are_renumbered(demo: DemoCollection, irds_home: Path) -> None:
    topics = {
        snap.label: {t.query: t.topic_id for t in IrdsSource(snap.irds_id).topics()}
        for snap in demo.snapshots
    }
    labels = demo.labels
    for before, after in zip(labels, labels[1:], strict=False):
        old, new = topics[before], topics[after]
        kept = old.keys() & new.keys()
        drift = demo.topic_drift[after]
        assert len(kept) == drift.kept > 0.9 * len(old)
        assert len(old.keys() - new.keys()) == drift.dropped > 0
        assert len(new.keys() - old.keys()) == drift.added > 0
        assert all(old[q] != new[q] for q in kept)  # same text, a new id
        assert not set(old.values()) & set(new.values())


def test_original_qrels_judge_exactly_the_contributing_pool(demo: DemoCollection) -> None:
    contributing = [s.tag for s in demo.systems if s.contributing]
    assert "magic" not in contributing and "bm25" in contributing
    for snap in demo.snapshots:
        pool: dict[str, set[str]] = defaultdict(set)
        for tag in contributing:
            for topic, docs in _top(snap.run_paths[tag], demo.pool_depth).items():
                pool[topic].update(docs)
        judged: dict[str, set[str]] = defaultdict(set)
        disagree = 0
        for qrel in _qrels(demo, snap.label):
            judged[qrel.query_id].add(qrel.doc_id)
            assert qrel.relevance == demo.judge(qrel.query_id, qrel.doc_id, snap.label)
            disagree += qrel.relevance != demo.truth(qrel.query_id, qrel.doc_id, snap.label)
        assert judged == pool
        rate = disagree / snap.n_judgments
        assert 0.02 < rate < 0.08  # the simulated assessor disagrees with the truth ~5 %


def test_judge_resolves_topics_and_documents_by_any_name(
    demo: DemoCollection, irds_home: Path
) -> None:
    first, later = demo.labels[0], demo.labels[-1]
    old_topics = {t.query: t.topic_id for t in IrdsSource(f"longeval-web/{first}").topics()}
    new_topics = {t.query: t.topic_id for t in IrdsSource(f"longeval-web/{later}").topics()}
    docs = {d.doc_id: d.url for d in IrdsSource(f"longeval-web/{later}").documents()}
    query = next(q for q in new_topics if q in old_topics)
    relevant = demo.relevant(later, new_topics[query])
    assert relevant and set(relevant.values()) <= {1, 2}
    for doc_id, grade in relevant.items():
        assert demo.truth(new_topics[query], doc_id) == grade
        assert demo.truth(query.upper(), docs[doc_id], later) == grade  # by text and URL
        assert demo.judge(new_topics[query], doc_id) == demo.judge(query, docs[doc_id], later)
    with pytest.raises(KeyError, match="unknown topic"):
        demo.judge("no such query text", next(iter(docs)))
    with pytest.raises(KeyError, match="unknown document"):
        demo.judge(query, "https://nowhere.example/")
    with pytest.raises(KeyError, match="unknown snapshot"):
        demo.judge(query, next(iter(docs)), "2030-01")


@pytest.mark.parametrize("measure", [nDCG @ 10, AP], ids=str)
def test_planted_persistence_is_recovered(demo: DemoCollection, measure: object) -> None:
    table = persistence_table(_per_topic(demo, measure), demo.labels, demo.pivot)
    er = {row["system"]: row["er"] for row in table}
    assert table[0]["system"] == "bm25" and table[0]["is_pivot"]
    planted = {v: k for k, v in demo.planted.items() if v != "noisy"}
    for later in demo.labels[1:]:
        assert er[planted["decaying"]][later] < 0.8
        assert 0.8 <= er[planted["persistent"]][later] <= 1.2
        assert er[planted["improving"]][later] > 1.2


def test_magical_run_finds_relevant_documents_the_pools_never_saw(
    demo: DemoCollection,
) -> None:
    label = demo.labels[0]
    snap = demo.snapshot(label)
    judged: dict[str, set[str]] = defaultdict(set)
    for qrel in _qrels(demo, label):
        judged[qrel.query_id].add(qrel.doc_id)

    def unjudged_relevant(tag: str) -> int:
        return sum(
            demo.truth(topic, doc, label) > 0
            for topic, docs in _top(snap.run_paths[tag], 50).items()
            for doc in docs
            if doc not in judged[topic]
        )

    magic = unjudged_relevant("magic")
    assert magic > 3 * snap.n_topics  # several per topic
    assert magic > 5 * unjudged_relevant(demo.pivot)

    # the demo's next step: a depth-50 remainder pool over the non-contributing runs, judged by
    # the simulated assessor, gives pooled qrels; expanded = original ∪ pooled
    pooled: list[ir_measures.Qrel] = []
    for system in demo.systems:
        if system.contributing:
            continue
        for topic, docs in _top(snap.run_paths[system.tag], 50).items():
            for doc in docs:
                if doc not in judged[topic]:
                    judged[topic].add(doc)
                    pooled.append(ir_measures.Qrel(topic, doc, demo.judge(topic, doc, label)))
    expanded = _qrels(demo, label) + pooled

    def ranks(qrels: list[ir_measures.Qrel]) -> pd.Series:
        per_topic = _per_topic(demo, AP, {label: qrels})
        means = per_topic.groupby("system")["value"].mean()
        return means.rank(ascending=False)

    before, after = ranks(_qrels(demo, label)), ranks(expanded)
    assert before["magic"] >= 5
    assert after["magic"] <= 2
    assert before["magic"] - after["magic"] == max(before - after)


def test_manifest_records_what_was_generated(demo: DemoCollection) -> None:
    manifest = json.loads(demo.manifest_path.read_text(encoding="utf-8"))
    assert manifest["collection"] == "longeval-web"
    assert manifest["doc_identity"] == "url" and manifest["topic_identity"] == "text"
    assert manifest["parameters"]["seed"] == SEED
    assert {s["tag"]: s["planted"] for s in manifest["systems"]} == demo.planted
    assert [s["label"] for s in manifest["snapshots"]] == ["2022-06", "2022-07", "2022-09"]
    for snap in manifest["snapshots"]:
        for path in snap["runs"].values():
            assert (demo.out_dir / path).is_file()
    assert manifest["churn"]["2022-07"]["removed"] == demo.churn["2022-07"].removed


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n_documents": 50}, "n_documents"),
        ({"n_topics": 1}, "n_topics"),
        ({"depth": 5000}, "depth"),
        ({"pool_depth": 0}, "pool_depth"),
        ({"removed": 0.9}, "rates"),
    ],
)
def test_bad_parameters_are_refused_before_writing(
    tmp_path: Path, kwargs: dict[str, float], message: str
) -> None:
    params = {**TINY, **kwargs}
    with pytest.raises(ValueError, match=message):
        generate_demo(tmp_path / "demo", SEED, **params)  # type: ignore[arg-type]
    assert not (tmp_path / "demo").exists()

