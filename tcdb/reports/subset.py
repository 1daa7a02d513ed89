"""`tcdb report subset`: is a run's mean over a topic subset what chance would give?

For every run of a snapshot (or those named), its full-topic mean (`trec_eval -c` over every
topic the qrels set judges, unanswered ones 0), the percentile bootstrap interval of that mean
when each resample draws as many topics as the subset has (with replacement, seeded), its mean
over the subset (the judged topics of a topic set — e.g. the topics an LLM has likely not seen,
`tcdb topics set import`), and whether the subset mean falls below, inside or above the
interval (`tcdb.analysis.subset`). Missing scores are computed first unless told not to.

A count (NumRet…) is averaged here, not summed as trec_eval's `all` line sums it: the report
sets a subset's figure against the full topic set's, and only a per-topic mean compares across
topic sets of different sizes (a sum over fewer topics is smaller by construction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from pydantic import BaseModel, Field, model_validator

from tcdb.errors import FieldError
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import TopicChoice, alpha_option, qrels_option, topic_set_option
from tcdb.scoring.measures import MeasureName
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

if TYPE_CHECKING:
    import pandas as pd

MAX_SAMPLES = 1_000_000


class SubsetRequest(Request):
    """Which runs to test against which topic subset, with how many resamples."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    topics: TopicChoice = topic_set_option(...)  # the subset: a set's name (e.g. a model's
    # topics free of contamination, `tcdb topics set import`), core or all as everywhere
    runs: Names | None = option(None, help="Only these run tags (repeat; default every run of "
                                 "the snapshot).")
    measure: MeasureName = option("nDCG@10", help="Measure.", short="-m")
    qrels: Name = qrels_option()
    bootstrap: int = option(BOOTSTRAP_SAMPLES, flag="--samples", metavar="N",
                            help="Bootstrap resamples, each of the subset's size.")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the bootstrap.")
    alpha: float = alpha_option("1 − the interval's level (0.05: 95 %).")
    compute: bool = option(True, help="Compute missing scores first (else only read).")

    @model_validator(mode="after")
    def _meaningful(self) -> Self:
        """Refuse what cannot mean anything before any work is done."""
        if not 1 <= self.bootstrap <= MAX_SAMPLES:
            raise FieldError("bootstrap", f"bootstrap samples must be 1…{MAX_SAMPLES:,}, got "
                             f"{self.bootstrap}")
        return self


class SubsetRun(BaseModel):
    run: str
    system: str
    mean: float | None  # over every judged topic
    ci_low: float | None  # of the full mean, resamples of the subset's size
    ci_high: float | None
    subset_mean: float | None
    delta: float | None  # subset mean − full mean
    position: str  # below, inside, above


class PositionCounts(BaseModel):
    below: int
    inside: int
    above: int


class SubsetResult(Result):
    """Per run: full mean, its bootstrap interval at the subset's size, and the subset mean."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    topic_set: str  # the selection as given: a set's name (or set:NAME), core or all
    for_model: str | None
    method: str | None
    n_topics: int
    n_subset: int
    n_samples: int
    seed: int
    alpha: float
    counts: PositionCounts
    runs: list[SubsetRun]
    skipped: list[str] = Field(default_factory=list)  # runs without scores of the measure
    lineage: Lineage | None = None  # what the figures were computed from

    def to_frame(self) -> pd.DataFrame:
        """`run, system, mean, ci_low, ci_high, subset_mean, delta, position`, one row per run."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs],
                            columns=list(SubsetRun.model_fields))


@operation("subset_ci", command="report subset")
def subset_ci(request: SubsetRequest, db: Database) -> SubsetResult:
    """Full-topic mean with its 95 % bootstrap interval at the subset's size (topics drawn with
    replacement), the subset mean, and whether it falls below, inside or above — per run.

    Why: a subset mean (say, over the topics a model has not seen) differs from the full mean
    by chance too; the interval says how much chance alone would move it.
    """
    import numpy as np

    from tcdb.analysis.subset import subset_intervals
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries.topic_selection import select_topics
    from tcdb.queries.topics import get_topic_set
    from tcdb.reports.fields import topic_set_name
    from tcdb.reports.run_scores import load_run_scores
    from tcdb.runs import get_runs
    from tcdb.scoring.measures import parse_measures

    r = request
    (name,) = parse_measures([r.measure], "measure")
    for_model = method = None
    with db.session() as session:  # an unknown set or run fails before anything is computed
        if topic_set_name(r.topics) is not None:
            topic_set = get_topic_set(session, r.collection, r.topics)
            for_model, method = topic_set.for_model, topic_set.method
        get_runs(session, get_snapshot(session, r.collection, r.snapshot), r.runs)
    data = load_run_scores(db, r.collection, r.snapshot, r.qrels, r.runs, name, compute=r.compute,
                           skip_unscored=True)
    with db.session() as session:  # the selection as every report resolves it
        try:
            members = select_topics(session, r.collection,
                                    get_snapshot(session, r.collection, r.snapshot),
                                    list(data.topic_ids), r.topics)
        except FieldError as error:
            raise FieldError("topics", f"topic selection {r.topics!r} has no topic judged in "
                             f"qrels set {r.qrels!r} of {r.snapshot!r}") from error
    subset = [i for i, t in enumerate(data.topic_ids) if t in members]
    scored = list(data.wide.columns)
    matrix = data.wide.to_numpy(dtype=float).T.reshape(len(scored), len(data.topic_ids))
    rows = (subset_intervals(matrix, np.array(subset), r.bootstrap, r.seed, r.alpha)
            if scored else [])
    records = [SubsetRun(run=tag, system=data.systems.get(tag) or "", **row)
               for tag, row in zip(scored, rows, strict=True)]
    counts = PositionCounts(**{p: sum(1 for x in records if x.position == p)
                               for p in ("below", "inside", "above")})
    return SubsetResult(
        collection=r.collection, snapshot=r.snapshot, qrels=r.qrels, measure=name,
        topic_set=r.topics, for_model=for_model, method=method,
        n_topics=len(data.topic_ids), n_subset=len(subset), n_samples=r.bootstrap,
        seed=r.seed, alpha=r.alpha, counts=counts, runs=records, skipped=data.skipped,
        lineage=lineage_of(db, r.collection, runs=[(r.snapshot, t) for t in scored],
                           qrels=[(r.snapshot, r.qrels)], topics=r.topics, measures=[name]))
