"""`tcdb demo` end to end on a smaller collection: the reports recover the planted behaviours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcdb.demo.run import run_demo
from tcdb.operations import Database

pytestmark = pytest.mark.slow

SMALL = {"n_documents": 3000, "n_topics": 40, "depth": 200}


@pytest.fixture(scope="module")
def demo_summary(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import os

    folder = tmp_path_factory.mktemp("demo")
    old = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = f"sqlite:///{folder / 'tcdb.sqlite'}"
    try:
        first = run_demo(Database(), folder / "data", seed=7, **SMALL)
        second = run_demo(Database(), folder / "data", seed=7, **SMALL)
    finally:
        if old is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = old
    return {"first": first, "second": second, "data": folder / "data"}


def test_planted_behaviours_are_recovered(demo_summary: dict) -> None:
    summary = demo_summary["first"]
    recovered = {r["planted"]: r for r in summary["recovered"]}
    assert set(recovered) >= {"persistent", "decaying", "improving", "magical"}
    assert all(r["recovered"] for r in recovered.values()), summary["recovered"]
    last = summary["persistence"]["snapshots"][-1]
    systems = {s["system"]: s for s in summary["persistence"]["measures"]["nDCG@10"]["systems"]}
    planted = {r["planted"]: r["system"] for r in summary["recovered"]}
    assert systems[planted["decaying"]]["er"][last] < 0.8
    assert 0.8 <= systems[planted["persistent"]]["er"][last] <= 1.2
    assert systems[planted["improving"]]["er"][last] > 1.2
    runs = {r["run"]: r for r in summary["reusability"]["measures"]["AP"]["runs"]}
    magic = runs[planted["magical"]]
    assert magic["rank_b"] < magic["rank_a"]


def test_planted_source_bias_is_recovered(demo_summary: dict) -> None:
    """The LLM-preferring runs come out negative, the human-preferring one positive, the
    neutral one with 0 in its interval; the re-ranker moves its first stage towards LLM text."""
    bias = demo_summary["first"]["source_bias"]
    assert bias["documents"]["llm"] >= bias["documents"]["human"] // 2 > 0
    planted = {r["run"]: r for r in bias["recovered"]}
    assert {r["planted"] for r in planted.values()} == {"neutral", "prefers llm",
                                                        "prefers human"}
    assert all(r["recovered"] for r in planted.values()), bias["recovered"]
    assert planted["dense-llm"]["relative_delta"] < 0 < planted["human-pref"]["relative_delta"]
    [carried] = bias["first_stage"]
    assert (carried["run"], carried["first_stage"]) == ("rerank-llm", "bm25")
    assert carried["change"] < 0
    assert demo_summary["second"]["source_bias"]["recovered"] == bias["recovered"]


def test_the_demo_went_through_the_real_paths(demo_summary: dict) -> None:
    summary = demo_summary["first"]
    assert [s["status"] for s in summary["ingest"]] == ["ingested"] * 3
    assert summary["pool"]["status"] == "judged" and summary["pool"]["n_documents"] > 0
    drift = summary["drift"][0]
    assert drift["added"] > 0 and drift["removed"] > 0 and drift["changed"] > 0
    assert drift["topics"]["renumbered"] > 0
    # The planted truth: the generator's own record of its churn (demo.json), and the same
    # figures by hand from its parameters. Each step of the 3000 documents removes
    # round(.06 × 3000) = 180 and adds 180 (the size stays 3000), rewrites round(.10 × 2820)
    # = 282 of the 2820 survivors and re-numbers round(.02 × 2538) = round(50.76) = 51 of the
    # 2538 others, leaving 2487 as they were. Documents are kept by URL, so the diff sees the
    # 282 rewrites as changed and the 51 re-numbered (same URL and text) as unchanged. Topics:
    # round(.05 × 40) = 2 dropped and 2 added, 38 kept, every one under a new id (LongEval ids
    # carry the month: q0622…, q0722…).
    manifest = json.loads((demo_summary["data"] / "demo.json").read_text(encoding="utf-8"))
    parameters = manifest["parameters"]
    assert (parameters["seed"], parameters["n_documents"], parameters["n_topics"]) == (7, 3000, 40)
    assert (parameters["removed"], parameters["added"], parameters["rewritten"],
            parameters["renumbered"], parameters["topics_dropped"],
            parameters["topics_added"]) == (0.06, 0.06, 0.10, 0.02, 0.05, 0.05)
    labels = [s["label"] for s in manifest["snapshots"]]
    assert [(d["from"], d["to"]) for d in summary["drift"]] == list(zip(labels, labels[1:],
                                                                        strict=False))
    for step in summary["drift"]:
        planted = manifest["churn"][step["to"]]
        assert planted == {"removed": 180, "added": 180, "rewritten": 282, "renumbered": 51,
                           "unchanged": 2487}
        assert {k: step[k] for k in ("added", "removed", "changed", "unchanged", "before",
                                     "after")} == {
            "added": planted["added"], "removed": planted["removed"],
            "changed": planted["rewritten"],
            "unchanged": planted["renumbered"] + planted["unchanged"],
            "before": 3000, "after": 3000}
        topics = manifest["topic_drift"][step["to"]]
        assert topics == {"kept": 38, "dropped": 2, "added": 2}
        assert {k: step["topics"][k] for k in ("added", "removed", "kept", "renumbered")} == {
            "added": topics["added"], "removed": topics["dropped"], "kept": topics["kept"],
            "renumbered": topics["kept"]}
    json.dumps(summary, default=str)  # --json can print it


def test_running_it_again_reuses_everything(demo_summary: dict) -> None:
    second = demo_summary["second"]
    assert second["database_reused"] and second["files_reused"]
    assert [s["status"] for s in second["ingest"]] == ["unchanged"] * 3
    first = demo_summary["first"]["reusability"]["measures"]["AP"]["kendall_tau"]
    assert second["reusability"]["measures"]["AP"]["kendall_tau"] == first


def test_demo_cli_prints_json(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TCDB_DATABASE_URL", f"sqlite:///{tmp_path / 'tcdb.sqlite'}")
    code, out, err = cli("demo", "--json", "--documents", "1500", "--topics", "30",
                         "--depth", "200", "--seed", "3")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["collection"] == "longeval-demo" and summary["recovered"]
    assert (tmp_path / "tcdb.sqlite").exists() and (tmp_path / "demo-data").is_dir()
    code, _, err = cli("demo", "--documents", "1500", "--depth", "5000")
    assert code == 1 and "depth must be" in err


def test_running_it_again_after_normal_use(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run imported since and a pool of the README's name do not break the demo's re-run:
    it reuses the pool it made, over its own runs."""
    from tcdb.api import pool_build, run_import
    from tcdb.demo.run import COLLECTION, POOL_SNAPSHOT

    monkeypatch.setenv("TCDB_DATABASE_URL", f"sqlite:///{tmp_path / 'tcdb.sqlite'}")
    first = run_demo(Database(), tmp_path / "data", seed=5, **SMALL)
    pivot_run = (tmp_path / "data" / "runs" / POOL_SNAPSHOT / "bm25.run").read_text()
    mine = tmp_path / "mine.run"
    mine.write_text(pivot_run.replace(" bm25\n", " my-run\n"), encoding="utf-8")
    run_import(COLLECTION, POOL_SNAPSHOT, [mine])
    pool_build(COLLECTION, POOL_SNAPSHOT, "remainder50", depth=50, not_contributed=True,
               exclude_judged="original")
    second = run_demo(Database(), tmp_path / "data", seed=5, **SMALL)
    assert second["pool"] == first["pool"]


