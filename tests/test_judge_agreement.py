"""`tcdb report judge-agreement` (issue 44, Builds 2 and 3), on SQLite and PostgreSQL, against
the reference packages on files in TREC format that the test reads without tcdb:

* Cohen's κ unweighted, linear, quadratic = `sklearn.metrics.cohen_kappa_score` (1e-12);
* Krippendorff's α ordinal and nominal = the `krippendorff` package (1e-12);
* the confusion matrix = a count made with the `csv` module from the two qrels files;
* per topic the same, and the binarised labels;
* τ-b = `scipy.stats.kendalltau` on means from ir_measures; τ_AP (Yilmaz, Aslam, Robertson
  2008) and RBO extrapolated (Webber, Moffat, Zobel 2010, eq. 32) = implementations written
  here from the papers' formulas; top-k τ = scipy on the first set's top k;
* bootstrap intervals seeded (the same seed, the same interval) and holding the estimate.

Two judges grade 0–4 over several topics: `nist` and `llm` (an LLM that over-rates by a grade
now and then and misses a few pairs), runs ranked by nDCG@10.
"""

from __future__ import annotations

import csv
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.builders import build_snapshot, write_qrels_file, write_run_file

N_TOPICS = 8
N_DOCS = 40
N_RUNS = 12


@pytest.fixture
def judged(db: str, tmp_path: Path) -> dict[str, Path]:
    """A snapshot with `nist` and `llm` qrels (grades 0–4) and twelve runs; the files' paths."""
    from tcdb.api import qrels_import, run_import

    rng = random.Random(44)
    docs = {f"d{i:02d}": f"text {i}" for i in range(N_DOCS)}
    topics = {str(t): f"query {t}" for t in range(101, 101 + N_TOPICS)}
    nist: list[tuple[str, str, int]] = []
    llm: list[tuple[str, str, int]] = []
    for t in topics:
        for d in rng.sample(sorted(docs)[:-1], 30):
            grade = rng.choice([0, 0, 0, 1, 1, 2, 3, 4])
            nist.append((t, d, grade))
            if rng.random() < 0.9:  # the LLM misses some pairs
                llm.append((t, d, min(4, max(0, grade + rng.choice([0, 0, 0, 1, 1, -1, 2])))))
        llm.append((t, f"d{N_DOCS - 1}", 3))  # judged by the LLM alone: no pair
    paths = {"nist": write_qrels_file(tmp_path / "nist.txt", nist),
             "llm": write_qrels_file(tmp_path / "llm.txt", llm)}
    build_snapshot(tmp_path, "rag", "s1", docs, topics)
    qrels_import("rag", "s1", "nist", paths["nist"])
    qrels_import("rag", "s1", "llm", paths["llm"])
    for r in range(N_RUNS):
        rows = [(t, d, round(rng.random() + (r / N_RUNS) * (d < "d15"), 6))
                for t in topics for d in rng.sample(sorted(docs), 25)]
        paths[f"run{r:02d}"] = write_run_file(tmp_path / "runs", f"run{r:02d}", rows)
    run_import("rag", "s1", [paths[f"run{r:02d}"] for r in range(N_RUNS)])
    return paths


def _read_qrels(path: Path) -> dict[tuple[str, str], int]:
    with path.open(newline="") as handle:
        return {(row[0], row[2]): int(row[3]) for row in csv.reader(handle, delimiter=" ")}


def _pairs(paths: dict[str, Path]) -> tuple[list[tuple[str, str]], list[int], list[int]]:
    nist, llm = _read_qrels(paths["nist"]), _read_qrels(paths["llm"])
    both = sorted(set(nist) & set(llm))
    return both, [nist[k] for k in both], [llm[k] for k in both]


def _tau_ap(truth: dict[str, float], estimate: dict[str, float]) -> float:
    """τ_AP from Yilmaz, Aslam and Robertson (SIGIR 2008), eq. 2: over the estimated ranking
    e_1..e_N, C(i) = systems above e_i in the estimate also above it in the truth;
    τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1. Rankings: score descending, ties by name."""
    def order(scores: dict[str, float]) -> list[str]:
        return sorted(scores, key=lambda s: (-scores[s], s))

    truth_rank = {s: i for i, s in enumerate(order(truth))}
    ranked = order(estimate)
    total = 0.0
    for i in range(1, len(ranked)):
        correct = sum(1 for above in ranked[:i] if truth_rank[above] < truth_rank[ranked[i]])
        total += correct / i
    return 2.0 / (len(ranked) - 1) * total - 1.0


