"""The persistence report from run files, against repro_eval 0.5.0's evaluators on the same files.

tcdb ingests the generated TREC qrels and run files of `tests.repro_eval_data` (Core17-like
original runs; re-implementations on another collection and on the same one), scores them
itself and reports persistence; the expected ARP, ER, ΔRI and p-values come from
`RplEvaluator` (another collection, unpaired t-test) and `RpdEvaluator` (the same collection,
paired t-test) run on the very files tcdb read. The runs have ties written out of trec_eval's
order, a topic a run does not answer and topics with no relevant document retrieved.

One convention is set on both sides: a judged topic a run does not answer counts 0 in tcdb
(`trec_eval -c`), while repro_eval leaves it out; the oracle's per-topic scores get that 0
(`tests.repro_eval_data.complete`) before its measures are called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from repro_eval.Evaluator import RpdEvaluator, RplEvaluator
from repro_eval.util import arp_scores

from tcdb.operations import Database
from tests.builders import write_documents, write_topics
from tests.repro_eval_data import (
    ADVANCED,
    BASELINE,
    CONSTELLATIONS,
    CORE17,
    CORE18,
    DOCS_PER_TOPIC,
    FILES,
    MEASURES,
    Anchors,
    complete,
    only_measures,
    write_anchors,
)

NAMES = list(MEASURES.values())  # ir_measures names, as repro_eval and tcdb both call them


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Anchors:
    return write_anchors(tmp_path_factory.mktemp("repro_eval_runs"))


def _ingest(tmp_path: Path, anchors: Anchors, label: str, collection: str) -> None:
    """Snapshot `label` of collection `collection` (core17/core18): documents and topics
    written here, the generated qrels file as it is."""
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    topics = CORE17 if collection == "core17" else CORE18
    docs = {f"{collection}-{t}-{i:03d}": f"document {i} of topic {t}"
            for t in topics for i in range(DOCS_PER_TOPIC)}
    folder = tmp_path / label
    source = LocalSource(write_documents(folder / "docs.trec", docs),
                         write_topics(folder / "topics.tsv", {t: f"topic {t}" for t in topics}),
                         anchors.folder / "qrels" / f"{collection}.txt")
    add_collection(Database(), "breuer", "doc_id", "query_id")
    ingest_snapshot(Database(), "breuer", label, source)


def _import(anchors: Anchors, label: str, runs: dict[str, str]) -> None:
    """system → run file name under runs/, imported into snapshot `label`."""
    from tcdb.api import run_import

    for system, name in runs.items():
        run_import("breuer", label, [anchors.folder / "runs" / name], system=system)


def _oracle(evaluator: Any) -> Any:
    """The evaluator's per-topic scores, a run's unanswered judged topics counted 0."""
    only_measures(evaluator)
    evaluator.trim()
    evaluator.evaluate()
    qrels_rep = getattr(evaluator, "qrels_rpl", evaluator.qrels_orig)
    evaluator.run_b_orig_score = complete(evaluator.run_b_orig_score, evaluator.qrels_orig)
    evaluator.run_a_orig_score = complete(evaluator.run_a_orig_score, evaluator.qrels_orig)
    evaluator.run_b_rep_score = complete(evaluator.run_b_rep_score, qrels_rep)
    evaluator.run_a_rep_score = complete(evaluator.run_a_rep_score, qrels_rep)
    return evaluator


def _paths(anchors: Anchors, kind: str, n: int) -> dict[str, str]:
    runs = anchors.folder / "runs"
    return {"run_b_orig_path": str(runs / f"input.{BASELINE}"),
            "run_a_orig_path": str(runs / f"input.{ADVANCED}"),
            "run_b_rep_path": str(runs / f"{kind}_{FILES[BASELINE]}_{n}"),
            "run_a_rep_path": str(runs / f"{kind}_{FILES[ADVANCED]}_{n}")}


def _check(report: Any, later: str, oracle: Any, p_values: dict[str, dict[str, float]],
           paired: bool) -> None:
    """The report's figures for `later` against the oracle's, every measure."""
    er, dri = oracle.er(), oracle.dri()
    arp = {role: (arp_scores(getattr(oracle, f"run_{role}_orig_score")),
                  arp_scores(getattr(oracle, f"run_{role}_rep_score"))) for role in "ab"}
    for name in NAMES:
        result = report.measures[name]
        assert result.skipped == []
        pivot, advanced = result.systems
        assert (pivot.system, pivot.is_pivot, advanced.system) == (BASELINE, True, ADVANCED)
        assert advanced.er[later] == pytest.approx(er[name], abs=1e-9)
        assert advanced.delta_ri[later] == pytest.approx(dri[name], abs=1e-9)
        assert (pivot.er[later], pivot.delta_ri[later]) == (None, None)  # 0/0
        for record, role, p_role in ((pivot, "b", "baseline"), (advanced, "a", "advanced")):
            first, again = arp[role]
            assert record.arp[report.snapshots[0]] == pytest.approx(first[name], abs=1e-12)
            assert record.arp[later] == pytest.approx(again[name], abs=1e-12)
            p = record.p_value_paired[later] if paired else record.p_value[later]
            assert p == pytest.approx(p_values[p_role][name], abs=1e-12)


def test_another_collection_equals_repl_evaluator(db: str, tmp_path: Path,
                                                  generated: Anchors) -> None:
    """Core17 originals, constellation N's runs on Core18 as snapshot core18-N: ER, ΔRI, ARP
    and the unpaired p-values are RplEvaluator's."""
    from tcdb.api import persistence

    _ingest(tmp_path, generated, "core17", "core17")
    _import(generated, "core17", {s: f"input.{s}" for s in FILES})
    later = [f"core18-{n}" for n in range(1, CONSTELLATIONS + 1)]
    for n, label in enumerate(later, 1):
        _ingest(tmp_path, generated, label, "core18")
        _import(generated, label, {s: f"rpd_{stem}_{n}" for s, stem in FILES.items()})
    report = persistence("breuer", snapshots=["core17", *later], pivot=BASELINE, measures=NAMES)
    assert report.topics.n_topics == {"core17": len(CORE17), **dict.fromkeys(later, len(CORE18))}
    qrels = generated.folder / "qrels"
    for n, label in enumerate(later, 1):
        oracle = _oracle(RplEvaluator(qrels_orig_path=str(qrels / "core17.txt"),
                                      qrels_rpl_path=str(qrels / "core18.txt"),
                                      **_paths(generated, "rpd", n)))
        _check(report, label, oracle, oracle.ttest(), paired=False)
    records = {r.system: r for r in report.measures["AP"].systems}
    assert records[ADVANCED].er["core18-1"] < 0 < records[ADVANCED].er["core18-4"]  # lost, kept


