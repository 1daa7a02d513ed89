"""`tcdb report compare` on SQLite and PostgreSQL: p-values equal scipy's on the same per-topic
vectors, and the outcome breakdown is checked on a hand-built one-relevant-per-topic example
whose ranks follow trec_eval's order (score descending, then document id descending)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy import stats

from tcdb.errors import InputError, NotFoundError
from tcdb.operations import Database
from tests.builders import build_snapshot, write_run_file

pytestmark = pytest.mark.slow

TOPICS = {str(t): f"query {t}" for t in range(1, 17)}
DOCS = {f"d{i}": f"text {i}" for i in range(30)}


@pytest.fixture
def graded(db: str, tmp_path: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Sixteen graded topics and three runs (run `c` skips topic 16); returns the runs."""
    from tcdb.api import run_import

    rng = random.Random(5)
    qrels = [(t, d, rng.choice([0, 1, 2])) for t in TOPICS for d in rng.sample(sorted(DOCS), 8)]
    qrels += [(t, "d0", 2) for t in TOPICS if not any(q[0] == t and q[1] == "d0" for q in qrels)]
    build_snapshot(tmp_path, "c", "s", DOCS, TOPICS, qrels)
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for tag in ("a", "b", "c"):
        topics = [t for t in TOPICS if not (tag == "c" and t == "16")]
        run = {t: {d: float(20 - i) for i, d in enumerate(rng.sample(sorted(DOCS), 15))}
               for t in topics}
        rows = [(t, d, s) for t, docs in run.items() for d, s in docs.items()]
        run_import("c", "s", [write_run_file(tmp_path / "runs", tag, rows)], system=f"sys-{tag}")
        runs[tag] = run
    runs["qrels"] = {}  # type: ignore[assignment]
    for t, d, g in qrels:
        runs["qrels"].setdefault(t, {})[d] = g  # type: ignore[index]
    return runs


