"""`tcdb report source-bias` and `tcdb qrels by-source`: human-written against LLM-generated
documents (Cocktail). Registered on the `report` and `qrels` command groups by `tcdb.cli.app`."""

from __future__ import annotations

from typing import Any

import typer

from tcdb.cli.output import console, print_json, print_table

SOURCES_HELP = ("Documents carry their source from ingest (JSONL fields source / twin_of, or "
                "--source-labels FILE).")


def source_bias(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    measures: list[str] = typer.Option(..., "--measure", "-m", help="Measure (repeat), e.g. "
                                       "nDCG@1, nDCG@10."),
    runs: list[str] | None = typer.Option(None, "--run", help="Only these run tags (repeat)."),
    qrels: str | None = typer.Option(None, "--qrels", help="The qrels set to split by source "
                                     "(default: the snapshot's original qrels)."),
    human: str = typer.Option("human", "--human", metavar="LABEL",
                              help="Source label of human-written documents."),
    llm: str = typer.Option("llm", "--llm", metavar="LABEL",
                            help="Source label of LLM-generated documents."),
    no_twins: bool = typer.Option(False, "--no-twins", help="Do not copy an original's "
                                  "judgment to its LLM twin (Cocktail's rule is on by default)."),
    topics: str | None = typer.Option(None, "--topics", help="Restrict to this topic set."),
    bootstrap: int = typer.Option(1000, "--bootstrap", metavar="N",
                                  help="Bootstrap samples for the CI of Relative Δ (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    save: str | None = typer.Option(
        None, "--save", metavar="PREFIX",
        help="Also store the per-source qrels as derived sets PREFIX-human, PREFIX-llm, "
        "PREFIX-mixed and the runs' scores on them; a second report then reads them."),
    also: list[str] | None = typer.Option(
        None, "--with", metavar="COLLECTION/SNAPSHOT",
        help="Report on these too (repeat), then average across collections: each "
        "collection's mean Relative Δ over its runs, their mean, and per run tag its mean "
        "(Cocktail's Table 3)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON (with per-topic Δ)."),
) -> None:
    """Source bias per run: is human-written or LLM-generated text ranked higher?

    Each run's ranking of the mixed corpus is scored, unchanged, with ir_measures twice:
    HUMAN against the judgments of the documents labelled human only, LLM against those of the
    documents labelled llm only. An LLM document without a judgment of its own for a topic
    carries the judgment of its twin (the original it was rewritten from) for that topic;
    --no-twins turns this off. Both are means over the same topics, every topic judged in
    either set (unanswered topics count 0). Relative Δ = (HUMAN − LLM) / ((HUMAN + LLM) / 2)
    × 100: positive when human-written documents are ranked higher, negative when LLM text is
    preferred. CI: percentile bootstrap over topics; p: paired t-test and Wilcoxon of the
    per-topic HUMAN and LLM scores (scipy). Effectiveness is the score against both sets'
    judgments (the mixed corpus); r is Pearson's between effectiveness and Relative Δ across
    runs. Runs imported with --first-stage TAG are set beside their first stage.
    """
    from tcdb.errors import OptionError
    from tcdb.reports.source_bias import across_collections, source_bias_report

    targets = [(collection, snapshot)]
    for value in also or []:
        name, _, label = value.rpartition("/")
        if not name or not label:
            raise OptionError("--with", f"COLLECTION/SNAPSHOT, not {value!r}")
        targets.append((name, label))
    reports = [source_bias_report(c, s, measures, runs if (c, s) == targets[0] else None,
                                  qrels=qrels if (c, s) == targets[0] else None, human=human,
                                  llm=llm, copy_twins=not no_twins, topics=topics,
                                  bootstrap=bootstrap, seed=seed, save=save)
               for c, s in targets]
    if json_output:
        print_json(reports[0] if len(reports) == 1 else
                   {"reports": reports, "across": across_collections(reports)})
        return
    for report in reports:
        _show(report)
    if len(reports) > 1:
        for measure, result in across_collections(reports).items():
            print_table(["collection", "snapshot", "runs", "effectiveness", "human", "llm",
                         "Relative Δ %"],
                        [[c["collection"], c["snapshot"], c["n_runs"], _f(c["effectiveness"], 4),
                          _f(c["human"], 4), _f(c["llm"], 4), _f(c["relative_delta"])]
                         for c in result["collections"]],
                        title=f"{measure} across collections: mean Relative Δ "
                        f"{_f(result['relative_delta'])} %")


