"""A published `all` line held to the per-topic lines of its own file (`scores import`).

A trec_eval file's `all` line is the mean of its per-topic lines, or `trec_eval -c`'s mean over
every judged topic (those without a line counting 0), or it contradicts them: which one is
decided here, within the rounding of the printed figures, and said in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tcdb.collections.scores.trec_eval import EvalOutput


@dataclass
class PublishedMean:
    """A measure's `all` line against the per-topic lines of the same file.

    `semantics`: "mean" (the all line is the mean of the lines), "alone" (the measure has no
    per-topic line to hold it to), "-c" (it is `trec_eval -c`'s
    mean over `n_judged` topics, the judged topics without a line counting 0), or
    "contradicts" (neither, beyond the rounding of the printed values). `reported` is the
    figure the import reports: the published one unless it contradicts its lines.
    """

    measure: str
    line: int
    published: float
    mean_of_lines: float  # over the topics with a line
    n_lines: int
    n_judged: int | None  # the topics the published mean divides by, when it is -c
    num_q: int | None  # trec_eval's own `num_q all` line, when the file has one
    semantics: str
    reported: float
    note: str | None = None  # what a front end says of a -c all line



def published_mean(output: EvalOutput, measure: str) -> PublishedMean:
    """Hold the `all` line of `measure` against its per-topic lines.

    Within the rounding of the printed figures (one unit of the all line's last decimal,
    which also covers per-topic values printed to as many) the all line is either the mean
    of the lines or `trec_eval -c`'s: the sum over every judged topic, divided by their
    number (`num_q all`, or else the one whole number that gives the figure), the judged
    topics without a line counting 0 (trec_eval before 10 printed no line for them).
    """
    from tcdb.analysis.means import exact_mean

    published = output.aggregate[measure]
    values = [v for m, _t, v in output.per_topic if m == measure]
    n = len(values)
    mean = exact_mean(values) if values else math.nan
    tolerance = 10.0 ** -output.aggregate_decimals.get(measure, 4) + 1e-12
    total = math.fsum(values)
    judged: int | None = None
    if not n:  # an all line alone (no per-topic line of the measure): nothing to hold it to
        semantics = "alone"
    elif abs(mean - published) <= tolerance:
        semantics = "mean"
    else:
        candidates = [output.num_q] if output.num_q is not None else (
            [round(total / published)] if published > 0 else [])
        judged = next((k for k in candidates if k is not None and k > n
                       and abs(total / k - published) <= tolerance), None)
        semantics = "-c" if judged is not None else "contradicts"
    line = output.aggregate_lines.get(measure, 0)
    found = PublishedMean(measure, line, published, mean, n, judged, output.num_q, semantics,
                          mean if semantics == "contradicts" else published)
    found.note = published_note(found)
    return found


def contradiction_said(path: Path, p: PublishedMean) -> str:
    """The warning for an all line that contradicts its per-topic lines: file, line, the
    measure, both values, and whether it is the -c mean over the judged topics."""
    c_mean = (f"; nor the trec_eval -c mean over its num_q {p.num_q} topics "
              f"({p.mean_of_lines * p.n_lines / p.num_q:.4f})"
              if p.num_q and p.num_q != p.n_lines else
              "; nor a trec_eval -c mean over more judged topics")
    return (f"{path}:{p.line}: {p.measure}: the published all line says {p.published:.4f}, "
            f"but the mean of its {p.n_lines:,} per-topic lines is {p.mean_of_lines:.4f}"
            f"{c_mean}: the per-topic values are stored, the all line is not")


def published_note(p: PublishedMean) -> str | None:
    """What a front end says of a -c all line (None for a plain or contradicting one)."""
    if p.semantics != "-c" or p.n_judged is None:
        return None
    missing = p.n_judged - p.n_lines
    return (f"{p.measure}: the published mean {p.published:.4f} is trec_eval -c's, over "
            f"{p.n_judged:,} judged topics ({missing:,} without a line, counted 0), reported as "
            f"published; the {p.n_lines:,} topics with lines average {p.mean_of_lines:.4f}, "
            f"which is what means over the topics these scores name give")
