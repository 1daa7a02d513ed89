"""`tcdb literature import|list|report`: effectiveness figures reported in publications about a
collection, over the years, by model category."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from tcdb.cli.output import console, print_json, print_table

app = typer.Typer(help="Results reported in the literature: best and baseline figures per "
                  "publication, trends per model category, gains over a reference.",
                  no_args_is_help=True)

FILE_HELP = ("CSV (a header line), TSV or YAML (a list of mappings) with publication, year, "
             "venue, model, category (probabilistic / neural / llm), role (baseline / best), "
             "metric, value, cross_validated (true / false), notes.")


@app.command("import")
def import_(
    file: Path = typer.Argument(..., help=FILE_HELP),
    collection: str = typer.Argument(..., help="The collection the results are reported on."),
    replace: bool = typer.Option(False, "--replace", help="Store the file's value where a "
                                 "stored result of the same publication, model, role and "
                                 "metric differs (otherwise refused)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Import reported results from a file: every row validated first, nothing written on any
    error; the same file again adds nothing.

    Metrics are normalised to ir_measures' spelling when they parse in any case (ndcg@10 →
    nDCG@10, map → AP); other names are kept as written. Values of ir_measures measures must
    lie in [0, 1].
    """
    from tcdb.literature.reported import import_literature

    result = import_literature(file, collection, replace=replace)
    if json_output:
        print_json(result)
        return
    console.print(f"{result['file']} → {result['collection']}: {result['status']} · "
                  f"{result['n_added']} added, {result['n_replaced']} replaced, "
                  f"{result['n_unchanged']} unchanged", highlight=False, markup=False,
                  emoji=False)


@app.command("list")
def list_(
    collection: str = typer.Argument(..., help="Collection name."),
    metric: str | None = typer.Option(None, "--metric", "-m", help="Only this metric."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the reported results of a collection by year."""
    from tcdb.literature.reported import literature_frame

    frame = literature_frame(collection, metric)
    if json_output:
        print_json(frame.astype(object).where(frame.notna(), None).to_dict("records"))
        return
    print_table(["year", "publication", "venue", "model", "category", "role", "metric", "value",
                 "cv", "notes"],
                [(r.year, r.publication, r.venue, r.model, r.category, r.role, r.metric,
                  r.value, "yes" if r.cross_validated else "no", r.notes)
                 for r in frame.itertuples(index=False)])


@app.command("report")
def report(
    collection: str = typer.Argument(..., help="Collection name."),
    metric: str = typer.Option(..., "--metric", "-m", help="The metric to report on, e.g. "
                               "nDCG@10 or AP."),
    reference_value: float | None = typer.Option(
        None, "--reference-value", metavar="X", help="Gains are in % over this value (say, "
        "the best TREC run's)."),
    reference_name: str | None = typer.Option(None, "--reference-name", metavar="NAME",
                                              help="What the reference is."),
    reference_run: str | None = typer.Option(
        None, "--reference-run", metavar="SNAPSHOT/RUN", help="Gains over this stored run's "
        "mean of the metric (scored when missing)."),
    qrels: str | None = typer.Option(None, "--qrels", help="Qrels set of --reference-run "
                                     "(default: the snapshot's original qrels)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Best and baseline figures per year and model category, a trend per category, gains over
    a reference, and how often each metric is reported.

    Per year and category: the highest figure reported as best and the highest reported as
    baseline, with how many. Trend: a least-squares line (scipy's linregress) through every
    best figure of the category, year against value: slope per year with its 95 % CI (the
    slope's standard error times Student's t with n − 2 degrees of freedom), r and p; "–"
    below 3 figures. Gain: (value − reference) / reference × 100. Metric usage counts the
    publications that report each metric, over every metric of the collection.
    """
    from tcdb.literature.reported import literature_report

    result = literature_report(collection, metric, reference_value=reference_value,
                               reference_name=reference_name, reference_run=reference_run,
                               qrels=qrels)
    if json_output:
        print_json(result)
        return
    _show(result)


def _show(result: dict[str, Any]) -> None:
    metric, reference = result["metric"], result["reference"]
    line = (f"{result['collection']} · {metric} · {result['n_results']} results from "
            f"{result['n_publications']} publications")
    if reference is not None:
        line += f" · reference {reference['name']} = {reference['value']:.4f}"
        if reference["source"] == "run":
            line += f" ({reference['snapshot']}/{reference['run']}, qrels {reference['qrels']})"
    console.print(line, highlight=False, markup=False, emoji=False)
    gain_column = ["gain %"] if reference is not None else []
    print_table(["year", "category", "best", "n best", "baseline", "n baseline", *gain_column],
                [(r["year"], r["category"], r["best"], r["n_best"], r["baseline"],
                  r["n_baseline"], *([_pct(r["best_gain"])] if reference is not None else []))
                 for r in result["per_year"]],
                title=f"{metric} per year and category (highest reported)")
    print_table(["category", "n", "slope / year", "95 % CI", "intercept", "r", "p", "years"],
                [(t["category"], t["n"], _f(t["slope"], 4), _ci(t), _f(t["intercept"], 2),
                  _f(t["r"], 3), _p(t["p"]), _years(t))
                 for t in result["trends"]],
                title="least-squares trend of the best figures")
    if reference is not None:
        print_table(["year", "publication", "model", "category", metric, "gain %"],
                    [(g["year"], g["publication"], g["model"], g["category"], g["value"],
                      _pct(g["gain"])) for g in result["gains"]],
                    title=f"best figures over {reference['name']}")
    print_table(["metric", "publications", "results"],
                [(u["metric"], u["n_publications"], u["n_results"])
                 for u in result["metric_usage"]],
                title="metric usage (every metric of the collection)")


def _f(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def _ci(trend: dict[str, Any]) -> str:
    if trend["ci_low"] is None:
        return "–"
    return f"[{trend['ci_low']:+.4f}, {trend['ci_high']:+.4f}]"


def _years(trend: dict[str, Any]) -> str:
    if trend["first_year"] is None:
        return "–"
    return f"{trend['first_year']}–{trend['last_year']}"
