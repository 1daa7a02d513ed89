"""`tcdb report subset`: a run's mean over a topic subset against the bootstrap interval of its
full-topic mean at the subset's size. Registered on `tcdb report` by `tcdb.cli.report`; this
module only parses options and prints.
"""

from __future__ import annotations

import typer

from tcdb.cli.output import console, print_json, print_table


def subset(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    topics: str = typer.Option(..., "--topics", metavar="SET",
                               help="The topic subset (e.g. a model's topics free of "
                               "contamination, from `tcdb topics set import`)."),
    runs: list[str] | None = typer.Option(None, "--run", help="Only these run tags (repeat; "
                                          "default every run of the snapshot)."),
    measure: str = typer.Option("nDCG@10", "--measure", "-m", help="Measure."),
    qrels: str = typer.Option("original", "--qrels", help="Qrels set name."),
    samples: int = typer.Option(10_000, "--samples", metavar="N",
                                help="Bootstrap resamples, each of the subset's size."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Full-topic mean with its 95 % bootstrap interval at the subset's size (topics drawn with
    replacement), the subset mean, and whether it falls below, inside or above — per run."""
    from tcdb.reports.subset import subset_report

    report = subset_report(collection, snapshot, topics, runs or None, measure, qrels,
                           samples, seed)
    if json_output:
        print_json(report)
        return
    model = f" · derived for {report['for_model']}" if report["for_model"] else ""
    how = f" ({report['method']})" if report["method"] else ""
    level = f"{100 * (1 - report['alpha']):g} %"
    print_table(["run", "system", "mean", f"{level} low", f"{level} high", "subset mean",
                 "subset − mean", "subset mean is"],
                [[r["run"], r["system"], r["mean"], r["ci_low"], r["ci_high"],
                  r["subset_mean"], r["delta"], r["position"]] for r in report["runs"]],
                title=f"{report['collection']} / {report['snapshot']} · qrels "
                f"{report['qrels']} · {report['measure']} · topic set {report['topic_set']}"
                f"{how}{model} · {report['n_subset']} of {report['n_topics']} topics · "
                f"{report['n_samples']:,} resamples of {report['n_subset']} topics, seed "
                f"{report['seed']}")
    counts = report["counts"]
    console.print(f"subset mean below the interval: {counts['below']} run(s), inside: "
                  f"{counts['inside']}, above: {counts['above']}", highlight=False,
                  markup=False)
    if report["skipped"]:
        console.print(f"skipped (no {report['measure']} scores): "
                      + ", ".join(report["skipped"]), highlight=False, markup=False)