def _rbo_ext(first: list[str], second: list[str], p: float, k: int) -> float:
    """RBO_ext from Webber, Moffat and Zobel (TOIS 2010), eq. 32, on the top k:
    X_k/k · p^k + (1 − p)/p · Σ_{d=1..k} X_d/d · p^d, X_d = |S_{:d} ∩ T_{:d}|."""
    def overlap(d: int) -> int:
        return len(set(first[:d]) & set(second[:d]))

    return overlap(k) / k * p ** k + (1 - p) / p * sum(overlap(d) / d * p ** d
                                                        for d in range(1, k + 1))


def _means(paths: dict[str, Path], qrels: str) -> dict[str, float]:
    """Each run's mean nDCG@10 by ir_measures over the qrels file (every run answers every
    topic), rounded to 12 decimals as trec_eval prints equal means equal."""
    import ir_measures

    judged = list(ir_measures.read_trec_qrels(str(paths[qrels])))
    out = {}
    for r in range(N_RUNS):
        tag = f"run{r:02d}"
        run = list(ir_measures.read_trec_run(str(paths[tag])))
        value = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], judged, run)
        out[tag] = round(value[ir_measures.nDCG @ 10], 12)
    return out


def test_labels_equal_sklearn_krippendorff_and_csv(judged: dict[str, Path], cli: Any) -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    code, out, err = cli("report", "judge-agreement", "rag", "s1", "--qrels", "nist", "--vs",
                         "llm", "--relevant", "2", "--bootstrap", "0", "--json")
    assert code == 0, err
    report = json.loads(out)
    both, a, b = _pairs(judged)
    labels = list(range(min(a + b), max(a + b) + 1))
    assert report["n_pairs"] == len(both) and report["n_topics"] == N_TOPICS
    # the confusion matrix counted with csv
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for x, y in zip(a, b, strict=True):
        counts[x, y] += 1
    assert report["labels"] == labels
    assert report["confusion"] == [[counts[x, y] for y in labels] for x in labels]
    figures = report["agreement"]
    for key, weights in (("kappa", None), ("kappa_linear", "linear"),
                         ("kappa_quadratic", "quadratic")):
        expected = cohen_kappa_score(a, b, labels=labels, weights=weights)
        assert figures[key] == pytest.approx(expected, abs=1e-12, rel=0)
    for level in ("ordinal", "nominal"):
        expected = krippendorff.alpha(reliability_data=[a, b], level_of_measurement=level)
        assert figures[f"alpha_{level}"] == pytest.approx(expected, abs=1e-12, rel=0)
    bin_a, bin_b = [int(x >= 2) for x in a], [int(y >= 2) for y in b]
    assert report["confusion_binary"] == [[sum(1 for x, y in zip(bin_a, bin_b, strict=True)
                                               if (x, y) == (i, j)) for j in (0, 1)]
                                          for i in (0, 1)]
    assert figures["kappa_binary"] == pytest.approx(cohen_kappa_score(bin_a, bin_b),
                                                    abs=1e-12, rel=0)
    assert figures["alpha_binary"] == pytest.approx(krippendorff.alpha(
        reliability_data=[bin_a, bin_b], level_of_measurement="nominal"), abs=1e-12, rel=0)
    assert figures["agreement"] == pytest.approx(sum(x == y for x, y in zip(a, b, strict=True))
                                                 / len(a))
    # per topic
    by_topic: dict[str, list[int]] = defaultdict(list)
    for i, (topic, _) in enumerate(both):
        by_topic[topic].append(i)
    rows = {row["topic"]: row for row in report["per_topic"]}
    assert list(rows) == sorted(by_topic)
    for topic, index in by_topic.items():
        ta, tb = [a[i] for i in index], [b[i] for i in index]
        row = rows[topic]
        assert row["n_pairs"] == len(index)
        assert row["kappa_quadratic"] == pytest.approx(
            cohen_kappa_score(ta, tb, labels=labels, weights="quadratic"), abs=1e-12, rel=0)
        assert row["kappa"] == pytest.approx(cohen_kappa_score(ta, tb, labels=labels),
                                             abs=1e-12, rel=0)
        assert row["alpha_ordinal"] == pytest.approx(krippendorff.alpha(
            reliability_data=[ta, tb], level_of_measurement="ordinal"), abs=1e-12, rel=0)
        assert row["alpha_nominal"] == pytest.approx(krippendorff.alpha(
            reliability_data=[ta, tb], level_of_measurement="nominal"), abs=1e-12, rel=0)