def test_demo_command_keeps_out_of_home_and_hints_at_its_database(tmp_path: Path) -> None:
    """`tcdb demo --database-url X` (the option after the command) leaves ~/.ir_datasets alone
    and its hints name the database they need."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items()
           if k not in ("IR_DATASETS_HOME", "TCDB_DATABASE_URL")}
    env["HOME"] = str(tmp_path / "home")
    url = f"sqlite:///{tmp_path / 'elsewhere.sqlite'}"
    done = subprocess.run(
        [sys.executable, "-m", "tcdb", "demo", "--database-url", url, "--data-dir",
         str(tmp_path / "data"), "--documents", "1500", "--topics", "30", "--depth", "200"],
        capture_output=True, text=True, env={**env, "COLUMNS": "200"}, cwd=tmp_path,
        timeout=600)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "home" / ".ir_datasets").exists()
    assert (tmp_path / "elsewhere.sqlite").exists()
    assert f"tcdb dashboard --database-url {url}" in done.stdout


def test_the_demo_ships_reported_results_once(demo_summary: dict) -> None:
    """The Literature page's illustrative figures, imported from the file shipped with the
    package; the second run finds them stored."""
    first, second = demo_summary["first"]["literature"], demo_summary["second"]["literature"]
    assert (first["status"], first["n_added"]) == ("added", 17)
    assert (second["status"], second["n_unchanged"]) == ("unchanged", 17)


def test_every_suggested_command_runs_as_printed(demo_summary: dict,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`Next, try:` names tcdb as it runs from here (not `tcdb` when the venv is not active):
    each command runs in a shell whose PATH lacks the venv; `dashboard` (a server) is parsed."""
    import os
    import shlex
    import subprocess
    import sys

    import typer

    from tcdb.cli.app import app, hoist_global_options
    from tcdb.cli.demo import program, runnable

    url = f"sqlite:///{demo_summary['data'].parent / 'tcdb.sqlite'}"
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    venv_bin = os.path.dirname(sys.executable)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if os.path.realpath(p) != os.path.realpath(venv_bin))
    monkeypatch.setenv("PATH", path)
    assert program() != "tcdb"  # the venv's tcdb is not on this PATH
    commands = [runnable(c) for c in demo_summary["first"]["next"]]
    assert commands[0] == f"{program()} dashboard --database-url {url}"
    group = typer.main.get_command(app)
    for command in commands:
        argv = shlex.split(command)
        assert shlex.join(argv[:len(shlex.split(program()))]) == program()
        args = argv[len(shlex.split(program())):]
        if args[0] == "dashboard":
            ctx = group.make_context("tcdb", hoist_global_options(args))
            pending = [*getattr(ctx, "_protected_args", []), *ctx.args]  # click ≥ 8.2
            name, sub, rest = group.resolve_command(ctx, pending)
            assert name == "dashboard" and sub is not None
            sub.make_context(name, rest, parent=ctx)  # the options it was given parse
            continue
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "COLUMNS": "120"})
        assert done.returncode == 0, (command, done.stderr[-2000:])
