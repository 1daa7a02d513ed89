"""Assessor agreement on a pool (`tcdb report agreement`), on SQLite and PostgreSQL: Cohen's κ
equal to scikit-learn's, the confusion matrix, τ between the rankings under each assessor's
qrels equal to scipy on ir_measures' means; and `pool export --overlap N`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

N_TOPICS = 4
N_DOCS = 60


def test_kappa_equals_sklearn_on_random_grades() -> None:
    from sklearn.metrics import cohen_kappa_score

    from tcdb.analysis.kappa import cohen_kappa, grade_labels

    rng = random.Random(5)
    for _ in range(30):
        n = rng.randrange(5, 80)
        a = [rng.choice([0, 0, 1, 2, 3]) for _ in range(n)]
        b = [min(3, max(0, x + rng.choice([-1, 0, 0, 1, 2]))) for x in a]
        labels = grade_labels(a, b)
        for ours, theirs in (("none", None), ("linear", "linear"),
                             ("quadratic", "quadratic")):
            expected = cohen_kappa_score(a, b, labels=labels, weights=theirs)
            assert cohen_kappa(a, b, ours, labels) == pytest.approx(expected, abs=1e-12)


def test_kappa_by_hand() -> None:
    """Binary table [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.4."""
    from tcdb.analysis.kappa import cohen_kappa, confusion_matrix

    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert confusion_matrix(a, b, [0, 1]).tolist() == [[15, 10], [5, 20]]
    assert cohen_kappa(a, b) == pytest.approx(0.4, abs=1e-12)
    assert cohen_kappa([1, 1], [1, 1]) != cohen_kappa([1, 1], [1, 1])  # NaN: undefined


@pytest.fixture
def judged(db: str, tmp_path: Path) -> dict[str, dict[tuple[str, str], int]]:
    """A depth-5 pool judged by `alice` (the pooled set) and an LLM judge (`llm`, a qrels set
    that disagrees on some documents and judged only some of the pool)."""
    from tcdb.api import pool_build, pool_import_judgments, run_import
    from tcdb.judging.qrels import import_qrels
    from tcdb.pools import pool_documents

    rng = random.Random(9)
    docs = {f"d{i}": f"text {i}" for i in range(N_DOCS)}
    topics = {str(t): f"query {t}" for t in range(1, N_TOPICS + 1)}
    build_snapshot(tmp_path, "a", "s1", docs, topics)
    for r in range(5):
        rows = [(t, f"d{i}", round(rng.random(), 6)) for t in topics
                for i in rng.sample(range(N_DOCS), 30)]
        run_import("a", "s1", [write_run_file(tmp_path / "runs", f"r{r}", rows)])
    pool_build("a", "s1", "p", depth=5, all_runs=True)
    pool = pool_documents(Database(), "p")
    alice = {(t, d): rng.choice([0, 0, 1, 2]) for t, ds in pool.items() for d in sorted(ds)}
    llm = {key: min(2, max(0, g + rng.choice([0, 0, 0, 1, -1])))
           for key, g in alice.items() if rng.random() < 0.8}
    write_qrels_file(tmp_path / "alice.txt", [(t, d, g) for (t, d), g in alice.items()])
    pool_import_judgments("p", tmp_path / "alice.txt", assessor="alice")
    import_qrels(Database(), "a", "s1", "llm", write_qrels_file(
        tmp_path / "llm.txt", [(t, d, g) for (t, d), g in llm.items()]))
    return {"alice": alice, "llm": llm}


def test_agreement_report_equals_sklearn_and_scipy(judged: dict, cli) -> None:
    import ir_measures
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    from tcdb.queries.runs import read_runs
    from tcdb.runs import get_runs

    code, out, err = cli("report", "agreement", "p", "--vs", "llm", "--json")
    assert code == 0, err
    report = json.loads(out)
    both = sorted(set(judged["alice"]) & set(judged["llm"]))
    a = [judged["alice"][k] for k in both]
    b = [judged["llm"][k] for k in both]
    labels = sorted(set(a) | set(b))
    assert report["n_overlap"] == len(both)
    assert report["n_judged"] == [len(judged["alice"]), len(judged["llm"])]
    assert report["labels"] == labels
    assert report["confusion"] == confusion_matrix(a, b, labels=labels).tolist()
    assert report["kappa_graded"] == pytest.approx(
        cohen_kappa_score(a, b, labels=labels, weights="linear"), abs=1e-12)
    assert report["kappa_graded_unweighted"] == pytest.approx(
        cohen_kappa_score(a, b, labels=labels), abs=1e-12)
    assert report["kappa_binary"] == pytest.approx(
        cohen_kappa_score([int(x >= 1) for x in a], [int(y >= 1) for y in b]), abs=1e-12)
    # τ-b between the rankings by AP under each set (every run answers every topic here)
    with Database().session() as session:
        from tcdb.catalog.collections import get_snapshot

        snap = get_snapshot(session, "a", "s1")
        tags = {r.pk: r.tag for r in get_runs(session, snap)}
        runs = {tags[i]: run for i, run in read_runs(session.connection(), snap.pk, list(tags))}

    def means(grades: dict[tuple[str, str], int]) -> list[float]:
        qrels: dict[str, dict[str, int]] = {}
        for (t, d), g in grades.items():
            qrels.setdefault(t, {})[d] = g
        return [round(ir_measures.calc_aggregate([ir_measures.AP], qrels, runs[tag])[
            ir_measures.AP], 12) for tag in sorted(runs)]

    expected = kendalltau(means(judged["alice"]), means(judged["llm"]), variant="b").statistic
    assert report["tau_b"] == pytest.approx(expected, abs=1e-12)
    code, out, err = cli("report", "agreement", "p", "--vs", "llm", "--weights", "quadratic")
    assert code == 0, err
    assert "confusion matrix" in out and "τ_AP" in out


def test_agreement_errors(judged: dict, cli) -> None:
    code, _, err = cli("report", "agreement", "p", "--vs", "p")
    assert code != 0 and "against itself" in err
    code, _, err = cli("report", "agreement", "p", "--vs", "llm", "--weights", "cubic")
    assert code != 0 and "'cubic' is not one of" in err
    code, _, err = cli("report", "agreement", "p", "--vs", "nope")
    assert code != 0 and "nope" in err


def test_export_overlap_is_n_per_topic_by_seed(judged: dict, tmp_path: Path, cli) -> None:
    from tcdb.pools import pool_documents

    pool = pool_documents(Database(), "p")

    def export(seed: int, name: str) -> dict[str, set[str]]:
        code, out, err = cli("pool", "export", "p", "--format", "trec", "--out",
                             str(tmp_path / name), "--overlap", "3", "--seed", str(seed),
                             "--json")
        assert code == 0, err
        assert json.loads(out)["n_documents"] == 3 * N_TOPICS
        got: dict[str, set[str]] = {}
        for line in (tmp_path / name).read_text().splitlines():
            topic, _, doc = line.split()[:3]
            got.setdefault(topic, set()).add(doc)
        return got

    first, again, other = export(1, "a.txt"), export(1, "b.txt"), export(2, "c.txt")
    assert first == again != other
    assert all(len(docs) == 3 and docs <= pool[t] for t, docs in first.items())


def test_api_agreement_frame(judged: dict) -> None:
    from sklearn.metrics import confusion_matrix

    from tcdb import api

    result = api.assessor_agreement("p", vs="llm")
    frame = result.confusion_frame()
    both = sorted(set(judged["alice"]) & set(judged["llm"]))
    a = [judged["alice"][k] for k in both]
    b = [judged["llm"][k] for k in both]
    labels = sorted(set(a) | set(b))
    assert frame.to_numpy().tolist() == confusion_matrix(a, b, labels=labels).tolist()
    assert list(frame.index) == labels and frame.index.name == "p"
    assert result.n_overlap == len(both) and result.vs == "llm"
    tidy = result.to_frame()
    assert tidy["n_documents"].sum() == len(both)
    assert len(tidy) == len(labels) ** 2
