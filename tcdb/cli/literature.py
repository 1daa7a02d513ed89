"""`tcdb literature import|list|report`: effectiveness figures reported in publications about a
collection, over the years, by model category."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_table

if TYPE_CHECKING:
    from tcdb.literature.results import (
        LiteratureImportResult,
        LiteratureReport,
        LiteratureResult,
        Trend,
    )

app = typer.Typer(help=summary("literature"), no_args_is_help=True)


def _show_import(result: LiteratureImportResult) -> None:
    console.print(f"{result.file} → {result.collection}: {result.status} · "
                  f"{result.n_added} added, {result.n_replaced} replaced, "
                  f"{result.n_unchanged} unchanged", highlight=False, markup=False,
                  emoji=False)


def _show_list(result: LiteratureResult) -> None:
    print_table(["year", "publication", "venue", "model", "category", "role", "metric", "value",
                 "cv", "notes"],
                [(r.year, r.publication, r.venue, r.model, r.category, r.role, r.metric,
                  r.value, "yes" if r.cross_validated else "no", r.notes)
                 for r in result.results])


def _show(result: LiteratureReport) -> None:
    metric, reference = result.metric, result.reference
    line = (f"{result.collection} · {metric} · {result.n_results} results from "
            f"{result.n_publications} publications")
    if reference is not None:
        line += f" · reference {reference.name} = {reference.value:.4f}"
        if reference.source == "run":
            line += f" ({reference.snapshot}/{reference.run}, qrels {reference.qrels})"
    console.print(line, highlight=False, markup=False, emoji=False)
    gain_column = ["gain %"] if reference is not None else []
    print_table(["year", "category", "best", "n best", "baseline", "n baseline", *gain_column],
                [(r.year, r.category, r.best, r.n_best, r.baseline, r.n_baseline,
                  *([_pct(r.best_gain)] if reference is not None else []))
                 for r in result.per_year],
                title=f"{metric} per year and category (highest reported)")
    print_table(["category", "n", "slope / year", "95 % CI", "intercept", "r", "p", "years"],
                [(t.category, t.n, _f(t.slope, 4), _ci(t), _f(t.intercept, 2), _f(t.r, 3),
                  _p(t.p), _years(t))
                 for t in result.trends],
                title="least-squares trend of the best figures (p: two-sided test of slope 0; "
                "scipy linregress)")
    if reference is not None:
        print_table(["year", "publication", "model", "category", metric, "gain %"],
                    [(g.year, g.publication, g.model, g.category, g.value, _pct(g.gain))
                     for g in result.gains],
                    title=f"best figures over {reference.name}")
    print_table(["metric", "publications", "results"],
                [(u.metric, u.n_publications, u.n_results) for u in result.metric_usage],
                title="metric usage (every metric of the collection)")


def _f(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.1f}"


def _ci(trend: Trend) -> str:
    if trend.ci_low is None or trend.ci_high is None:
        return "–"
    return f"[{trend.ci_low:+.4f}, {trend.ci_high:+.4f}]"


def _years(trend: Trend) -> str:
    if trend.first_year is None:
        return "–"
    return f"{trend.first_year}–{trend.last_year}"


app.command("import")(derive.command("literature_import", show=_show_import))
app.command("list")(derive.command("literature", show=_show_list))
app.command("report")(derive.command("literature_report", show=_show))
