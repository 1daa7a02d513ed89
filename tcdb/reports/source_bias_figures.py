"""The source-bias report's figures, typed: per run, per measure, and across collections.

Kept apart from `tcdb.reports.source_bias` (the request and the loading) so each stays short;
the numbers come from `tcdb.analysis.source_bias` and `tcdb.analysis.means`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, computed_field

from tcdb.judging.by_source import MIXED
from tcdb.operations.lineage import Lineage
from tcdb.reports.source_bias_scores import Scores


class SourceSet(BaseModel):
    """One source's qrels: stored name (with `save`), judgments, and those copied from twins."""

    name: str | None
    n_judgments: int
    n_copied: int


class TopicBias(BaseModel):
    topic: str
    human: float
    llm: float
    delta: float | None  # Relative Δ on this topic (None: both 0)


class RunBias(BaseModel):
    """One run: effectiveness on the mixed corpus, its scores per source, Relative Δ."""

    run: str
    first_stage: str | None
    effectiveness: float
    human: float
    llm: float
    relative_delta: float | None  # %, positive: human-written text ranked higher
    ci_low: float | None
    ci_high: float | None
    p_t: float | None
    p_wilcoxon: float | None
    per_topic: list[TopicBias]


class BiasAverage(BaseModel):
    n_runs: int
    effectiveness: float | None
    human: float | None
    llm: float | None
    relative_delta: float | None


class BiasCorrelation(BaseModel):
    """Pearson's r between effectiveness and Relative Δ across runs (Cocktail Fig. 1)."""

    r: float | None
    p: float | None
    n_runs: int


class FirstStage(BaseModel):
    """A re-ranker beside its first stage: the bias it carried or changed (Cocktail Table 4)."""

    run: str
    first_stage: str | None
    delta_first_stage: float | None
    delta: float | None
    change: float | None


class SourceBiasMeasure(BaseModel):
    runs: list[RunBias]
    average: BiasAverage
    correlation: BiasCorrelation
    first_stage: list[FirstStage]
    aggregate: str = "mean"  # a run's figures: "sum" over topics for a count (NumRet…)


class SourceBiasReport(BaseModel):
    """One snapshot's source-bias report."""

    collection: str
    snapshot: str
    qrels: str  # the set split by source
    human: str
    llm: str
    twins: bool  # twins carry their original's judgment
    topics: str
    n_topics: int
    bootstrap: int  # resamples behind ci_low/ci_high (0: none)
    seed: int = 0  # of the bootstrap
    saved: str | None
    documents: dict[str, int]  # source label → documents
    sets: dict[str, SourceSet]  # human, llm, mixed
    measures: dict[str, SourceBiasMeasure]
    seconds: float
    lineage: Lineage | None = None  # the split qrels set (and the stored ones), the runs

    @computed_field  # type: ignore[prop-decorator]
    @property
    def tests(self) -> dict[str, str]:
        """What each interval and p-value is, in words, by JSON key (uncorrected)."""
        from tcdb.vocabulary import PERCENTILE_BOOTSTRAP, SIGNIFICANCE_TESTS, bootstrap_said

        return {"ci_low/ci_high": f"95 % {PERCENTILE_BOOTSTRAP} of Relative Δ, "
                f"{bootstrap_said(self.bootstrap, self.seed)}",
                "p_t": SIGNIFICANCE_TESTS["t"] + " of the per-topic human vs llm scores, "
                "uncorrected",
                "p_wilcoxon": SIGNIFICANCE_TESTS["wilcoxon"] + " of the per-topic human vs llm "
                "scores, uncorrected",
                "correlation.p": "Pearson correlation test (two-sided; scipy pearsonr) of "
                "effectiveness vs Relative Δ across runs"}


class CollectionAverage(BiasAverage):
    collection: str
    snapshot: str


class RunAcross(BaseModel):
    run: str
    n_collections: int
    relative_delta: float | None


class AcrossMeasure(BaseModel):
    """Cocktail's Table 3: each collection's average, their mean, each run tag's mean."""

    collections: list[CollectionAverage]
    relative_delta: float | None
    runs: list[RunAcross]


