"""Prefect flows over the core: scheduled ingestion of new snapshots, run drops, evaluation,
deployments and their schedules, retries only where a retry can help.

Flows run for real against Prefect's test harness (a throw-away local API), on SQLite and
PostgreSQL through the `db` fixture.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcdb.errors import ConflictError, InputError, NotFoundError
from tcdb.operations import Database

pytestmark = [pytest.mark.server, pytest.mark.slow]

# --- data -------------------------------------------------------------------------------------

TOPICS = {"q1": "paris weather", "q2": "cheap flights", "q3": "train strikes"}


def write_snapshot(folder: Path, version: int) -> Path:
    """A small local snapshot: TREC documents, TSV topics, TREC qrels. Returns the folder."""
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    ids = [f"d{i}" for i in range(1, 7 + version)]
    (docs / "part-0.trec").write_text("".join(
        f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>\ntext of {d}, version {version if d == 'd1' else 0}"
        f"\n</TEXT>\n</DOC>\n" for d in ids), encoding="utf-8")
    (folder / "topics.tsv").write_text(
        "".join(f"{q}\t{text}\n" for q, text in TOPICS.items()), encoding="utf-8")
    (folder / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {(i + j) % 3}\n" for i, q in enumerate(TOPICS)
                for j, d in enumerate(ids[:4])), encoding="utf-8")
    return folder


def write_spec(root: Path, name: str = "flowtest") -> Path:
    """A spec declaring three local snapshots; only the first two have their files yet."""
    for version in (1, 2):
        write_snapshot(root / f"s{version}", version)
    snaps = "\n".join(
        f"  - {{label: s{v}, date: 2024-0{v}-01, docs: s{v}/docs, topics: s{v}/topics.tsv, "
        f"qrels: s{v}/qrels.txt}}" for v in (1, 2, 3))
    spec = root / f"{name}.yaml"
    spec.write_text(f"name: {name}\ngrades: [0, 2]\nsnapshots:\n{snaps}\n", encoding="utf-8")
    return spec


def write_run(path: Path, tag: str, topics: list[str] | None = None, depth: int = 5) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{q} Q0 d{r} {r} {10 - r}.5 {tag}\n" for q in (topics or list(TOPICS))
             for r in range(1, depth + 1)]
    path.write_text("".join(lines), encoding="utf-8")
    return path


# --- ingest_new_snapshots ---------------------------------------------------------------------


def test_ingest_new_snapshots_skips_a_missing_source_then_picks_it_up(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.catalog.collections import list_snapshots
    from tcdb.flows.ingest import ingest_new_snapshots

    spec = write_spec(tmp_path)
    first = ingest_new_snapshots(str(spec))
    assert first["ingested"] == ["s1", "s2"]
    assert list(first["skipped"]) == ["s3"]
    assert "documents not found" in first["skipped"]["s3"]
    assert str(tmp_path / "s3" / "docs") in first["skipped"]["s3"]
    assert first["drift"]["s1"] is None
    assert first["drift"]["s2"]["previous"] == "s1"
    assert first["drift"]["s2"]["documents"]["added"] == 1
    assert first["drift"]["s2"]["documents"]["changed"] == 1
    snaps = {s["label"]: s for s in list_snapshots(Database(), "flowtest")}
    assert set(snaps) == {"s1", "s2"} and snaps["s2"]["documents"] == 8

    again = ingest_new_snapshots(str(spec))
    assert again["ingested"] == [] and again["present"] == ["s1", "s2"]
    assert list(again["skipped"]) == ["s3"]

    write_snapshot(tmp_path / "s3", 3)
    third = ingest_new_snapshots(str(spec))
    assert third["ingested"] == ["s3"] and third["skipped"] == {}
    assert third["drift"]["s3"]["previous"] == "s2"
    assert {s["label"]: s["status"] for s in list_snapshots(Database(), "flowtest")} == {
        "s1": "complete", "s2": "complete", "s3": "complete"}


def test_bad_input_fails_at_once_with_the_core_message(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.catalog.collections import list_snapshots
    from tcdb.flows.ingest import ingest_new_snapshots

    spec = write_spec(tmp_path)
    bad = tmp_path / "s2" / "qrels.txt"
    bad.write_text("q1 0 d1 1\nq1 0 d2\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        ingest_new_snapshots(str(spec))
    assert info.value.file is not None and info.value.file.endswith("qrels.txt")
    assert info.value.line == 2
    # s1 went in before the bad snapshot; the bad one left no data (a `failed` marker only).
    states = {s["label"]: s["status"] for s in list_snapshots(Database(), "flowtest")}
    assert states["s1"] == "complete" and states.get("s2") != "complete"


def test_a_missing_spec_is_not_found(db: str, prefect_api: None, tmp_path: Path) -> None:
    from tcdb.flows.ingest import ingest_new_snapshots

    with pytest.raises(NotFoundError, match="collection spec not found"):
        ingest_new_snapshots(str(tmp_path / "nope.yaml"))


def test_a_changed_source_under_a_complete_label_is_a_conflict(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.catalog.collections import add_collection
    from tcdb.flows.ingest import ingest_snapshot
    from tcdb.ingest.snapshot import SnapshotIngestRequest

    def request(folder: Path) -> SnapshotIngestRequest:
        return SnapshotIngestRequest.of(collection="flowtest", snapshot="s1",
                                        docs=folder / "docs")

    add_collection(Database(), "flowtest")
    first = write_snapshot(tmp_path / "a", 1)
    other = write_snapshot(tmp_path / "b", 2)
    result = ingest_snapshot(request(first))
    assert result["snapshots"][0]["status"] == "ingested"
    assert ingest_snapshot(request(first))["snapshots"][0]["status"] == "unchanged"
    with pytest.raises(ConflictError, match="different source"):
        ingest_snapshot(request(other))


# --- run drops --------------------------------------------------------------------------------


def _ingest_two(tmp_path: Path) -> Path:
    from tcdb.flows.ingest import ingest_new_snapshots

    ingest_new_snapshots(str(write_spec(tmp_path)))
    return tmp_path / "runs"


def test_a_run_file_dropped_twice_is_imported_once(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.runs import import_runs
    from tcdb.runs import list_runs

    drop = _ingest_two(tmp_path)
    run = write_run(drop / "flowtest" / "s1" / "bm25.txt", "bm25")
    first = import_runs(drop_folder=str(drop))
    assert first["imported"] == [str(run)] and first["seen"] == []

    again = import_runs(drop_folder=str(drop))
    assert again["imported"] == [] and again["seen"] == [str(run)]
    shutil.copy(run, run.with_name("bm25-copy.txt"))  # the same file dropped again
    third = import_runs(collection="flowtest", drop_folder=str(drop))
    assert third["imported"] == [] and len(third["seen"]) == 2
    runs = list_runs(Database(), "flowtest")
    assert [r["run"] for r in runs] == ["bm25"]


def test_run_drops_wait_for_their_snapshot_and_skip_partial_files(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.runs import import_runs

    drop = _ingest_two(tmp_path)
    early = write_run(drop / "flowtest" / "s3" / "early.txt", "early")
    write_run(drop / "flowtest" / "s2" / "upload.txt.part", "partial")
    write_run(drop / "flowtest" / "s2" / ".hidden", "hidden")
    two = write_run(drop / "flowtest" / "s2" / "two.txt", "two")
    result = import_runs(drop_folder=str(drop))
    assert result["waiting"] == [str(early)]
    assert result["imported"] == [str(two)]
    waiting = [r for r in result["files"] if r["status"] == "waiting"]
    assert len(waiting) == 1 and "snapshot 's3' of 'flowtest' is not ingested yet" in waiting[0][
        "reason"]


def test_a_bad_run_file_fails_with_its_line_after_the_good_ones(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.runs import import_runs
    from tcdb.runs import list_runs

    drop = _ingest_two(tmp_path)
    folder = drop / "flowtest" / "s1"
    write_run(folder / "a-good.txt", "good")
    bad = folder / "b-bad.txt"
    bad.write_text("q1 Q0 d1 1 1.5 bad\nq1 Q0 d2 2 notanumber bad\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_runs(drop_folder=str(drop))
    assert info.value.file is not None and info.value.file.endswith("b-bad.txt")
    assert info.value.line == 2
    assert [r["run"] for r in list_runs(Database(), "flowtest")] == ["good"]


def test_an_empty_drop_folder_imports_nothing_and_a_missing_one_fails(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.runs import import_runs

    (tmp_path / "empty").mkdir()
    result = import_runs(drop_folder=str(tmp_path / "empty"))
    assert result["imported"] == [] and result["files"] == []
    missing = tmp_path / "nowhere"
    with pytest.raises(NotFoundError, match=f"drop folder {missing} does not exist"):
        import_runs(drop_folder=str(missing))
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    with pytest.raises(InputError, match="a-file: the drop folder is a file"):
        import_runs(drop_folder=str(tmp_path / "a-file"))


@pytest.fixture
def prefect_records() -> Iterator[list[logging.LogRecord]]:
    """Every record Prefect's flow and task run loggers let through during the test.

    Kept by a filter, not a handler: Prefect re-applies its logging config when a flow starts,
    which removes a logger's handlers but keeps its filters (tcdb's come first).
    """
    import tcdb.flows  # noqa: F401 - installs tcdb's filter before this one

    records: list[logging.LogRecord] = []

    class Keep(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            records.append(record)
            return True

    keep = Keep()
    loggers = [logging.getLogger(n) for n in ("prefect.flow_runs", "prefect.task_runs")]
    for logger in loggers:
        logger.addFilter(keep)
    yield records
    for logger in loggers:
        logger.removeFilter(keep)


def test_a_bad_run_file_is_logged_as_one_line_without_a_traceback(
    db: str, prefect_api: None, tmp_path: Path, prefect_records: list[logging.LogRecord]
) -> None:
    from tcdb.flows.runs import import_runs

    drop = _ingest_two(tmp_path)
    bad = drop / "flowtest" / "s1" / "bad.txt"
    bad.parent.mkdir(parents=True)
    bad.write_text("q1 Q0 d1 1 notanumber bad\n", encoding="utf-8")
    with pytest.raises(InputError):
        import_runs(drop_folder=str(drop))
    with pytest.raises(NotFoundError):
        import_runs(drop_folder=str(tmp_path / "nowhere"))
    text = "\n".join(logging.Formatter().format(r) for r in prefect_records)
    assert "Traceback" not in text and not any(r.exc_info for r in prefect_records)
    errors = [r.getMessage() for r in prefect_records if r.levelno >= logging.ERROR
              and r.name == "prefect.flow_runs"]
    assert errors == [f"{bad}:1: score 'notanumber' is not a number",
                      f"drop folder {tmp_path / 'nowhere'} does not exist: create it, or pass "
                      "another drop_folder"]


def test_flows_run_shows_a_bad_run_file_as_one_line(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    """The real command in its own process, on the test's Prefect API: no traceback anywhere."""
    from prefect.settings import PREFECT_API_URL

    drop = _ingest_two(tmp_path)
    bad = drop / "flowtest" / "s1" / "bad.txt"
    bad.parent.mkdir(parents=True)
    bad.write_text("q1 Q0 d1 1 notanumber bad\n", encoding="utf-8")
    env = {**os.environ, "TCDB_DATABASE_URL": db, "PREFECT_API_URL": str(PREFECT_API_URL.value()),
           "PREFECT_LOGGING_LEVEL": "INFO"}
    result = subprocess.run([sys.executable, "-m", "tcdb", "flows", "run", "import-runs",
                             "--param", f"drop_folder={drop}"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=180)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    assert f"error: {bad}:1: score 'notanumber' is not a number" in result.stderr.splitlines()


# --- evaluate and refresh ---------------------------------------------------------------------


def test_evaluate_computes_only_missing_scores(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.evaluate import evaluate
    from tcdb.flows.runs import import_runs

    drop = _ingest_two(tmp_path)
    write_run(drop / "flowtest" / "s1" / "bm25.txt", "bm25")
    write_run(drop / "flowtest" / "s2" / "bm25.txt", "bm25", depth=3)
    import_runs(drop_folder=str(drop))
    first = evaluate(measures=["AP", "P@5"])
    pairs = {(t["snapshot"], t["qrels"]): t for t in first["targets"]}
    assert set(pairs) == {("s1", "original"), ("s2", "original")}
    assert all(t["n_computed"] == 2 and t["n_cached"] == 0 for t in first["targets"])

    again = evaluate(measures=["AP", "P@5"])
    assert all(t["n_computed"] == 0 and t["n_cached"] == 2 for t in again["targets"])
    more = evaluate(collection="flowtest", snapshot="s1", measures=["AP", "nDCG@10"])
    assert [(t["n_computed"], t["n_cached"]) for t in more["targets"]] == [(1, 1)]


def test_evaluate_says_which_measures_over_how_many_runs(
    cli, db: str, prefect_api: None, tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from tcdb.flows.evaluate import evaluate
    from tcdb.flows.runs import import_runs

    drop = _ingest_two(tmp_path)
    for tag in ("bm25", "dense"):
        write_run(drop / "flowtest" / "s1" / f"{tag}.txt", tag)
    write_run(drop / "flowtest" / "s2" / "bm25.txt", "bm25")
    import_runs(drop_folder=str(drop))
    result = evaluate(measures=["AP", "P@5"])
    assert result["summary"] == ("2 measures (AP, P@5) over 3 runs in 2 (snapshot, qrels) "
                                 "pairs: 6 (run, measure) scores computed, 0 already stored")
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["evaluate"])))
    text = str(max(artifacts, key=lambda a: a.created).data)
    assert result["summary"] in text
    assert "| runs | (run, measure) computed | already stored |" in text
    assert "| flowtest | s1 | original | 2 | 4 | 0 |" in text

    code, out, err = cli("flows", "run", "evaluate", "--param", 'measures=["AP", "P@5", "RR"]')
    assert code == 0, err
    assert ("evaluate finished: 3 measures (AP, P@5, RR) over 3 runs in 2 (snapshot, qrels) "
            "pairs: 3 (run, measure) scores computed, 6 already stored") in out
    assert "AP, P@5, RR" in out and "item(s)" not in out