def test_rankings_equal_scipy_and_the_papers(judged: dict[str, Path], cli: Any) -> None:
    from scipy.stats import kendalltau, rankdata

    k, p = 5, 0.8
    code, out, err = cli("report", "judge-agreement", "rag", "s1", "--qrels", "nist", "--vs",
                         "llm", "--k", str(k), "--p", str(p), "--bootstrap", "0", "--json")
    assert code == 0, err
    report = json.loads(out)
    nist, llm = _means(judged, "nist"), _means(judged, "llm")
    tags = sorted(nist)
    ranking = report["ranking"]
    assert report["n_runs"] == N_RUNS and report["measure"] == "nDCG@10"
    assert ranking["tau_b"] == pytest.approx(kendalltau(
        [nist[t] for t in tags], [llm[t] for t in tags], variant="b").statistic, abs=1e-12)
    assert ranking["tau_ap"] == pytest.approx(_tau_ap(nist, llm), abs=1e-12)
    first = sorted(nist, key=lambda s: (-nist[s], s))
    second = sorted(llm, key=lambda s: (-llm[s], s))
    assert report["top_k"] == first[:k]
    assert ranking["top_k_tau_b"] == pytest.approx(kendalltau(
        [nist[t] for t in first[:k]], [llm[t] for t in first[:k]], variant="b").statistic,
        abs=1e-12)
    assert ranking["top_k_tau_ap"] == pytest.approx(_tau_ap(
        {t: nist[t] for t in first[:k]}, {t: llm[t] for t in first[:k]}), abs=1e-12)
    assert ranking["top_k_overlap"] == len(set(first[:k]) & set(second[:k]))
    assert ranking["rbo"] == pytest.approx(_rbo_ext(first, second, p, k), abs=1e-12)
    # every run's rank under both (1 = best, ties the best rank) and the largest movers
    rank_a = dict(zip(tags, rankdata([-nist[t] for t in tags], method="min"), strict=True))
    rank_b = dict(zip(tags, rankdata([-llm[t] for t in tags], method="min"), strict=True))
    for run in report["runs"]:
        assert (run["score_a"], run["score_b"]) == (pytest.approx(nist[run["run"]], abs=1e-12),
                                                    pytest.approx(llm[run["run"]], abs=1e-12))
        assert run["rank_change"] == rank_a[run["run"]] - rank_b[run["run"]]
    biggest = max(abs(rank_a[t] - rank_b[t]) for t in tags)
    assert report["movers"] and abs(report["movers"][0]["rank_change"]) == biggest


def test_identical_rankings_score_one() -> None:
    from tcdb.analysis.ranking_fidelity import rbo_ext

    names = [f"s{i}" for i in range(7)]
    for k in (1, 3, 7):
        assert rbo_ext(names, names, 0.9, k) == pytest.approx(1.0, abs=1e-12)
        assert rbo_ext(names, names[::-1], 0.9, k) == pytest.approx(
            _rbo_ext(names, names[::-1], 0.9, k), abs=1e-12)


def test_intervals_resample_topics(judged: dict[str, Path]) -> None:
    """The κ interval is the percentile interval of κ (sklearn) over resamples that draw the
    topics with replacement (numpy's Generator, seeded: `integers(0, T, (S, T))`) and pool the
    pairs of every topic drawn; the same seed gives the same intervals."""
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    from tcdb import api

    samples, seed = 200, 7
    result = api.judge_agreement("rag", "s1", qrels="nist", vs="llm", bootstrap=samples,
                                 seed=seed)
    both, a, b = _pairs(judged)
    labels = list(range(min(a + b), max(a + b) + 1))
    topics = sorted({t for t, _ in both})
    draws = np.random.default_rng(seed).integers(0, len(topics), size=(samples, len(topics)))
    values = []
    for row in draws:
        ta, tb = [], []
        for i in row:
            index = [j for j, (t, _) in enumerate(both) if t == topics[i]]
            ta += [a[j] for j in index]
            tb += [b[j] for j in index]
        values.append(cohen_kappa_score(ta, tb, labels=labels))
    low, high = np.percentile(values, [2.5, 97.5])
    interval = (result.intervals or {})["kappa"]
    assert (interval.low, interval.high) == (pytest.approx(low, abs=1e-12),
                                             pytest.approx(high, abs=1e-12))
    assert interval.estimate == pytest.approx(result.agreement["kappa"], abs=1e-12)
    assert interval.n_samples == samples and interval.n_nan == 0
    for key in ("alpha_ordinal", "tau_b", "tau_ap", "rbo", "top_k_tau_b"):
        got = (result.intervals or {})[key]
        assert got.low is not None and got.high is not None and got.low <= got.high, key
    again = api.judge_agreement("rag", "s1", qrels="nist", vs="llm", bootstrap=samples,
                                seed=seed)
    assert again.intervals == result.intervals
    # the frames and the paper table come from the one result
    frame = result.to_frame()
    assert list(frame["topic"]) == [*topics, "all"]
    assert frame["n_pairs"].iloc[-1] == len(both) == frame["n_pairs"].iloc[:-1].sum()
    assert result.confusion_frame().to_numpy().sum() == len(both)
    assert len(result.runs_frame()) == N_RUNS
    paper = result.paper_table()
    assert "RBO extrapolated" in paper.caption and "200 resamples, seed 7" in paper.caption
    assert [row[0] for row in paper.rows][:3] == ["κ", "κ linear", "κ quadratic"]
    assert result.lineage is not None and len(result.lineage.qrels) == 2


