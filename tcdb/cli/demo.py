"""`tcdb demo`: build a demo database that shows what tcdb does, in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from tcdb.cli.output import console, print_json, print_table


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
    from tcdb.demo.run import run_demo
    from tcdb.storage.db import get_engine, mask_url

    say = (lambda m: None) if json_output else (lambda m: console.print(f"[dim]·[/] {m}"))
    if not json_output:
        console.print(f"[bold]tcdb demo[/] into {mask_url(str(get_engine().url))}")
    from tcdb.cli.derive import fields_as_flags

    with fields_as_flags():
        summary = run_demo(data_dir, seed=seed, fresh=fresh, n_documents=documents,
                           n_topics=topics, depth=depth, say=say)
    if json_output:
        print_json(summary)
        return
    _print(summary)


def _print(summary: dict[str, Any]) -> None:
    if summary["database_reused"]:
        console.print("[yellow]The database already held the demo: reused it (nothing was "
                      "ingested or imported twice). `tcdb demo --fresh` rebuilds it.[/]")
    print_table(["snapshots", "added", "removed", "changed", "unchanged", "topics added",
                 "topics removed", "topics kept"],
                [(f"{d['from']} → {d['to']}", d["added"], d["removed"], d["changed"],
                  d["unchanged"], d["topics"]["added"], d["topics"]["removed"],
                  d["topics"]["kept"]) for d in summary["drift"]],
                title="Snapshot drift (documents by URL, topics by query text)")
    reus = summary["reusability"]
    print_table(["measure", "Kendall τ", "τ-b", "τ_AP", "runs", "min per-topic τ"],
                [(m, r["kendall_tau"], r["tau_b"], r["tau_ap"], r["n_runs"],
                  r["per_topic_tau"]["min"]) for m, r in reus["measures"].items()],
                title=f"Reusability of {reus['snapshot']}: original vs expanded qrels")
    pers = summary["persistence"]
    first, last = pers["snapshots"][0], pers["snapshots"][-1]
    rows = [(s["system"] + (" (pivot)" if s["is_pivot"] else ""), s["arp"].get(first),
             s["arp"].get(last), s["result_delta"].get(last), s["er"].get(last),
             s["delta_ri"].get(last), s["p_value"].get(last))
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
                "positive Δ ranks human-written text higher)")
    console.print(f"done in {summary['timings']['total']:.1f} s. Next, try:")
    for command in summary["next"]:
        console.print(f"  [bold cyan]{escape(_on_this_database(command))}[/]",
                      highlight=False)


def _on_this_database(command: str) -> str:
    """The hint as it must be typed to reach the demo's database, whatever shell runs it."""
    import os
    import shlex

    url = os.environ.get("TCDB_DATABASE_URL")
    return f"{command} --database-url {shlex.quote(url)}" if url else command
