"""`tcdb report subset`: a run's mean over a topic subset against the bootstrap interval of its
full-topic mean at the subset's size. Registered on `tcdb report` by `tcdb.cli.report`; derived
from the `subset_ci` operation, this module only prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, print_table, topics_said

if TYPE_CHECKING:
    from tcdb.reports.subset import SubsetResult


def show_subset(report: SubsetResult) -> None:
    """Every run's interval and subset mean in one table, then the counts and skipped runs."""
    model = f" · derived for {report.for_model}" if report.for_model else ""
    how = f" ({report.method})" if report.method else ""
    level = f"{100 * (1 - report.alpha):g} %"
    print_table(["run", "system", "mean", f"{level} low", f"{level} high", "subset mean",
                 "subset − mean", "subset mean is"],
                [[r.run, r.system, r.mean, r.ci_low, r.ci_high, r.subset_mean, r.delta,
                  r.position] for r in report.runs],
                title=f"{report.collection} / {report.snapshot} · qrels "
                f"{report.qrels} · {report.measure}{topics_said(report.topic_set)}"
                f"{how}{model} · {report.n_subset} of {report.n_topics} topics · "
                f"{report.n_samples:,} resamples of {report.n_subset} topics, seed "
                f"{report.seed}")
    counts = report.counts
    console.print(f"subset mean below the interval: {counts.below} run(s), inside: "
                  f"{counts.inside}, above: {counts.above}", highlight=False, markup=False)
    if report.skipped:
        console.print(f"skipped (no {report.measure} scores): " + ", ".join(report.skipped),
                      highlight=False, markup=False)


subset = derive.command("subset_ci", show=show_subset)