def measure_figures(name: str, scores: Scores, tags: dict[int, str],
                    first_stage: dict[str, str | None], topics: dict[int, str],
                    sources: tuple[str, str], bootstrap: int, seed: int,
                    unanswered: dict[str, dict[int, float]] | None = None) -> SourceBiasMeasure:
    """One measure: every run's bias, the averages, the correlation, first stage → re-ranker.
    `unanswered`: source → topic → what `trec_eval -c` gives a topic a run did not answer
    (NumRel: the source's relevant documents of it; 0 for every other measure)."""
    from tcdb.analysis import json_float
    from tcdb.analysis.means import aggregate, aggregate_word, sums_over_topics, trec_eval_mean
    from tcdb.analysis.source_bias import bias_correlation, run_bias

    human, llm = sources
    counts = sums_over_topics(name)  # Relative Δ and r are the same on sums: scale-free
    topic_ids = list(topics)

    def vector(run_id: int, source: str) -> np.ndarray:
        got = scores.get((run_id, source, name), {})
        fill = (unanswered or {}).get(source, {})
        return np.array([got.get(t, fill.get(t, 0.0)) for t in topic_ids], dtype=float)

    rows: list[RunBias] = []
    for run_id, tag in sorted(tags.items(), key=lambda item: item[1]):
        h, m = vector(run_id, human), vector(run_id, llm)
        bias = run_bias(h, m, n_samples=bootstrap, seed=seed)
        if counts:
            bias["human"], bias["llm"] = (aggregate(name, h.tolist(), len(h)),
                                          aggregate(name, m.tolist(), len(m)))
        per_topic = [TopicBias(topic=topics[t], human=float(a), llm=float(b), delta=d)
                     for t, a, b, d in zip(topic_ids, h.tolist(), m.tolist(),
                                           bias.pop("per_topic_delta"), strict=True)]
        mixed = vector(run_id, MIXED)
        rows.append(RunBias(run=tag, first_stage=first_stage.get(tag),
                            effectiveness=aggregate(name, mixed.tolist(), len(mixed)), **bias,
                            per_topic=per_topic))
    deltas = [r.relative_delta for r in rows]
    finite = [d for d in deltas if d is not None]
    average = BiasAverage(
        n_runs=len(rows),
        effectiveness=json_float(trec_eval_mean([r.effectiveness for r in rows])),
        human=json_float(trec_eval_mean([r.human for r in rows])),
        llm=json_float(trec_eval_mean([r.llm for r in rows])),
        relative_delta=json_float(trec_eval_mean(finite)))
    by_tag = {r.run: r for r in rows}
    carried = []
    for r in rows:
        if r.first_stage not in by_tag:
            continue
        before = by_tag[r.first_stage].relative_delta
        change = (json_float(r.relative_delta - before)
                  if r.relative_delta is not None and before is not None else None)
        carried.append(FirstStage(run=r.run, first_stage=r.first_stage,
                                  delta_first_stage=before, delta=r.relative_delta,
                                  change=change))
    correlation = bias_correlation([r.effectiveness for r in rows], deltas)
    return SourceBiasMeasure(runs=rows, average=average,
                             correlation=BiasCorrelation(**correlation), first_stage=carried,
                             aggregate=aggregate_word(name))


def across_collections(reports: Sequence[SourceBiasReport]) -> dict[str, AcrossMeasure]:
    """Several collections' reports side by side, as Cocktail's Table 3 averages per dataset
    group: per measure, each collection's average over its runs, the mean of those averages,
    and per run tag (the same system on several collections) its mean Relative Δ across them.
    """
    from tcdb.analysis import json_float
    from tcdb.analysis.means import trec_eval_mean

    measures = list(dict.fromkeys(m for r in reports for m in r.measures))
    out: dict[str, AcrossMeasure] = {}
    for measure in measures:
        present = [r for r in reports if measure in r.measures]
        per_collection = [CollectionAverage(collection=r.collection, snapshot=r.snapshot,
                                            **r.measures[measure].average.model_dump())
                          for r in present]
        by_run: dict[str, list[float]] = {}
        for r in present:
            for run in r.measures[measure].runs:
                if run.relative_delta is not None:
                    by_run.setdefault(run.run, []).append(run.relative_delta)
        deltas = [c.relative_delta for c in per_collection if c.relative_delta is not None]
        out[measure] = AcrossMeasure(
            collections=per_collection,
            relative_delta=json_float(trec_eval_mean(deltas)),
            runs=[RunAcross(run=tag, n_collections=len(values),
                            relative_delta=json_float(trec_eval_mean(values)))
                  for tag, values in sorted(by_run.items())])
    return out
