"""The `evaluate` operation: score a snapshot's runs (or an older snapshot's) and give the means.

Two ways of one question, "how do these runs score on this qrels set?": a snapshot's own runs
(`tcdb.scoring.evaluate`, optionally residual: the documents another set judged removed), or
with `run_from` the runs of an older snapshot carried over by identity
(`tcdb.scoring.cross_snapshot`). Only missing scores are computed; the means are
`trec_eval -c` over the qrels set's topics (or a topic set's).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Self

from pydantic import model_validator

from tcdb.errors import FieldError
from tcdb.operations import (
    Database,
    Name,
    Names,
    Request,
    Result,
    Version,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_from_rows, lineage_of, qrels_pair
from tcdb.reports.fields import TopicChoice, qrels_option, topic_set_name, topic_set_option
from tcdb.scoring.cross_snapshot import UnmappedRun
from tcdb.scoring.evaluate import EvaluationReport
from tcdb.scoring.measures import MeasureNames
from tcdb.scoring.score_operations import MeanScore, records

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.operations.paper import PaperTable

MEAN_COLUMNS = ["collection", "snapshot", "qrels", "run", "system", "measure", "value",
                "n_topics", "n_answered", "source", "topic_set"]


class EvaluateRequest(Request):
    """Which runs to score on which qrels set, with which measures."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()
    runs: Names | None = option(None, flag="--run", help="Run tag (repeat; default all).")
    measures: MeasureNames = option(help="ir_measures name, e.g. nDCG@10, AP (repeat).", short="-m")
    residual_of: Name | None = option(
        None, metavar="QRELS",
        help="Remove from every ranking the documents this qrels set judged (NAME, or "
        "SNAPSHOT/NAME of another snapshot) before scoring, as TREC-COVID's residual "
        "evaluation; the scores are kept apart from the run's own.")
    run_from: Name | None = option(
        None, metavar="SNAPSHOT_A",
        help="Score runs of this older snapshot on SNAPSHOT's qrels, documents and topics "
        "mapped by identity (what cannot be mapped is reported); stored apart from the "
        "runs' own scores.")
    version: Version | None = option(
        None, metavar="LABEL",
        help="Score this version of each run (`tcdb run versions` lists them; default: the "
        "latest, which every report uses). An earlier version is scored from its kept "
        "entries and not stored.")
    # the means over a topic set's judged topics (every topic is still scored and stored)
    topics: TopicChoice = topic_set_option()
    workers: int | None = option(
        None, ge=1, metavar="N",
        help="Worker processes scoring runs in parallel (default: the cores available, once "
        "there are 8 or more runs to score, from a command line or script; 1: in this "
        "process). The scores are the same.")

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.version is not None:
            for other in ("run_from", "residual_of"):
                if getattr(self, other) is not None:
                    raise FieldError(f"version/{other}", "give one of them, not both")
        if self.run_from is not None:
            if topic_set_name(self.topics) is not None:
                raise FieldError("run_from/topics", "give one of them, not both")
            if self.residual_of is not None:
                raise FieldError("run_from/residual_of", "give one of them, not both")
            if self.run_from == self.snapshot:
                raise FieldError("run_from", f"the runs are already of snapshot "
                                 f"{self.snapshot!r}: evaluate them without run_from")
        return self


class EvaluateResult(Result):
    """What was computed and reused, the means, and (runs of an older snapshot) what the
    qrels' snapshot no longer has."""

    collection: str
    snapshot: str
    qrels: str
    run_from: str | None
    residual_of: str | None
    topics: str | None
    version: str | None = None  # the run version asked for (None: each run's latest)
    report: EvaluationReport
    means: list[MeanScore]
    unmapped: dict[str, UnmappedRun]  # run tag → what could not be carried over (run_from)
    lineage: Lineage | None = None  # what the figures were computed from

    def paper_table(self) -> PaperTable:
        """Runs × measures, the means; best per measure in bold."""
        from tcdb.reports.paper_tables import means_paper

        return means_paper(self.means, f"Mean effectiveness on {self.collection} "
                           f"{self.snapshot}", self.lineage, "tab:evaluate")

    def to_frame(self) -> pd.DataFrame:
        """One row per run and measure: the mean, topics averaged over and answered."""
        import pandas as pd

        return pd.DataFrame([m.model_dump() for m in self.means], columns=MEAN_COLUMNS)


