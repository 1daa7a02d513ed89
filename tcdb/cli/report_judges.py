"""`tcdb report judge-agreement`: two judges' qrels sets of a snapshot (κ, α, confusion, τ, RBO)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcdb.cli import derive
from tcdb.cli.output import console, heading, print_table, say, topics_said

if TYPE_CHECKING:
    from tcdb.reports.common import Interval
    from tcdb.reports.judge_agreement import JudgeAgreementResult


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f"[{_f(interval.low)}, {_f(interval.high)}]"


def _show_judge_agreement(report: JudgeAgreementResult) -> None:
    from tcdb.reports.judge_agreement import LABEL_NAMES, RANKING_NAMES
    from tcdb.vocabulary import PERCENTILE_BOOTSTRAP, bootstrap_said

    intervals = report.intervals or {}
    console.print(heading(
        f"{report.collection} / {report.snapshot} · qrels {report.qrels} vs {report.vs}"
        + topics_said(report.topics) + f" · {report.n_topics} topics · {report.n_pairs:,} "
        f"pairs judged by both (of {report.n_judged[0]:,} and {report.n_judged[1]:,})"),
        highlight=False)
    print_table([f"{report.qrels} \\ {report.vs}", *map(str, report.labels)],
                [[str(g), *row] for g, row in zip(report.labels, report.confusion,
                                                  strict=True)],
                title="confusion matrix (grades)")
    rows = [[name, _f(report.agreement.get(key)), _ci(intervals.get(key))]
            for key, name in LABEL_NAMES.items()]
    rows += [[f"{name} ({report.measure})", _count(report.ranking.get(key))
              if key == "top_k_overlap" else _f(report.ranking.get(key)),
              _ci(intervals.get(key))] for key, name in RANKING_NAMES.items()]
    print_table(["figure", "value", "95 % interval"], rows,
                title=f"agreement (binary: grade ≥ {report.relevant}; top k = {report.k}, RBO "
                f"p = {report.p:g}; {report.n_runs} runs)")
    print_table(["topic", "pairs", *LABEL_NAMES.values()],
                [[t.topic, t.n_pairs, *(_f(getattr(t, key)) for key in LABEL_NAMES)]
                 for t in report.per_topic], title="per topic")
    if report.movers:
        print_table(["run", f"rank {report.qrels}", f"rank {report.vs}", "change"],
                    [[r.run, r.rank_a, r.rank_b, f"{r.rank_change:+d}"] for r in report.movers],
                    title="runs whose rank moves most")
    if report.skipped:
        say("left out (scored under only one set): " + ", ".join(report.skipped))
    if intervals:
        say(f"intervals: {PERCENTILE_BOOTSTRAP}, {bootstrap_said(report.n_samples, report.seed)}"
            f" · τ_AP: Yilmaz et al. 2008, truth the ranking under {report.qrels} · RBO_ext: "
            "Webber et al. 2010, extrapolated")


judge_agreement = derive.command("judge_agreement", show=_show_judge_agreement)
