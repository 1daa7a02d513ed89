"""`tcdb evaluate`: per-topic scores with ir_measures, stored; only missing ones are computed.

Derived from the `evaluate` operation (`tcdb.scoring.evaluation`); this module only prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, print_table

if TYPE_CHECKING:
    from tcdb.scoring.evaluation import EvaluateResult


def _show(result: EvaluateResult) -> None:
    """The means as runs × measures, and what was computed (and, for runs of an older
    snapshot, what the qrels' snapshot no longer has)."""
    from tcdb.cli.scores import show_means, subset_title

    report = result.report
    if result.run_from is not None:
        _show_from(result)
        return
    table = result.to_frame()
    residual = f" · residual of {result.residual_of}" if result.residual_of else ""
    version = f" · run version {result.version}" if result.version else ""
    show_means(table, f"{result.collection} / {result.snapshot} · qrels {result.qrels}"
               f"{residual}{version}{subset_title(table, result.topics)}")
    resubmitted = [r for r in (result.lineage.runs if result.lineage else [])
                   if r.version not in (None, "1")]
    if resubmitted and result.version is None:
        console.print("latest versions: " + ", ".join(f"{r.run} {r.version}"
                                                      for r in resubmitted)
                      + " (`tcdb run versions` lists the earlier ones)", highlight=False,
                      markup=False, emoji=False)
    note = f"computed {report.n_computed} (run, measure) pair(s), reused {report.n_cached}"
    if report.skipped:
        note += f"; skipped runs without entries: {', '.join(report.skipped)}"
    console.print(f"{note} · {report.seconds:.2f}s", highlight=False)


def _show_from(result: EvaluateResult) -> None:
    from tcdb.analysis.means import aggregate_word

    run_from, snapshot = result.run_from, result.snapshot
    new = next((u.topics_new for u in result.unmapped.values()), [])
    judged = next((m.n_topics + len(new) for m in result.means), 0)
    print_table(["run", "measure", "value", "topics"],
                [[m.run, f"{m.measure} ({aggregate_word(m.measure)})", m.value, m.n_topics]
                 for m in result.means],
                title=f"{result.collection} · runs of {run_from} on {snapshot}'s qrels "
                f"{result.qrels} (trec_eval -c over the judged topics {run_from} has too: "
                f"mapped {judged - len(new)} of {judged})")
    print_table(["run", "topics scored", f"topics gone ({run_from} ids)",
                 f"judged topics {run_from} lacks ({snapshot} ids, left out)", "entries",
                 "documents gone", "unresolved"],
                [[tag, u.n_topics_scored, ", ".join(u.topics_gone) or "none",
                  ", ".join(u.topics_new) or "none", u.n_entries,
                  u.entries_gone, u.entries_unresolved] for tag, u in result.unmapped.items()],
                title=f"what {snapshot} no longer has (documents gone stay in place, unjudged "
                "unless its qrels judge them)")
    console.print(f"computed {result.report.n_computed} (run, measure) pair(s), reused "
                  f"{result.report.n_cached} · {result.report.seconds:.2f}s", highlight=False)


evaluate = derive.command("evaluate", show=_show)