def test_evaluate_takes_the_original_qrels_unless_told(db: str, prefect_api: None,
                                                       tmp_path: Path) -> None:
    """Derived and pooled sets are scored when asked for, not every hour."""
    from tcdb.flows.evaluate import evaluate
    from tcdb.flows.runs import import_runs
    from tcdb.judging.qrels import import_qrels

    drop = _ingest_two(tmp_path)
    write_run(drop / "flowtest" / "s1" / "bm25.txt", "bm25")
    import_runs(drop_folder=str(drop))
    import_qrels(Database(),
                 "flowtest", "s1", "derived", tmp_path / "s1" / "qrels.txt", kind="derived")
    assert [(t["snapshot"], t["qrels"]) for t in evaluate(measures=["AP"])["targets"]] == [
        ("s1", "original")]
    every = evaluate(measures=["AP"], all_qrels=True)["targets"]
    assert [(t["snapshot"], t["qrels"]) for t in every] == [("s1", "original"),
                                                            ("s1", "derived")]


def test_evaluate_names_an_unknown_qrels_set(db: str, prefect_api: None, tmp_path: Path) -> None:
    from tcdb.flows.evaluate import evaluate

    _ingest_two(tmp_path)
    with pytest.raises(NotFoundError, match="pooled"):
        evaluate(collection="flowtest", snapshot="s1", qrels="pooled", measures=["AP"])


