"""`tcdb report source-bias`, `tcdb report documents-by-source` and `tcdb qrels by-source`:
human-written against LLM-generated documents (Cocktail). Registered on the `report` and
`qrels` command groups."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, format_p, heading, print_table
from tcdb.vocabulary import SOURCE_BIAS_FIGURES, source_bias_legend

if TYPE_CHECKING:
    from tcdb.judging.by_source import QrelsBySourceResult
    from tcdb.reports.source_bias import SourceBiasResult
    from tcdb.reports.source_bias_figures import SourceBiasReport

def _show_source_bias(result: SourceBiasResult) -> None:
    for report in result.reports or [result]:
        _show(report)
    for measure, across in (result.across or {}).items():
        print_table(["collection", "snapshot", "runs", "effectiveness", "human", "llm",
                     "Relative Δ %"],
                    [[c.collection, c.snapshot, c.n_runs, _f(c.effectiveness, 4),
                      _f(c.human, 4), _f(c.llm, 4), _f(c.relative_delta)]
                     for c in across.collections],
                    title=f"{measure} across collections: mean Relative Δ "
                    f"{_f(across.relative_delta)} %")


def _show(report: SourceBiasReport) -> None:
    sets = report.sets
    console.print(heading(f"{report.collection} / {report.snapshot} · source bias · qrels "
                          f"{report.qrels} · {report.n_topics} topics"), highlight=False)
    console.print("documents: " + ", ".join(f"{n:,} {label}" for label, n
                                            in report.documents.items())
                  + f" · judgments: {sets[report.human].n_judgments:,} human, "
                  f"{sets[report.llm].n_judgments:,} llm "
                  f"({sets[report.llm].n_copied:,} copied from twins' originals)",
                  highlight=False, markup=False, emoji=False)
    for measure, result in report.measures.items():
        named = SOURCE_BIAS_FIGURES
        print_table([named["run"], named["effectiveness"], f"{measure} {named['human']}",
                     f"{measure} {named['llm']}", named["relative_delta"], named["ci_low"],
                     named["ci_high"], named["p_t"], named["first_stage"]],
                    [[r.run, r.effectiveness, r.human, r.llm, _f(r.relative_delta),
                      _f(r.ci_low), _f(r.ci_high), format_p(r.p_t), r.first_stage or ""]
                     for r in result.runs],
                    title=f"{measure}: positive Δ ranks human-written text higher")
        console.print(source_bias_legend(report.tests), highlight=False, markup=False,
                      emoji=False)
        avg, corr = result.average, result.correlation
        console.print(f"average over {avg.n_runs} runs: {measure} human {_f(avg.human, 4)}"
                      f", llm {_f(avg.llm, 4)}, Relative Δ {_f(avg.relative_delta)} % · "
                      f"Pearson r (effectiveness, Δ) {_f(corr.r, 3)} (p {format_p(corr.p)}, "
                      f"{corr.n_runs} runs)", highlight=False, markup=False, emoji=False)
        if result.first_stage:
            print_table(["re-ranker", "first stage", "Δ first stage", "Δ re-ranked", "change"],
                        [[c.run, c.first_stage, _f(c.delta_first_stage), _f(c.delta),
                          _f(c.change)] for c in result.first_stage],
                        title="bias carried from first stage to re-ranker")


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _show_qrels_by_source(result: QrelsBySourceResult) -> None:
    print_table(["qrels", "source", "parent", "judgments", "copied from originals"],
                [(s.name, s.source, s.parent, f"{s.n_judgments:,}", f"{s.n_copied:,}")
                 for s in result.sets])


source_bias = derive.command("source_bias", show=_show_source_bias)
documents_by_source = derive.command("documents_by_source")
qrels_by_source = derive.command("qrels_by_source", show=_show_qrels_by_source)