@operation("evaluate", command="evaluate", writes=True)
def evaluate(request: EvaluateRequest, db: Database) -> EvaluateResult:
    """Evaluate runs of a snapshot against a qrels set and print the means (trec_eval -c)."""
    if request.run_from is not None:
        return _evaluate_from(db, request)
    from tcdb.queries import topic_set_topic_ids
    from tcdb.runs.versions import versions_of
    from tcdb.scoring.evaluate import resolve_target, runs_lock, store_missing
    from tcdb.scoring.scores import scores_of
    from tcdb.scoring.versions import score_versions

    # one session, under the runs lock: the names resolved once, the missing scores stored,
    # the means and the lineage read from the same rows (a run imported meanwhile waits)
    with runs_lock(db, request.collection) as session:
        target = resolve_target(session, request.collection, request.snapshot, request.qrels,
                                request.measures, request.runs or None, request.residual_of)
        chosen = topic_set_name(request.topics)
        if chosen is not None:  # an unknown set fails before anything is computed
            topic_set_topic_ids(session, request.collection, chosen)
        # an earlier version asked for: scored from its kept entries, not stored
        earlier = {run_id: version for run_id, version in
                   (versions_of(session, target.runs, request.version)
                    if request.version is not None else {}).items() if version is not None}
        latest = replace(target, runs=[r for r in target.runs if r.pk not in earlier])
        report = store_missing(session, latest, progress=sys.stderr.isatty(),
                               workers=request.workers)
        computed = score_versions(session, target.snapshot, target.qrels_set, target.measures,
                                  earlier)
        report.n_computed += len(computed)
        report.runs = [r.tag for r in target.runs]
        table = scores_of(session, request.collection, target.snapshot, target.qrels_set,
                          target.measures, target.runs, per_topic=False, intersection=False,
                          residual_of_id=target.residual_id, topic_set=request.topics,
                          computed=computed)
        means = [MeanScore(**row) for row in records(table, MEAN_COLUMNS)]
        label = target.snapshot.label
        qrels = [(label, request.qrels, target.qrels_set)]
        if target.residual is not None and request.residual_of is not None:
            qrels.append((*qrels_pair(label, request.residual_of), target.residual))
        lineage = lineage_from_rows(session, request.collection,
                                    runs=[(label, run) for run in target.runs],
                                    qrels=qrels, topics=request.topics,
                                    measures=[m.measure for m in means], earlier=earlier)
    return EvaluateResult(collection=request.collection, snapshot=request.snapshot,
                          qrels=request.qrels, run_from=None, residual_of=request.residual_of,
                          topics=request.topics, version=request.version, report=report,
                          means=means, unmapped={}, lineage=lineage)


def _evaluate_from(db: Database, request: EvaluateRequest) -> EvaluateResult:
    """Runs of an older snapshot on this snapshot's qrels (`tcdb.scoring.cross_snapshot`)."""
    from tcdb.scoring.cross_snapshot import evaluate_from

    assert request.run_from is not None
    cross = evaluate_from(db, request.collection, request.snapshot, request.qrels,
                          request.measures, request.run_from, request.runs or None)
    means = [MeanScore(collection=cross.collection, snapshot=cross.snapshot, qrels=cross.qrels,
                     run=m.run, system=None, measure=m.measure, value=m.mean,
                     n_topics=m.n_topics, n_answered=None, source="ir_measures",
                     topic_set=None) for m in cross.means]
    return EvaluateResult(collection=request.collection, snapshot=request.snapshot,
                          qrels=request.qrels, run_from=request.run_from, residual_of=None,
                          topics=request.topics, report=cross, means=means,
                          unmapped=cross.unmapped,
                          lineage=_lineage(db, request, means))


def _lineage(db: Database, request: EvaluateRequest, means: list[MeanScore]) -> Lineage:
    """The runs of `run_from`, carried over, and the qrels of the snapshot they were scored on."""
    r = request
    assert r.run_from is not None
    return lineage_of(db, r.collection, runs=[(r.run_from, m.run) for m in means],
                      qrels=[(r.snapshot, r.qrels)], topics=r.topics,
                      measures=[m.measure for m in means])