def test_refresh_chains_ingest_runs_evaluate_and_reports(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.refresh import refresh

    spec = write_spec(tmp_path)
    write_run(tmp_path / "runs" / "flowtest" / "s2" / "bm25.txt", "bm25")
    result = refresh(str(spec), drop_folder=str(tmp_path / "runs"), measures=["AP"])
    assert result["ingest"]["ingested"] == ["s1", "s2"]
    assert len(result["runs"]["imported"]) == 1
    assert [(t["snapshot"], t["n_computed"]) for t in result["evaluate"]["targets"]] == [
        ("s2", 1)]
    assert [(row["snapshot"], row["runs"]) for row in result["summary"]] == [("s1", 0), ("s2", 1)]

    again = refresh(str(spec), drop_folder=str(tmp_path / "runs"), measures=["AP"])
    assert again["ingest"]["ingested"] == [] and again["runs"]["imported"] == []
    assert [t["n_computed"] for t in again["evaluate"]["targets"]] == [0]


def test_build_pool_builds_exports_blind_and_is_idempotent(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from tcdb.flows.pools import build_pool
    from tcdb.flows.runs import import_runs
    from tcdb.pools.build import PoolBuildRequest
    from tcdb.pools.export import PoolExportRequest

    def request(depth: int) -> PoolBuildRequest:
        return PoolBuildRequest.of(collection="flowtest", snapshot="s2", name="p1",
                                   depth=depth, all_runs=True,
                                   exclude_judged="original" if depth == 6 else None)

    drop = _ingest_two(tmp_path)
    write_run(drop / "flowtest" / "s2" / "bm25.txt", "bm25", depth=6)
    write_run(drop / "flowtest" / "s2" / "dense.txt", "dense", depth=8)
    import_runs(drop_folder=str(drop))
    out = tmp_path / "pool.txt"
    result = build_pool(request(6), PoolExportRequest.of(name="p1", format="trec", out=out))
    pool = result["pool"]
    assert pool["status"] == "built" and sorted(pool["runs"]) == ["bm25", "dense"]
    # top 6 of both runs are d1..d6; d1..d4 are judged in the original qrels → d5, d6 per topic
    assert pool["n_documents"] == 2 * len(TOPICS)
    exported = out.read_text(encoding="utf-8")
    assert "d5" in exported and "bm25" not in exported and "dense" not in exported

    again = build_pool(request(6))
    assert again["pool"]["status"] == "unchanged" and again["export"] is None
    with pytest.raises(ConflictError, match="already has a pool 'p1' with other"):
        build_pool(request(3))


def test_build_pool_flow_builds_a_budgeted_strategy_pool_as_the_cli(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    """The flow takes `pool build`'s strategy, budget and batch and builds the very pool the
    operation builds (through `TASKS["pool_build"]`), exported blind."""
    from tcdb.api import pool_build
    from tcdb.flows.pools import build_pool
    from tcdb.flows.runs import import_runs
    from tcdb.pools import pool_documents
    from tcdb.pools.build import PoolBuildRequest
    from tcdb.pools.export import PoolExportRequest

    drop = _ingest_two(tmp_path)
    write_run(drop / "flowtest" / "s2" / "bm25.txt", "bm25", depth=6)
    write_run(drop / "flowtest" / "s2" / "dense.txt", "dense", depth=8)
    import_runs(drop_folder=str(drop))
    out = tmp_path / "round1.txt"
    result = build_pool(
        PoolBuildRequest.of(collection="flowtest", snapshot="s2", name="rrf2", all_runs=True,
                            exclude_judged="original", strategy="rrf", budget=2,
                            per_topic=True, batch=1),
        PoolExportRequest.of(name="rrf2", format="trec", out=out))
    pool = result["pool"]
    assert pool["status"] == "built" and pool["strategy"].startswith("rrf")
    assert (pool["budget"], pool["budget_per_topic"]) == (2, True)
    # round 1 of a budget of 2 per topic: the first unjudged document of each topic (d5)
    assert pool["n_documents"] == len(TOPICS) and result["export"]["n_documents"] == len(TOPICS)
    assert pool_documents(Database(), "rrf2") == {q: {"d5"} for q in TOPICS}
    assert sorted(out.read_text(encoding="utf-8").split()) == sorted(
        [*TOPICS, *["0"] * len(TOPICS), *["d5"] * len(TOPICS)])
    same = pool_build("flowtest", "s2", "rrf2-api", all_runs=True, exclude_judged="original",
                      strategy="rrf", budget=2, per_topic=True, batch=1)
    assert (pool_documents(Database(), "rrf2-api")
            == pool_documents(Database(), "rrf2"))
    assert (same.strategy, same.n_documents) == (pool["strategy"], pool["n_documents"])


# --- retries ----------------------------------------------------------------------------------


def test_retry_only_transient_errors() -> None:
    from sqlalchemy.exc import OperationalError

    from tcdb.flows.common import is_transient

    assert is_transient(OSError(5, "Input/output error"))
    assert is_transient(TimeoutError("read timed out"))
    assert is_transient(ConnectionResetError())
    assert is_transient(OperationalError("SELECT 1", {}, Exception("database is locked")))
    assert not is_transient(InputError("runs/a.txt", 3, "expected 6 columns"))
    assert not is_transient(NotFoundError("no collection 'x'"))
    assert not is_transient(FileNotFoundError(2, "No such file"))
    assert not is_transient(ValueError("a bug"))
    assert not is_transient(None)


def test_a_task_retries_a_transient_read_but_not_bad_input(prefect_api: None) -> None:
    from prefect import flow, task

    from tcdb.flows.common import retry_transient

    calls = {"flaky": 0, "bad": 0}

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_transient)
    def flaky_read() -> str:
        calls["flaky"] += 1
        if calls["flaky"] < 3:
            raise OSError(5, "Input/output error")
        return "read"

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_transient)
    def bad_read() -> str:
        calls["bad"] += 1
        raise InputError("qrels.txt", 7, "grade is not an integer")

    @flow
    def reads() -> str:
        return flaky_read()

    @flow
    def bad() -> str:
        return bad_read()

    assert reads() == "read" and calls["flaky"] == 3
    with pytest.raises(InputError, match=r"qrels.txt:7: grade is not an integer"):
        bad()
    assert calls["bad"] == 1


# --- artifacts --------------------------------------------------------------------------------


def test_each_flow_run_leaves_a_markdown_artifact(
    db: str, prefect_api: None, tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from tcdb.flows.ingest import ingest_new_snapshots

    spec = write_spec(tmp_path, name="artifacttest")
    ingest_new_snapshots(str(spec))
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["ingest-artifacttest"])))
    assert artifacts
    latest = max(artifacts, key=lambda a: a.created)
    assert latest.type == "markdown"
    text = str(latest.data)
    assert "**2** ingested, **1** skipped" in text
    assert "| s3 | skipped |" in text and "documents not found" in text
    assert "### Drift" in text and "### Timings (s)" in text


