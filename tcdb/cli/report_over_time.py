"""`tcdb report topic-deltas` and `tcdb report ranking-agreement`: one system between two
snapshots, topic by topic. Registered on `tcdb report` by `tcdb.cli.report`; this module only
parses options and prints.
"""

from __future__ import annotations

from typing import Any

import typer

from tcdb.cli.output import console, err_console, format_cell, print_json, print_table


def _split(values: list[str]) -> list[str]:
    """`--snapshots a b` arrives as one value per option; accept commas and spaces too."""
    return [part for value in values for part in value.replace(",", " ").split() if part]


def _f(value: float | None) -> Any:
    return "–" if value is None else value


def _n(value: float | None) -> str:
    """A mean in a sentence, as the tables show numbers (`format_cell`: 4 decimals, – for none)."""
    return format_cell(value)


def _in_set(report: dict[str, Any]) -> str:
    return f" in topic set {report['topic_set']}" if report.get("topic_set") else ""


def topic_deltas(
    collection: str = typer.Argument(..., help="Collection name."),
    system: str = typer.Option(..., "--system", help="The system followed (name or group/name)."),
    snapshots: list[str] = typer.Option(..., "--snapshots", "-s",
                                        help="Snapshots A and B (B − A is shown)."),
    measure: str = typer.Option("nDCG@10", "--measure", "-m", help="Measure."),
    qrels: list[str] = typer.Option(
        ["original"], "--qrels",
        help="Qrels set name, once for both snapshots or once per snapshot in order."),
    pivot: str | None = typer.Option(None, "--pivot",
                                     help="Also show this system's change per topic."),
    topics: str | None = typer.Option(None, "--topics", metavar="SET",
                                      help="Only the core topics in this topic set."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Per core topic, the system's score in B minus its score in A, largest gain first."""
    from tcdb.reports.topic_deltas import topic_deltas_report

    report = topic_deltas_report(collection, system, _split(snapshots), measure, qrels, pivot,
                                 topics=topics)
    if json_output:
        print_json(report)
        return
    a, b = report["snapshots"]
    columns = [f"topic {a}", f"topic {b}", a, b, "Δ"]
    if report["pivot"]:
        columns += [f"pivot {a}", f"pivot {b}", "pivot Δ"]
    rows = []
    for row in report["topics"]:
        cells = [row["topic"][a], row["topic"][b], row["score_a"], row["score_b"], row["delta"]]
        if report["pivot"]:
            cells += [row["pivot_a"], row["pivot_b"], row["pivot_delta"]]
        rows.append(cells)
    pivot = f" · pivot {report['pivot']}" if report["pivot"] else ""
    print_table(columns, rows, title=f"{report['collection']} · {report['system']} · "
                f"{report['measure']} · {b} − {a} · {report['n_topics']} core topics"
                f"{_in_set(report)}{pivot}")
    console.print(f"mean Δ {_n(report['mean_delta'])} ({report['improved']} improved, "
                  f"{report['declined']} declined, {report['unchanged']} unchanged)"
                  + (f"; pivot mean Δ {_n(report['pivot_mean_delta'])}" if report["pivot"]
                     else ""),
                  highlight=False, markup=False)
    for warning in report["warnings"]:
        err_console.print(f"warning: {warning}", highlight=False, markup=False)


def ranking_agreement(
    collection: str = typer.Argument(..., help="Collection name."),
    system: str = typer.Option(..., "--system", help="The system followed (name or group/name)."),
    snapshots: list[str] = typer.Option(..., "--snapshots", "-s",
                                        help="Snapshots A and B whose rankings are compared."),
    depth: int = typer.Option(1000, "--depth", "-k",
                              help="Documents of each ranking compared (repro_eval: 1000)."),
    rbo_p: float = typer.Option(0.8, "--rbo-p", help="RBO's persistence p (top-heaviness)."),
    topics: str | None = typer.Option(None, "--topics", metavar="SET",
                                      help="Only the core topics in this topic set."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Kendall's τ Union and rank-biased overlap between the system's rankings of each core
    topic in A and B, documents matched by the collection's identity (e.g. URL)."""
    from tcdb.reports.ranking_agreement import ranking_agreement_report

    report = ranking_agreement_report(collection, system, _split(snapshots), depth, rbo_p,
                                      topics=topics)
    if json_output:
        print_json(report)
        return
    a, b = report["snapshots"]
    print_table([f"topic {a}", f"topic {b}", f"docs {a}", f"docs {b}", "common", "KTU", "RBO",
                 "note"],
                [[r["topic"][a], r["topic"][b], r["n_first"], r["n_later"], r["common"],
                  _f(r["ktu"]), _f(r["rbo"]), r["reason"] or ""] for r in report["topics"]],
                title=f"{report['collection']} · {report['system']} · runs "
                f"{report['runs'][a]} ({a}) vs {report['runs'][b]} ({b}) · top "
                f"{report['depth']} · RBO p {report['rbo_p']}")
    console.print(f"mean KTU {_n(report['mean_ktu'])} over {report['n_ktu']} topics · mean RBO "
                  f"{_n(report['mean_rbo'])} over {report['n_rbo']} topics "
                  f"({report['n_topics']} core topics{_in_set(report)})", highlight=False,
                  markup=False)