def test_same_collection_equals_rpd_evaluator(db: str, tmp_path: Path,
                                              generated: Anchors) -> None:
    """Constellation N's runs on Core17 itself as snapshot core17-N: ER, ΔRI, ARP and the
    paired p-values (the same topics) are RpdEvaluator's."""
    from tcdb.api import persistence

    _ingest(tmp_path, generated, "core17", "core17")
    _import(generated, "core17", {s: f"input.{s}" for s in FILES})
    later = [f"core17-{n}" for n in range(1, CONSTELLATIONS + 1)]
    for n, label in enumerate(later, 1):
        _ingest(tmp_path, generated, label, "core17")
        _import(generated, label, {s: f"rpl_{stem}_{n}" for s, stem in FILES.items()})
    report = persistence("breuer", snapshots=["core17", *later], pivot=BASELINE, measures=NAMES,
                         paired=True)
    qrels = generated.folder / "qrels" / "core17.txt"
    for n, label in enumerate(later, 1):
        oracle = _oracle(RpdEvaluator(qrels_orig_path=str(qrels), **_paths(generated, "rpl", n)))
        _check(report, label, oracle, oracle.ttest(), paired=True)
        for record in report.measures["AP"].systems:
            assert record.n_paired is not None and record.n_paired[label] == len(CORE17)