def test_artifact_keys_are_valid() -> None:
    from tcdb.flows.artifacts import artifact_key

    assert artifact_key("ingest", "LongEval Web", "2022_06") == "ingest-longeval-web-2022-06"
    assert artifact_key("--") == "tcdb"


# --- deployments ------------------------------------------------------------------------------


def test_deployment_schedules(tmp_path: Path) -> None:
    from tcdb.collections.specs.spec import list_specs
    from tcdb.flows.deployments import build_deployments, declared_deployments

    # only what is named: no spec, no ingestion; the hourly imports and evaluation always
    assert [d.name for d in declared_deployments()] == ["import-runs", "evaluate"]
    declared = {d.name: d for d in declared_deployments(shipped=True)}
    for spec in list_specs():
        name = f"ingest-{spec.stem}"
        assert declared[name].flow == "ingest-new-snapshots"
        assert declared[name].cron == "0 2 * * *"
        assert declared[name].parameters == {"spec_path": spec.name}
    assert declared["import-runs"].cron == "15 * * * *"
    assert declared["evaluate"].cron == "30 * * * *"
    by_name = {d.name for d in declared_deployments(["longeval-web"])}
    assert by_name == {"ingest-longeval-web", "import-runs", "evaluate"}

    built = {d.name: d for d in build_deployments(shipped=True)}
    assert set(built) == set(declared)
    crons = {name: [s.schedule.cron for s in dep.schedules] for name, dep in built.items()}
    assert crons["import-runs"] == ["15 * * * *"]
    assert crons["evaluate"] == ["30 * * * *"]
    assert all(c == ["0 2 * * *"] for n, c in crons.items() if n.startswith("ingest-"))
    assert built["evaluate"].entrypoint == "tcdb.flows.evaluate.evaluate"

    extra = write_spec(tmp_path, name="mine")
    names = [d.name for d in declared_deployments(specs=[extra])]
    assert names == ["ingest-mine", "import-runs", "evaluate"]