def _vectors(graded: dict, measure: str) -> dict[str, list[float]]:
    """Per-topic scores by ir_measures on the same data, topics in external-id order, 0 if
    unanswered (trec_eval -c)."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    order = sorted(TOPICS)
    out = {}
    for tag in ("a", "b", "c"):
        values = {m.query_id: m.value for m in
                  ir_measures.iter_calc([parsed], graded["qrels"], graded[tag])}
        out[tag] = [float(values.get(t, 0.0)) for t in order]
    return out


def test_p_values_equal_scipy_on_the_same_vectors(graded: dict) -> None:
    from tcdb import api

    report = api.compare("c", "s", qrels="original", runs=["a", "b", "c"], measure="nDCG@10",
                         correction="none")
    vectors = _vectors(graded, "nDCG@10")
    assert report.n_topics == 16 and report.measure == "nDCG@10"
    assert [(r.run, r.system) for r in report.runs] == [
        ("a", "sys-a"), ("b", "sys-b"), ("c", "sys-c")]
    assert [(p.run_a, p.run_b) for p in report.pairs] == [("a", "b"), ("a", "c"),
                                                                   ("b", "c")]
    for pair in report.pairs:
        x, y = vectors[pair.run_a], vectors[pair.run_b]
        assert pair.mean_a == pytest.approx(sum(x) / 16, abs=1e-12)
        assert pair.p_t == pytest.approx(stats.ttest_rel(x, y).pvalue, abs=1e-12)
        assert pair.p_wilcoxon == pytest.approx(stats.wilcoxon(x, y).pvalue, abs=1e-12)
        assert pair.p_ranksum == pytest.approx(stats.ranksums(x, y).pvalue, abs=1e-12)
        wins = sum(a > b for a, b in zip(x, y, strict=True))
        losses = sum(a < b for a, b in zip(x, y, strict=True))
        assert (pair.wins, pair.losses) == (wins, losses)
        assert pair.p_sign == pytest.approx(stats.binomtest(wins, wins + losses).pvalue,
                                               abs=1e-12)
        assert pair.p_t_corrected == pair.p_t
    bonferroni = api.compare("c", "s", qrels="original", runs=["a", "b", "c"], measure="nDCG@10",
                             correction="bonferroni")
    for plain, corrected in zip(report.pairs, bonferroni.pairs, strict=True):
        assert corrected.p_t_corrected == pytest.approx(min(1.0, 3 * plain.p_t))
    assert report.outcomes.applicable is False
    assert "more than one relevant document" in report.outcomes.reason


def test_cli_json_equals_the_report_and_the_table_names_the_correction(graded: dict,
                                                                       cli) -> None:
    from tcdb import api

    code, out, err = cli("report", "compare", "c", "s", "--qrels", "original", "--run", "a",
                         "--run", "b", "--measure", "AP", "--correction", "holm", "--json")
    assert code == 0, err
    expected = api.compare("c", "s", qrels="original", runs=["a", "b"], measure="AP",
                           correction="holm")
    assert json.loads(out) == expected.to_data()
    code, out, err = cli("report", "compare", "c", "s", "--run", "a", "--run", "b", "--run", "c",
                         "--measure", "AP")
    assert code == 0, err
    assert "holm" in out and "no outcome breakdown" in out


def test_cli_bootstrap_prints_the_intervals(graded: dict, cli) -> None:
    """`--bootstrap N --seed S`: each run's mean and each pair's difference with the report's
    95 % interval, printed in the terminal table; the JSON carries the same figures."""
    from tcdb import api

    args = ("report", "compare", "c", "s", "--run", "a", "--run", "b", "--measure", "AP",
            "--bootstrap", "500", "--seed", "7")
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    expected = api.compare("c", "s", qrels="original", runs=["a", "b"], measure="AP",
                           bootstrap=500, seed=7)
    assert json.loads(out) == expected.to_data()
    assert expected.runs[0].ci_low <= expected.runs[0].mean
    code, out, err = cli(*args)
    assert code == 0, err
    assert "95 % bootstrap intervals (500 samples of the topics, seed 7)" in out
    assert "A − B 95 % low" in out and "A − B 95 % high" in out
    for run in expected.runs:
        assert f"{run.ci_low:.4f}" in out and f"{run.ci_high:.4f}" in out
    pair = expected.pairs[0]
    assert f"{pair.diff_ci_low:.4f}" in out and f"{pair.diff_ci_high:.4f}" in out
    code, out, _ = cli("report", "compare", "c", "s", "--run", "a", "--run", "b", "--measure",
                       "AP")
    assert code == 0 and "bootstrap" not in out and "A − B 95 % low" not in out
    code, _, err = cli(*args[:-4], "--bootstrap", "-1")
    assert code == 1 and "--bootstrap" in err


# --- outcome breakdown: one relevant document per topic ---------------------------------------

RELEVANT = {f"t{i}": f"r{i}" for i in range(1, 7)}
OUTCOME_DOCS = {**{d: d for d in RELEVANT.values()}, **{f"n{i}": f"n{i}" for i in range(1, 12)},
                "z1": "z1", "z2": "z2"}
# (topic, doc, rank as written in the file, score): file ranks are ignored, as by trec_eval
RUN_A = [("t1", "r1", 1, 10.0), ("t1", "n1", 2, 9.0),
         ("t2", "n1", 1, 10.0), ("t2", "r2", 2, 9.0),
         ("t3", "n1", 1, 10.0), ("t3", "n2", 2, 9.0),
         ("t4", "n1", 1, 10.0),
         *[("t5", f"n{i}", i, 21.0 - i) for i in range(1, 12)], ("t5", "r5", 12, 5.0),
         ("t6", "r6", 1, 3.0), ("t6", "n2", 2, 1.0)]
RUN_B = [("t1", "r1", 1, 10.0), ("t1", "n2", 2, 10.0), ("t1", "zzz-unknown", 3, 11.0),
         ("t2", "n3", 1, 5.0),
         ("t3", "r3", 1, 4.0),
         ("t4", "n1", 1, 10.0),
         ("t5", "r5", 1, 2.0), ("t5", "z1", 2, 2.0),
         ("t6", "r6", 1, 3.0), ("t6", "z1", 2, 3.0), ("t6", "z2", 3, 3.0)]
# trec_eval order: B/t1 zzz-unknown (11) then the tie at 10 by doc id desc, r1 > n2 → rank 2;
# B/t5 z1 > r5 → 2; B/t6 z2 > z1 > r6 → 3; A/t5 → 12, beyond k = 10.
RANKS_A = {"t1": 1, "t2": 2, "t5": 12, "t6": 1}
RANKS_B = {"t1": 2, "t3": 1, "t5": 2, "t6": 3}


@pytest.fixture
def one_relevant(db: str, tmp_path: Path) -> Path:
    from tcdb.api import run_import

    qrels = [(t, d, 1) for t, d in RELEVANT.items()] + [("t1", "n1", 0), ("t2", "n5", 0)]
    build_snapshot(tmp_path, "marco", "dev", OUTCOME_DOCS, {t: f"q {t}" for t in RELEVANT},
                   qrels)
    run_import("marco", "dev", [write_run_file(tmp_path / "runs", "A", RUN_A)])
    run_import("marco", "dev", [write_run_file(tmp_path / "runs", "B", RUN_B)],
               allow_unknown_docs=True)
    return tmp_path


def test_relevant_ranks_follow_trec_eval_order(one_relevant: Path) -> None:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import relevant_ranks, topic_ids
    from tcdb.runs import get_runs
    from tcdb.scoring.scores import score_table

    with Database().session() as session:
        snap = get_snapshot(session, "marco", "dev")
        qset = get_qrels_set(session, snap, "original")
        ranks = {}
        names = {v: k for k, v in topic_ids(session, snap.id).items()}
        for run in get_runs(session, snap):
            found = relevant_ranks(session.connection(), run.id, qset.id)
            ranks[run.tag] = {names[t]: r for t, r in found.items()}
    assert ranks == {"A": RANKS_A, "B": RANKS_B}
    # the same ranks as ir_measures' reciprocal rank on the stored runs (unresolved docs too)
    rr = score_table(Database(), "marco", "dev", "original", ["RR"], per_topic=True)
    for row in rr.itertuples():
        expected = ranks[row.run].get(row.topic)
        assert row.value == pytest.approx(1 / expected if expected else 0.0)


def test_outcome_breakdown_on_a_hand_built_example(one_relevant: Path, cli) -> None:
    from tcdb import api

    report = api.compare("marco", "dev", qrels="original", runs=["A", "B"], measure="RR@10", k=10)
    outcomes = report.outcomes
    assert outcomes.applicable is True and outcomes.k == 10
    (pair,) = outcomes.pairs
    assert (pair.run_a, pair.run_b) == ("A", "B")
    assert pair.n_topics == 6
    assert pair.counts == {"neither": 1, "only_a": 1, "only_b": 2, "both": 2}
    assert pair.shares["only_b"] == pytest.approx(2 / 6)
    both = pair.both  # t1 (A 1, B 2) and t6 (A 1, B 3)
    assert both.n == 2
    assert (both.mean_esl_a, both.mean_esl_b) == (1.0, 2.5)  # ESL = rank
    assert both.p_esl == pytest.approx(stats.ttest_rel([1, 1], [2, 3]).pvalue)
    assert both.mrr_a == 1.0 and both.mrr_b == pytest.approx((1 / 2 + 1 / 3) / 2)
    assert both.p_rr == pytest.approx(stats.ttest_rel([1, 1], [1 / 2, 1 / 3]).pvalue)
    assert pair.only_one.model_dump() == {"n_only_a": 1, "n_only_b": 2,
                                "p_value": pytest.approx(stats.binomtest(1, 3).pvalue)}
    deeper = api.compare("marco", "dev", qrels="original", runs=["A", "B"], measure="RR", k=20)
    assert deeper.outcomes.pairs[0].counts == {"neither": 1, "only_a": 1, "only_b": 1,
                                                        "both": 3}
    code, out, err = cli("report", "compare", "marco", "dev", "--run", "A", "--run", "B",
                         "--measure", "RR", "--k", "10")
    assert code == 0, err
    assert "outcome breakdown" in out


# --- bad input: a clear error, one test each --------------------------------------------------

def test_one_run_is_refused(graded: dict, cli) -> None:
    code, _, err = cli("report", "compare", "c", "s", "--run", "a", "--measure", "AP")
    assert code == 1 and "at least two different runs" in err


def test_unknown_run_is_not_found(graded: dict) -> None:
    from tcdb import api

    with pytest.raises(NotFoundError, match="no run 'nope' in snapshot 's'"):
        api.compare("c", "s", qrels="original", runs=["a", "nope"], measure="AP")


def test_unknown_correction_is_refused(graded: dict, cli) -> None:
    code, _, err = cli("report", "compare", "c", "s", "--run", "a", "--run", "b", "--measure",
                       "AP", "--correction", "fdr")
    assert code == 1 and "unknown correction 'fdr'" in err


def test_cutoff_below_one_is_refused(graded: dict) -> None:
    from tcdb import api

    with pytest.raises(InputError, match="k must be at least 1"):
        api.compare("c", "s", qrels="original", runs=["a", "b"], measure="AP", k=0)


def test_unknown_qrels_set_is_not_found(graded: dict) -> None:
    from tcdb import api

    with pytest.raises(NotFoundError, match="no qrels set 'pooled'"):
        api.compare("c", "s", qrels="pooled", runs=["a", "b"], measure="AP")


def test_run_with_imported_scores_lacking_the_measure_is_not_found(graded: dict,
                                                                   tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.api import scores_import

    path = tmp_path / "old.tsv"
    path.write_text("1\tAP\t0.5\n2\tAP\t0.25\n")
    scores_import("c", "s", path, qrels="original", run="old")
    report = api.compare("c", "s", qrels="original", runs=["a", "old"], measure="AP")
    assert report.pairs[0].mean_b == pytest.approx(0.75 / 16)
    with pytest.raises(NotFoundError, match="run 'old' of 's' has no nDCG@10 scores"):
        api.compare("c", "s", qrels="original", runs=["a", "old"], measure="nDCG@10")
