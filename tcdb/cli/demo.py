"""`tcdb demo`: build a demo database that shows what tcdb does, in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from tcdb.cli.output import console, format_p, print_json, print_table, say
from tcdb.vocabulary import TAU_FIGURES, bootstrap_said, tau_legend


def demo(
    seed: int = typer.Option(42, help="Seed of the generated collection."),
    fresh: bool = typer.Option(False, "--fresh", help="Rebuild the files and the database."),
    data_dir: Path = typer.Option(Path("demo-data"), "--data-dir",
                                  help="Where the generated snapshots and runs go."),
    documents: int = typer.Option(20_000, help="Documents per snapshot."),
    topics: int = typer.Option(100, help="Topics per snapshot."),
    depth: int = typer.Option(1000, help="Documents per topic in each run."),
    json_output: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Build a demo database: a generated LongEval-shaped collection through ingest, runs,
    evaluation, pooling, judging and the reusability and persistence reports."""
    from tcdb.cli.database import cli_database
    from tcdb.demo.run import run_demo

    db = cli_database()

    say = (lambda m: None) if json_output else (
        lambda m: console.print(Text.assemble(("·", "dim"), f" {m}")))
    if not json_output:
        console.print(Text.assemble(("tcdb demo", "bold"),
                                    f" into {db.shown}"))
    from tcdb.cli.derive import fields_as_flags

    with fields_as_flags():
        summary = run_demo(db, data_dir, seed=seed, fresh=fresh, n_documents=documents,
                           n_topics=topics, depth=depth, say=say)
    summary["next"] = [runnable(command) for command in summary["next"]]
    if json_output:
        print_json(summary)
        return
    _print(summary)


def _print(summary: dict[str, Any]) -> None:
    if summary["database_reused"]:
        console.print(Text("The database already held the demo: reused it (nothing was "
                           "ingested or imported twice). `tcdb demo --fresh` rebuilds it.",
                           style="yellow"))
    print_table(["snapshots", "added", "removed", "changed", "unchanged", "topics added",
                 "topics removed", "topics kept"],
                [(f"{d['from']} → {d['to']}", d["added"], d["removed"], d["changed"],
                  d["unchanged"], d["topics"]["added"], d["topics"]["removed"],
                  d["topics"]["kept"]) for d in summary["drift"]],
                title="Snapshot drift (documents by URL, topics by query text)")
    reus = summary["reusability"]
    print_table(["measure", *TAU_FIGURES.values(), "runs",
                 f"min per-topic {TAU_FIGURES['kendall_tau']}"],
                [(m, *(r[key] for key in TAU_FIGURES), r["n_runs"], r["per_topic_tau"]["min"])
                 for m, r in reus["measures"].items()],
                title=f"Reusability of {reus['snapshot']}: original vs expanded qrels")
    say(tau_legend("the ranking under the expanded qrels"))
    pers = summary["persistence"]
    first, last = pers["snapshots"][0], pers["snapshots"][-1]
    rows = [(s["system"] + (" (pivot)" if s["is_pivot"] else ""), s["arp"].get(first),
             s["arp"].get(last), s["result_delta"].get(last), s["er"].get(last),
             s["delta_ri"].get(last), format_p(s["p_value"].get(last)))
            for s in pers["measures"]["nDCG@10"]["systems"]]
    print_table(["system", f"ARP {first}", f"ARP {last}", "RΔ", "ER", "ΔRI", "p"], rows,
                title=f"Persistence of nDCG@10 from {first} to {last}, against the pivot")
    if pers.get("tests", {}).get("p_value"):
        console.print(f"p: {pers['tests']['p_value']}", highlight=False, markup=False)
    print_table(["system", "planted", "evidence", "recovered"],
                [(r["system"], r["planted"], r["evidence"], "✓" if r["recovered"] else "✗")
                 for r in summary["recovered"]], title="Planted behaviours the reports recovered")
    bias = summary["source_bias"]
    print_table(["run", "planted", f"Relative Δ % ({bias['measure']})", "95 % interval",
                 "recovered"],
                [(r["run"], r["planted"], f"{r['relative_delta']:+.1f}",
                  f"[{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]", "✓" if r["recovered"] else "✗")
                 for r in bias["recovered"]],
                title=f"Planted source bias the report recovered ({bias['collection']}: "
                "positive Δ ranks human-written text higher; 95 % percentile bootstrap over "
                f"topics, {bootstrap_said(bias['n_samples'], bias['seed'])})")
    console.print(f"done in {summary['timings']['total']:.1f} s. Next, try:")
    for command in summary["next"]:
        console.print(Text.assemble("  ", (command, "bold cyan")), highlight=False)


def runnable(command: str) -> str:
    """A `tcdb …` hint as it must be typed here: the program as it runs from the working
    directory (`program()`), and the demo's database whatever shell runs it."""
    import shlex

    from tcdb.cli.database import given_url

    if command == "tcdb" or command.startswith("tcdb "):
        command = program() + command[len("tcdb"):]
    url = given_url()
    return f"{command} --database-url {shlex.quote(url)}" if url else command


def program() -> str:
    """How to run this tcdb from the working directory: `tcdb` when that name on PATH is this
    one; else the script that runs (`.venv/bin/tcdb` inside the project, an absolute path
    elsewhere: a venv that is not active is not on PATH); else `python -m tcdb`.

    Why: "Next, try: tcdb dashboard" failed with `command not found` unless the venv was active.
    """
    import os
    import shlex
    import shutil
    import sys
    from pathlib import Path

    ran = sys.argv[0] if os.sep in sys.argv[0] else shutil.which(sys.argv[0]) or sys.argv[0]
    script = Path(ran)
    if not script.name.startswith("tcdb") or not script.is_file():  # python -m tcdb, pytest
        script = Path(sys.executable).parent / "tcdb"
    if not script.is_file():
        return f"{shlex.quote(_from_here(Path(sys.executable)))} -m tcdb"
    on_path = shutil.which("tcdb")
    if on_path and Path(on_path).resolve() == script.resolve():
        return "tcdb"
    return shlex.quote(_from_here(script))


def _from_here(path: Path) -> str:
    """`path` relative to the working directory when inside it (`./x`, `.venv/bin/tcdb`), else
    absolute."""
    import os
    from pathlib import Path

    full = Path(os.path.abspath(path))
    try:
        relative = full.relative_to(Path.cwd())
    except ValueError:
        return str(full)
    text = str(relative)
    return text if os.sep in text else f".{os.sep}{text}"