def test_a_spec_says_its_schedule(tmp_path: Path) -> None:
    from tcdb.flows.deployments import build_deployments

    spec = write_spec(tmp_path, name="mine")
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("grades:", "schedule: {interval: 45}\ngrades:"),
                    encoding="utf-8")
    built = {d.name: d for d in build_deployments([spec])}
    interval = built["ingest-mine"].schedules[0].schedule.interval
    assert interval.total_seconds() == 45
    spec.write_text(text.replace("grades:", 'schedule: {cron: "*/5 * * * *"}\ngrades:'),
                    encoding="utf-8")
    built = {d.name: d for d in build_deployments([spec])}
    assert built["ingest-mine"].schedules[0].schedule.cron == "*/5 * * * *"
    for bad, said in (("{cron: 'every day'}", "five fields"), ("{interval: 0}", "interval"),
                      ("{interval: 5, cron: '* * * * *'}", "exactly one of `cron`"),
                      ("{interval: '60'}", "interval"), ("{every: 60}", "every"),
                      ("nightly", "schedule"), ('{cron: "99 * * * *"}', "schedule")):
        spec.write_text(text.replace("grades:", f"schedule: {bad}\ngrades:"), encoding="utf-8")
        with pytest.raises(InputError) as info:
            build_deployments([spec])
        assert said in str(info.value) and "mine.yaml" in str(info.value), (bad, info.value)