def _show(report: dict[str, Any]) -> None:
    sets = report["sets"]
    console.print(f"[bold]{report['collection']} / {report['snapshot']} · source bias · qrels "
                  f"{report['qrels']} · {report['n_topics']} topics[/]", highlight=False)
    console.print("documents: " + ", ".join(f"{n:,} {label}" for label, n
                                            in report["documents"].items())
                  + f" · judgments: {sets[report['human']]['n_judgments']:,} human, "
                  f"{sets[report['llm']]['n_judgments']:,} llm "
                  f"({sets[report['llm']]['n_copied']:,} copied from twins' originals)",
                  highlight=False, markup=False, emoji=False)
    for measure, result in report["measures"].items():
        print_table(["run", "effectiveness", f"{measure} human", f"{measure} llm",
                     "Relative Δ %", "CI low", "CI high", "p (t)", "first stage"],
                    [[r["run"], r["effectiveness"], r["human"], r["llm"], _f(r["relative_delta"]),
                      _f(r["ci_low"]), _f(r["ci_high"]), _p(r["p_t"]), r["first_stage"] or ""]
                     for r in result["runs"]],
                    title=f"{measure}: positive Δ ranks human-written text higher")
        avg, corr = result["average"], result["correlation"]
        console.print(f"average over {avg['n_runs']} runs: {measure} human {_f(avg['human'], 4)}"
                      f", llm {_f(avg['llm'], 4)}, Relative Δ {_f(avg['relative_delta'])} % · "
                      f"Pearson r (effectiveness, Δ) {_f(corr['r'], 3)} (p {_p(corr['p'])}, "
                      f"{corr['n_runs']} runs)", highlight=False, markup=False, emoji=False)
        if result["first_stage"]:
            print_table(["re-ranker", "first stage", "Δ first stage", "Δ re-ranked", "change"],
                        [[c["run"], c["first_stage"], _f(c["delta_first_stage"]),
                          _f(c["delta"]), _f(c["change"])] for c in result["first_stage"]],
                        title="bias carried from first stage to re-ranker")


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"


def qrels_by_source(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot label."),
    prefix: str = typer.Argument(..., help="Name prefix of the new sets: PREFIX-human, "
                                 "PREFIX-llm, PREFIX-mixed."),
    qrels: str | None = typer.Option(None, "--qrels", help="The qrels set to split (default: "
                                     "the snapshot's original qrels)."),
    human: str = typer.Option("human", "--human", metavar="LABEL",
                              help="Source label of human-written documents."),
    llm: str = typer.Option("llm", "--llm", metavar="LABEL",
                            help="Source label of LLM-generated documents."),
    no_twins: bool = typer.Option(False, "--no-twins", help="Do not copy an original's "
                                  "judgment to its LLM twin when the twin has none."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Store a qrels set's judgments per document source as derived sets (parent: the set).

    PREFIX-human keeps the judgments of documents labelled human in the snapshot, PREFIX-llm
    those of documents labelled llm — an LLM twin without a judgment of its own for a topic
    gets its original's (Cocktail's rule; counted in the set's provenance) — and PREFIX-mixed
    both. Running it again with the same judgments is a no-op.
    """
    from tcdb.judging.by_source import qrels_by_source as derive

    rows = derive(collection, snapshot, qrels, prefix, human, llm, copy_twins=not no_twins)
    if json_output:
        print_json(rows)
        return
    print_table(["qrels", "source", "parent", "judgments", "copied from originals"],
                [(r["name"], r["source"], r["parent"], f"{r['n_judgments']:,}",
                  f"{r['n_copied']:,}") for r in rows])
