"""Evaluation in worker processes gives exactly ir_measures' values on the files, as the serial
path does — on SQLite and PostgreSQL, through the CLI, the API and the Dask path of the flow.

Ten runs with ties, unjudged and unknown documents and missing topics are scored with 1 and 2
(and more) workers; every stored per-topic value must equal ir_measures run directly on the
TREC files, and the parallel and serial paths must store the same rows.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from sqlalchemy import select

from tcdb.operations import Database
from tcdb.schema import Evaluation, Score
from tests.builders import build_snapshot, write_qrels_file, write_run_file

pytestmark = [pytest.mark.server, pytest.mark.slow]

MEASURES = ["AP", "nDCG@10", "P@10", "R@100"]
N_DOCS = 120
TOPICS = {str(t): f"query {t}" for t in range(1, 13)}
TAGS = [f"r{k:02d}" for k in range(10)]


def _files(tmp_path: Path) -> dict[str, Path]:
    rng = random.Random(11)
    docs = {f"d{i}": f"text of document {i}" for i in range(N_DOCS)}
    qrels = [(str(t), f"d{d}", rng.choice([0, 0, 1, 2]))
             for t in range(1, 12) for d in rng.sample(range(N_DOCS), 25)]
    build_snapshot(tmp_path, "c", "s1", docs, TOPICS, qrels)
    files = {"qrels": write_qrels_file(tmp_path / "qrels.txt", qrels)}
    for k, tag in enumerate(TAGS):
        rows = []
        for topic in TOPICS:
            if k % 4 == 3 and int(topic) % 3 == 0:
                continue  # some runs miss some topics
            for rank, doc in enumerate(rng.sample(range(N_DOCS), 40 + k), start=1):
                score = float(rng.choice([1, 2, 3])) if k % 3 == 0 else 100.0 - rank
                doc_id = f"x{topic}-{rank}" if k == 5 and rank % 7 == 0 else f"d{doc}"
                rows.append((topic, doc_id, rank, score))
        files[tag] = write_run_file(tmp_path / "runs", tag, rows)
    return files


@pytest.fixture
def collection(db: str, tmp_path: Path) -> dict[str, Path]:
    from tcdb.api import run_import

    files = _files(tmp_path)
    for tag in TAGS:
        run_import("c", "s1", [files[tag]], allow_unknown_docs=True)
    return files


def _reference(files: dict[str, Path]) -> dict[tuple[str, str, str], float]:
    """(run, measure, topic) → ir_measures' value on the files, for the topics each answered."""
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    qrels = list(ir_measures.read_trec_qrels(str(files["qrels"])))
    values = {}
    for tag in TAGS:
        run = list(ir_measures.read_trec_run(str(files[tag])))
        answered = {r.query_id for r in run}
        for m in ir_measures.iter_calc(measures, qrels, run):
            if m.query_id in answered:
                values[(tag, str(m.measure), m.query_id)] = m.value
    return values


def _stored() -> dict[tuple[str, str, str], float]:
    from tcdb.schema import Measure, Run, SnapshotTopic

    with Database().session() as session:
        rows = session.execute(
            select(Run.tag, Measure.name, SnapshotTopic.external_id, Score.value)
            .join(Run, Run.id == Score.run_id).join(Measure, Measure.id == Score.measure_id)
            .join(SnapshotTopic, (SnapshotTopic.topic_id == Score.topic_id)
                  & (SnapshotTopic.snapshot_id == Run.snapshot_id))).all()
    return {(tag, measure, topic): value for tag, measure, topic, value in rows}