def test_the_database_a_worker_opens_is_absolute(tmp_path: Path) -> None:
    from tcdb.flows.deployments import worker_database_url

    url, said = worker_database_url("sqlite:///tcdb.sqlite", tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve() / 'tcdb.sqlite'}"
    assert said is not None and "made absolute" in said
    assert worker_database_url(url, tmp_path) == (url, None)
    url, said = worker_database_url("postgresql+psycopg://tcdb:secret@db:5432/tcdb")
    assert url == "postgresql+psycopg://tcdb@db:5432/tcdb"
    assert said is not None and "password left out" in said


def test_flows_list_json_shows_schedules_without_a_server(cli) -> None:
    code, out, err = cli("flows", "list", "--json")
    assert code == 0, err
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["import-runs"]["schedule"] == "15 * * * *"
    assert rows["import-runs"]["flow"] == "import-runs"
    assert rows["ingest-longeval-web"]["parameters"] == {"spec_path": "longeval-web.yaml"}
    code, out, err = cli("flows", "list")
    assert code == 0 and "ingest-longeval-web" in out


def test_serve_with_a_server_registers_on_the_tcdb_work_pool(
    cli, prefect_api: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL

    monkeypatch.setenv("PREFECT_API_URL", str(PREFECT_API_URL.value()))
    code, out, err = cli("serve", "--json")
    assert code == 0, err
    reported = json.loads(out)
    assert reported["mode"] == "register" and "work pool 'tcdb'" in reported["where"]
    with get_client(sync_client=True) as client:
        pool = client.read_work_pool("tcdb")
        deployment = client.read_deployment_by_name("import-runs/import-runs")
        evaluate = client.read_deployment_by_name("evaluate/evaluate")
    assert pool.type == "process"
    assert deployment.work_pool_name == "tcdb"
    assert deployment.entrypoint == "tcdb.flows.runs.import_runs"
    assert [s.schedule.cron for s in deployment.schedules] == ["15 * * * *"]
    assert [s.schedule.cron for s in evaluate.schedules] == ["30 * * * *"]
    code, _, err = cli("serve", "--json")  # registering again updates in place
    assert code == 0, err
    with get_client(sync_client=True) as client:
        assert client.read_deployment_by_name("import-runs/import-runs").id == deployment.id


def test_flows_run_parses_params_and_runs_now(
    cli, db: str, prefect_api: None, tmp_path: Path
) -> None:
    spec = write_spec(tmp_path)
    code, out, err = cli("flows", "run", "ingest-new-snapshots", "--param",
                         f"spec_path={spec}", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["ingested"] == ["s1", "s2"] and list(result["skipped"]) == ["s3"]


def test_flows_run_works_on_the_database_the_user_named(
    cli, db: str, prefect_api: None, tmp_path: Path
) -> None:
    """`tcdb --database-url B flows run …` is a worker on B: the flow writes there, not in the
    configured database, and the process's own setting is back after the run."""
    import os

    from tcdb.api import collections, snapshots

    other = f"sqlite:///{tmp_path / 'other.sqlite'}"
    assert cli("--database-url", other, "db", "upgrade")[0] == 0
    spec = write_spec(tmp_path)
    code, out, err = cli("--database-url", other, "flows", "run", "ingest-new-snapshots",
                         "--param", f"spec_path={spec}", "--json")
    assert code == 0, err
    assert json.loads(out)["ingested"] == ["s1", "s2"]
    assert [s.label for s in snapshots("flowtest", database=other).snapshots
            if s.status == "complete"] == ["s1", "s2"]
    assert collections(database=db).collections == []
    assert os.environ["TCDB_DATABASE_URL"] == db


def test_flows_run_unknown_name_and_bad_param(cli) -> None:
    code, _, err = cli("flows", "run", "no-such-flow")
    assert code == 1 and "no flow or deployment 'no-such-flow'" in err
    code, _, err = cli("flows", "run", "import-runs", "--param", "novalue")
    assert code == 1 and "--param: novalue" in err and "k=v" in err
    code, _, err = cli("flows", "run", "import-runs", "--param", "colour=red")
    assert code == 1 and "'colour'" in err


def test_the_flows_are_found_by_their_names() -> None:
    """The flows a user may name are those the modules define (a helper flow is not one), and
    each deployment's entrypoint imports its very flow."""
    import importlib

    from tcdb.flows.deployments import build_deployments, entrypoint, flows, load_flow

    assert sorted(flows()) == ["build-pool", "evaluate", "import-runs", "ingest-new-snapshots",
                               "ingest-snapshot", "refresh", "simulate-pools"]
    for name, flow_obj in flows().items():
        module, _, function = entrypoint(name).rpartition(".")
        assert getattr(importlib.import_module(module), function) is flow_obj
        assert load_flow(name) is flow_obj
    with pytest.raises(NotFoundError, match="no flow 'each-on-dask'"):
        load_flow("each-on-dask")
    for deployment in build_deployments(shipped=True):
        assert deployment.entrypoint == entrypoint(deployment.flow_name)


def test_a_flow_over_an_operation_takes_its_request_fields_as_params() -> None:
    """`--param FIELD=VALUE` names a field of the flow's request; another request's fields are
    `export.FIELD`, its pool the one built; a pool without a depth or a budget is depth 10."""
    from tcdb.flows.deployments import prepare_run
    from tcdb.pools.build import PoolBuildRequest
    from tcdb.pools.export import PoolExportRequest
    from tcdb.vocabulary import PoolExportFormat

    pool = ["collection=web", "snapshot=2022-06", "name=p1", "all_runs=true"]
    flow_obj, params = prepare_run("build-pool", [*pool, "depth=5"])
    assert flow_obj.name == "build-pool"
    assert params == {"request": PoolBuildRequest.of(collection="web", snapshot="2022-06",
                                                     name="p1", all_runs=True, depth=5)}
    assert prepare_run("build-pool", pool)[1]["request"].depth == 10
    budgeted = prepare_run("build-pool", [*pool, "budget=40", "strategy=rrf"])[1]["request"]
    assert (budgeted.depth, budgeted.budget, budgeted.strategy) == (None, 40, "rrf")
    # a text field keeps what JSON would read as a number
    assert prepare_run("build-pool", ["collection=web", "snapshot=2022", "name=p1",
                                      "runs=[\"bm25\"]"])[1]["request"].snapshot == "2022"
    export = prepare_run("build-pool", [*pool, "export.out=p1.csv", "export.format=csv",
                                        "export.seed=7"])[1]["export"]
    assert export == PoolExportRequest.of(name="p1", format="csv", out="p1.csv", seed=7)
    assert export.format is PoolExportFormat.csv
    as_object = prepare_run("build-pool", [*pool, 'export={"format": "csv", "out": "p1.csv", '
                                           '"seed": 7}'])[1]["export"]
    assert as_object == export

    simulation = prepare_run("simulate-pools", ["collection=web", "snapshot=s1",
                                                "budgets=500,1000", "dask=local"])[1]
    assert simulation["request"].budgets == [500, 1000] and simulation["dask"] == "local"
    ingest = prepare_run("ingest-snapshot", ["collection=web", "snapshot=s1", "docs=d",
                                             "date=2022-06-01"])[1]["request"]
    assert (ingest.snapshot, str(ingest.docs), ingest.date.isoformat()) == (
        "s1", "d", "2022-06-01")


@pytest.mark.parametrize(("flow", "params", "message"), [
    ("build-pool", ["collection=web", "depht=5"],
     "flow 'build-pool' has no parameter 'depht' (parameters: collection, snapshot, name, "
     "depth, "),
    ("build-pool", ["export.colour=red"], "flow 'build-pool' has no parameter 'export.colour'"),
    ("build-pool", ["collection=web"], "flow 'build-pool' needs snapshot=…, name=…"),
    ("build-pool", ["collection=web", "snapshot=s1", "name=p1", "all_runs=true", "depth=0"],
     "depth=0: depth must be at least 1 (got 0) (flow 'build-pool')"),
    ("build-pool", ["collection=web", "snapshot=s1", "name=p1", "all_runs=true",
                    "contributed=true"],
     "runs/contributed/not_contributed/all_runs: choose the runs with exactly one of them "
     "(flow 'build-pool')"),
    ("build-pool", ["collection=web", "snapshot=s1", "name=p1", "all_runs=true",
                    "export.out=p.txt"], "flow 'build-pool' needs export.format=…"),
    ("build-pool", ["collection=web", "snapshot=s1", "name=p1", "all_runs=1"],
     "all_runs=1: must be true or false (flow 'build-pool')"),
    ("simulate-pools", ["collection=web", "snapshot=s1", 'budgets=["ten"]'],
     "budgets=[\"ten\"]: 'ten' is not a budget (a whole number ≥ 1) (flow 'simulate-pools')"),
    ("ingest-snapshot", ["collection=web", "snapshot=s1", "date=2022-13-01"],
     "date=\"2022-13-01\": must be a date (YYYY-MM-DD), or null (flow 'ingest-snapshot')"),
])
def test_a_bad_request_field_is_one_line_naming_it(flow: str, params: list[str],
                                                   message: str) -> None:
    from tcdb.errors import FieldError
    from tcdb.flows.deployments import prepare_run

    with pytest.raises(FieldError) as caught:
        prepare_run(flow, params)
    assert caught.value.field == "param" and "\n" not in str(caught.value)
    assert caught.value.reason.startswith(message)


def test_flows_run_builds_a_pool_from_its_fields_with_the_default_depth(
    cli, db: str, prefect_api: None, tmp_path: Path
) -> None:
    """`tcdb flows run build-pool` with neither a depth nor a budget builds the depth-10 pool
    `pool_build` builds at depth 10, and exports it as asked."""
    from tcdb.api import pool_build
    from tcdb.flows.runs import import_runs
    from tcdb.pools import pool_documents

    drop = _ingest_two(tmp_path)
    write_run(drop / "flowtest" / "s2" / "bm25.txt", "bm25", depth=8)
    write_run(drop / "flowtest" / "s2" / "dense.txt", "dense", depth=4)
    import_runs(drop_folder=str(drop))
    out = tmp_path / "deep.txt"
    code, stdout, err = cli("flows", "run", "build-pool", "--param", "collection=flowtest",
                            "--param", "snapshot=s2", "--param", "name=deep", "--param",
                            "all_runs=true", "--param", f"export.out={out}", "--param",
                            "export.format=trec", "--json")
    assert code == 0, err
    result = json.loads(stdout)
    # d1..d8 of bm25 and d1..d4 of dense, in each topic
    assert result["pool"]["depth"] == 10 and result["export"]["n_documents"] == 8 * len(TOPICS)
    assert pool_build("flowtest", "s2", "deep", all_runs=True, depth=10).status == "unchanged"
    with pytest.raises(ConflictError, match="already has a pool 'deep' with other"):
        pool_build("flowtest", "s2", "deep", all_runs=True, depth=9)
    assert pool_documents(Database(), "deep") == {q: {f"d{i}" for i in range(1, 9)}
                                                  for q in TOPICS}
    assert len(out.read_text(encoding="utf-8").splitlines()) == 8 * len(TOPICS)


def test_flows_run_reports_bad_input_in_one_line(
    cli, db: str, prefect_api: None, tmp_path: Path
) -> None:
    spec = write_spec(tmp_path)
    (tmp_path / "s1" / "qrels.txt").write_text("q1 0 d1 x\n", encoding="utf-8")
    code, _, err = cli("flows", "run", "ingest-new-snapshots", "--param", f"spec_path={spec}")
    assert code == 1 and "qrels.txt:1" in err and "Traceback" not in err


def test_param_values() -> None:
    from tcdb.flows.deployments import parse_params

    assert parse_params(["a=1", "b=x", "c=[\"AP\", \"P@10\"]", "d=true", "e=", "f=a=b"]) == {
        "a": 1, "b": "x", "c": ["AP", "P@10"], "d": True, "e": "", "f": "a=b"}


# --- Prefect's environment --------------------------------------------------------------------


def test_prefect_home_is_project_local_unless_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tcdb.flows.prefect_env import configure_prefect

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PREFECT_HOME", raising=False)
    monkeypatch.delenv("PREFECT_SERVER_ANALYTICS_ENABLED", raising=False)
    monkeypatch.setenv("PREFECT_API_URL", "")
    assert configure_prefect() == tmp_path.resolve() / ".prefect"
    assert os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert "PREFECT_API_URL" not in os.environ  # empty means unset, not an invalid URL

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("PREFECT_LOGGING_LEVEL", "DEBUG")
    assert configure_prefect() == tmp_path / "elsewhere"
    assert os.environ["PREFECT_LOGGING_LEVEL"] == "DEBUG"


def test_flows_list_imports_prefect_but_starts_no_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_HOME", "PREFECT_API_URL")}
    result = subprocess.run([sys.executable, "-m", "tcdb", "flows", "list", "--json"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert {row["name"] for row in json.loads(result.stdout)} >= {"import-runs", "evaluate"}
    assert "Starting temporary server" not in result.stdout + result.stderr
    assert not (tmp_path / ".prefect" / "prefect.db").exists()  # no server state was created