def test_terminal_and_errors(judged: dict[str, Path], cli: Any) -> None:
    code, out, err = cli("report", "judge-agreement", "rag", "s1", "--qrels", "nist", "--vs",
                         "llm", "--bootstrap", "20")
    assert code == 0, err
    for said in ("confusion matrix (grades)", "κ quadratic", "α ordinal", "RBO_ext",
                 "per topic", "20 resamples, seed 0", "nist \\ llm"):
        assert said in out, said
    code, _, err = cli("report", "judge-agreement", "rag", "s1", "--qrels", "llm", "--vs", "llm")
    assert code != 0 and "with itself" in err and "Traceback" not in err
    code, _, err = cli("report", "judge-agreement", "rag", "s1", "--vs", "nope")
    assert code != 0 and "nope" in err and "Traceback" not in err
    code, _, err = cli("report", "judge-agreement", "rag", "s1", "--vs", "llm", "--p", "1")
    assert code != 0 and "p" in err and "Traceback" not in err


def test_two_sets_that_share_no_pair_say_so(judged: dict[str, Path], cli: Any,
                                             tmp_path: Path) -> None:
    """A pool's set judges only what the original left out: no pair both judged — every
    figure undefined (a dash), no traceback, on the terminal, in JSON and on the page."""
    from tests.dashboard_pages import clear_cache, open_page

    pooled = write_qrels_file(tmp_path / "pool.txt", [("101", f"d{N_DOCS - 1}", 1)])
    assert cli("qrels", "import", "rag", "s1", "pool", pooled)[0] == 0
    code, out, err = cli("report", "judge-agreement", "rag", "s1", "--qrels", "nist", "--vs",
                         "pool", "--no-compute")
    assert code == 0, err
    assert "0 pairs judged by both" in out
    code, out, _ = cli("report", "judge-agreement", "rag", "s1", "--qrels", "nist", "--vs",
                       "pool", "--no-compute", "--json")
    body = json.loads(out)
    assert body["n_pairs"] == 0 and set(body["agreement"].values()) == {None}
    clear_cache()
    at = open_page("judges", collection="rag", snapshot="s1", qrels="nist", vs="pool")
    assert at.title[0].value == "Judge agreement"


@pytest.mark.parametrize("seed", range(4))
def test_random_grades_equal_the_packages(seed: int) -> None:
    """`tcdb.analysis.label_agreement` alone on random grades (negative ones, gaps in the
    scale, one topic with a single grade): κ = sklearn, α = krippendorff, per topic too."""
    import krippendorff
    import pandas as pd
    from sklearn.metrics import cohen_kappa_score

    from tcdb.analysis.label_agreement import label_agreement

    rng = random.Random(seed)
    scale = rng.choice([[0, 1], [0, 1, 2, 3, 4], [-2, 0, 1, 3], [1, 2, 3]])
    rows = []
    for t in range(rng.randint(2, 9)):
        for _ in range(rng.randint(3, 40)):
            x = rng.choice(scale)
            rows.append((f"t{t}", x, x if rng.random() < 0.6 else rng.choice(scale)))
    rows += [("same", scale[0], scale[0])] * 3  # α and κ undefined on this topic alone
    pairs = pd.DataFrame(rows, columns=["topic", "grade_a", "grade_b"])
    got = label_agreement(pairs, relevant=scale[len(scale) // 2], n_samples=0)
    a, b = pairs["grade_a"].tolist(), pairs["grade_b"].tolist()
    labels = list(range(min(a + b), max(a + b) + 1))
    for key, weights in (("kappa", None), ("kappa_linear", "linear"),
                         ("kappa_quadratic", "quadratic")):
        assert got["overall"][key] == pytest.approx(
            cohen_kappa_score(a, b, labels=labels, weights=weights), abs=1e-12, rel=0)
    for level in ("ordinal", "nominal"):
        assert got["overall"][f"alpha_{level}"] == pytest.approx(krippendorff.alpha(
            reliability_data=[a, b], level_of_measurement=level), abs=1e-12, rel=0)
    for row in got["per_topic"]:
        if row["topic"] == "same":
            assert row["kappa"] is None and row["alpha_ordinal"] is None
            continue
        part = pairs[pairs["topic"] == row["topic"]]
        ta, tb = part["grade_a"].tolist(), part["grade_b"].tolist()
        if len(set(ta + tb)) > 1:
            assert row["alpha_ordinal"] == pytest.approx(krippendorff.alpha(
                reliability_data=[ta, tb], level_of_measurement="ordinal"), abs=1e-12, rel=0)
    assert got["intervals"] is None and got["n_pairs"] == len(rows)