def _check(stored: dict[tuple[str, str, str], float], files: dict[str, Path]) -> None:
    import ir_measures

    reference = _reference(files)
    names = {str(ir_measures.parse_measure(m)): m for m in MEASURES}
    expected = {(tag, names[m], topic): v for (tag, m, topic), v in reference.items()}
    assert set(stored) == set(expected)
    for key, value in expected.items():
        assert stored[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_store_ir_measures_values(collection: dict[str, Path], workers: int) -> None:
    from tcdb.scoring.evaluate import evaluate

    report = evaluate(Database(), "c", "s1", "original", MEASURES, workers=workers)
    assert report.n_computed == len(TAGS) * len(MEASURES)
    assert report.n_scores == len(_stored())
    _check(_stored(), collection)
    again = evaluate(Database(), "c", "s1", "original", MEASURES, workers=workers)
    assert again.n_computed == 0 and again.n_cached == len(TAGS) * len(MEASURES)


def test_parallel_and_serial_paths_store_the_same_rows(collection: dict[str, Path]) -> None:
    from tcdb.scoring.evaluate import evaluate

    evaluate(Database(), "c", "s1", "original", MEASURES, workers=1)
    serial = _stored()
    with Database().session() as session:
        for table in (Score, Evaluation):
            session.execute(table.__table__.delete())  # type: ignore[attr-defined]
    evaluate(Database(), "c", "s1", "original", MEASURES, workers=2)
    assert _stored() == serial


def test_cli_and_api_take_workers(collection: dict[str, Path], cli) -> None:
    import tcdb.api

    code, out, err = cli("evaluate", "c", "s1", "--measure", "AP", "--workers", "2", "--json")
    assert code == 0, err
    result = tcdb.api.evaluate("c", "s1", measures=["nDCG@10", "P@10", "R@100"], workers=2)
    assert result.report.n_computed == len(TAGS) * 3
    _check(_stored(), collection)
    code, _, err = cli("evaluate", "c", "s1", "--measure", "AP", "--workers", "0")
    assert code != 0 and "--workers" in err and "Traceback" not in err


def test_plan_then_store_what_workers_scored_elsewhere(collection: dict[str, Path]) -> None:
    """The orchestrated path (Dask through Prefect): plan, score each job anywhere, store."""
    from tcdb.scoring.evaluate import plan_evaluation, store_evaluation
    from tcdb.scoring.parallel import score_job

    plan = plan_evaluation(Database(), "c", "s1", "original", MEASURES)
    jobs = plan.jobs(Database().url, 3)
    assert sorted(r for job in jobs for r in job.run_ids) == sorted(plan.sizes)
    report = store_evaluation(Database(), plan, [score_job(job) for job in jobs])
    assert report.n_computed == len(TAGS) * len(MEASURES)
    _check(_stored(), collection)
    # a second store of the same plan writes nothing: the pairs are stored now
    assert store_evaluation(Database(), plan, [score_job(job) for job in jobs]).n_computed == 0


def test_store_drops_values_of_a_run_replaced_since_the_plan(
        collection: dict[str, Path], tmp_path: Path) -> None:
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import plan_evaluation, store_evaluation
    from tcdb.scoring.parallel import score_job

    plan = plan_evaluation(Database(), "c", "s1", "original", ["AP"])
    scored = [score_job(job) for job in plan.jobs(Database().url, 2)]
    replaced = write_run_file(tmp_path / "new", "r00", [("1", "d1", 1, 1.0)])
    run_import("c", "s1", [replaced], replace=True)
    report = store_evaluation(Database(), plan, scored)
    assert report.n_computed == len(TAGS) - 1
    assert {tag for tag, _, _ in _stored()} == set(TAGS) - {"r00"}


def test_the_evaluate_flow_scores_on_a_dask_cluster(collection: dict[str, Path], prefect_api,
                                                    dask_cluster: str) -> None:
    """The flow with a scheduler address scores through prefect-dask's task runner on the
    cluster's worker processes; the values equal ir_measures' on the files."""
    from tcdb.flows.evaluate import evaluate

    result = evaluate(collection="c", snapshot="s1", qrels="original", measures=MEASURES,
                      dask=dask_cluster)
    (target,) = result["targets"]
    assert target["n_computed"] == len(TAGS) * len(MEASURES)
    from distributed import Client

    with Client(dask_cluster) as client:  # the shares ran as tasks on the cluster
        prefixes = client.run_on_scheduler(
            lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "score_runs_task" in prefixes, prefixes
    _check(_stored(), collection)
    again = evaluate(collection="c", snapshot="s1", qrels="original", measures=MEASURES,
                     dask=dask_cluster)
    assert again["targets"][0]["n_computed"] == 0


WORKERS_THEN_WAIT = """
import multiprocessing, sys, time
from tcdb.workers import run_in_processes
results = run_in_processes(__import__("tests.test_parallel_evaluation").test_parallel_evaluation
                           .sleep_task, [1, 2], 2)
print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
time.sleep(600)
"""


def sleep_task(_shared: object, item: int) -> int:
    import time

    time.sleep(600)
    return item


def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    """A SIGKILLed tcdb cannot shut its pool down: its workers must not outlive it (they would
    wait forever, holding its pipes open)."""
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    parent = subprocess.Popen([sys.executable, "-c", WORKERS_THEN_WAIT], cwd=root,
                              stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    workers = [int(p) for p in parent.stdout.readline().split()]
    assert len(workers) == 2
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    alive = set(workers)
    for _ in range(200):  # the kernel delivers SIGKILL to the orphans; wait until it has
        alive = {pid for pid in alive if _alive(pid)}
        if not alive:
            break
        time.sleep(0.1)
    assert not alive, f"workers {sorted(alive)} outlived their killed parent"


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, killed and not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False
