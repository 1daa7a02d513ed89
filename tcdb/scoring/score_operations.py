"""Score tables as operations: `scores` (one snapshot's means or per-topic values),
`per_topic_scores` (one measure's per-topic values across snapshots) and `scores_import`
(published per-topic scores for a run whose file is gone).

The tables are `tcdb.scoring.scores`' (`trec_eval -c` semantics, computed on demand); this
module gives each a typed request and result, so `tcdb scores`, `tcdb.api.scores` and the
flows read the same fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, computed_field, field_validator

from tcdb.operations import (
    Database,
    Name,
    Names,
    Request,
    Result,
    argument,
    operation,
    option,
)
from tcdb.operations.lineage import Lineage, lineage_of, qrels_pair
from tcdb.reports.fields import TopicChoice, qrels_option, topic_set_option
from tcdb.scoring.measures import MeasureName, MeasureNames
from tcdb.scoring.scores import MEAN_COLUMNS, PER_TOPIC_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.operations.paper import PaperTable


class MeanScore(BaseModel):
    """A run's mean of one measure (`trec_eval -c`; NaN where it was never evaluated)."""

    collection: str
    snapshot: str
    qrels: str
    run: str
    system: str | None
    measure: str
    value: float
    n_topics: int  # topics averaged over
    n_answered: int | None  # of them, those the run answered (None: runs of another snapshot)
    source: str | None  # ir_measures, or where imported scores came from
    topic_set: str | None  # the topic set the mean is over (None: every qrels topic)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def aggregate(self) -> str:
        """What `value` is: "sum" over the topics for a count (NumRet…, as trec_eval's all
        line), else "mean" — in the JSON of `scores` and `evaluate`."""
        from tcdb.analysis.means import aggregate_word

        return aggregate_word(self.measure)


class TopicScore(BaseModel):
    """A run's value of one measure on one topic (0 where it did not answer)."""

    collection: str
    snapshot: str
    qrels: str
    run: str
    system: str | None
    topic: str  # the topic's id in this snapshot
    topic_id: int
    topic_key: str | None  # its identity across snapshots
    measure: str
    value: float
    answered: bool


def records(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    """A score frame's rows as dicts of Python values (NaN kept as a float)."""
    rows: list[dict[str, Any]] = frame[columns].to_dict("records")
    for row in rows:
        for key, value in row.items():
            if hasattr(value, "item"):
                row[key] = value.item()
            elif key in ("system", "source", "topic_set", "topic_key") and value != value:
                row[key] = None  # NaN in a text column is "none"
    return rows


class ScoresRequest(Request):
    """Which runs of one snapshot to score on which qrels set, with which measures."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label (one: per_topic_scores follows topics "
                             "across several).")
    qrels: Name = qrels_option()
    measures: MeasureNames = option(["nDCG@10"], help="Measure (repeat).", short="-m")
    runs: Names | None = option(None, flag="--run", help="Run tag (repeat; default all).")
    per_topic: bool = option(False, help="One row per topic.")
    intersection: bool = option(
        False, help="Average over the topics each run answered (default: every qrels topic, "
        "unanswered ones count 0, as trec_eval -c).")
    residual_of: Name | None = option(
        None, metavar="QRELS",
        help="The residual scores: rankings without what this qrels set judged.")
    topics: TopicChoice = topic_set_option()  # means over its judged topics, unanswered ones 0
    compute: bool = option(True, help="Compute and store missing scores first (else only "
                           "read stored ones).")

    @field_validator("snapshot", mode="before")
    @classmethod
    def _one_snapshot(cls, value: Any) -> Any:
        if isinstance(value, Iterable) and not isinstance(value, str | bytes):
            raise ValueError("scores reads one snapshot; per_topic_scores gives per-topic "
                             "values across several")
        return value


class ScoresResult(Result):
    """Means (one row per run and measure) or, with `per_topic`, per-topic values."""

    collection: str
    snapshot: str
    qrels: str
    per_topic: bool
    intersection: bool
    topics: str | None
    means: list[MeanScore]
    scores: list[TopicScore]  # per topic (only with per_topic)
    lineage: Lineage | None = None  # what the figures were computed from, in every front end

    def paper_table(self) -> PaperTable:
        """Means: runs × measures, best per measure in bold (per topic: the frame)."""
        from tcdb.reports.paper_tables import means_paper

        if self.per_topic:
            return super().paper_table()
        return means_paper(self.means, f"Mean effectiveness on {self.collection} "
                           f"{self.snapshot}", self.lineage, "tab:scores")

    def to_frame(self) -> pd.DataFrame:
        """Means: `collection … run, system, measure, value, n_topics, n_answered, source,
        topic_set`; per topic: `… topic, topic_id, topic_key, measure, value, answered`."""
        import pandas as pd

        if self.per_topic:
            return pd.DataFrame([s.model_dump() for s in self.scores], columns=PER_TOPIC_COLUMNS)
        return pd.DataFrame([m.model_dump() for m in self.means], columns=MEAN_COLUMNS)


@operation("scores", command="scores table")
def scores(request: ScoresRequest, db: Database) -> ScoresResult:
    """Scores of a snapshot's runs; missing ones are computed and stored first."""
    from tcdb.scoring.scores import score_table

    frame = score_table(db, request.collection, request.snapshot, request.qrels, request.measures,
                        request.runs or None, request.per_topic, request.intersection,
                        residual_of=request.residual_of, compute=request.compute,
                        topics=request.topics)
    means = [] if request.per_topic else [MeanScore(**r) for r in records(frame, MEAN_COLUMNS)]
    per_topic = [TopicScore(**r) for r in records(frame, PER_TOPIC_COLUMNS)] \
        if request.per_topic else []
    rows: list[MeanScore | TopicScore] = [*means, *per_topic]
    return ScoresResult(collection=request.collection, snapshot=request.snapshot,
                        qrels=request.qrels, per_topic=request.per_topic,
                        intersection=request.intersection, topics=request.topics, means=means,
                        scores=per_topic, lineage=lineage_of(
                            db, request.collection,
                            runs=[(request.snapshot, row.run) for row in rows],
                            qrels=[(request.snapshot, request.qrels)] + (
                                [qrels_pair(request.snapshot, request.residual_of)]
                                if request.residual_of else []),
                            topics=request.topics,
                            measures=[row.measure for row in rows]))


class PerTopicScoresRequest(Request):
    """One measure's per-topic values of runs across snapshots."""

    collection: Name = argument(help="Collection name.")
    snapshots: Names = argument(help="Snapshot labels (each with its qrels set of that name).")
    qrels: Name = qrels_option()  # in every snapshot
    measure: MeasureName = option("nDCG@10", help="Measure.", short="-m")
    runs: Names | None = option(None, flag="--run", help="Run tag (repeat; default all; a tag "
                                 "missing from a snapshot is skipped there).")
    intersection: bool = option(False, help="Only the topics each run answered (default: "
                                "every qrels topic, unanswered ones 0).")
    topics: TopicChoice = topic_set_option()  # core: topics judged in every snapshot given
    compute: bool = option(True, help="Compute and store missing scores first (else only "
                           "read stored ones).")


class PerTopicScoresResult(Result):
    """Per-topic values; `topic_key` matches a topic across snapshots."""

    collection: str
    qrels: str
    measure: str
    topics: str  # the selection as given: all, core, a set's name (or set:NAME)
    scores: list[TopicScore]
    lineage: Lineage | None = None  # what the values were computed from

    def to_frame(self) -> pd.DataFrame:
        """One row per snapshot, run and topic (`topic` its id there, `topic_key` its
        identity across snapshots)."""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.scores], columns=PER_TOPIC_COLUMNS)


@operation("per_topic_scores", command="scores per-topic")
def per_topic_scores(request: PerTopicScoresRequest, db: Database) -> PerTopicScoresResult:
    """Per-topic values of one measure across snapshots, topics matched over time."""
    from tcdb.scoring.scores import per_topic_scores as table

    frame = table(db, request.collection, request.snapshots, request.qrels, request.measure,
                  request.runs or None, intersection=request.intersection,
                  compute=request.compute, topics=request.topics)
    rows = [TopicScore(**r) for r in records(frame, PER_TOPIC_COLUMNS)]
    return PerTopicScoresResult(
        collection=request.collection, qrels=request.qrels, measure=request.measure,
        topics=request.topics, scores=rows,
        lineage=lineage_of(db, request.collection,
                           runs=[(row.snapshot, row.run) for row in rows],
                           qrels=[(label, request.qrels) for label in request.snapshots],
                           topics=request.topics, measures=[request.measure]))


class ScoresImportRequest(Request):
    """Published per-topic scores, the snapshot they are of, and the qrels set (or source)
    they were computed with."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    file: Path = argument(help="trec_eval -q output, ir_measures TSV, or a tidy table with "
                          "the columns run, topic, measure, value (several runs).")
    qrels: Name | None = option(None, help="Qrels set the scores were computed on (default: "
                                "the snapshot's published set: judgments known only through "
                                "these scores).")
    run: Name | None = option(None, help="Run tag to store them under (default: trec_eval's "
                              "runid line, or every run of a tidy table).")
    system: Name | None = option(None, help="System (default: the tag).")
    source: str | None = option(None, help="Where published scores come from, e.g. a paper or "
                                "the organisers' results page (default: the file).")
    replace: bool = option(False, help="Overwrite different stored values.")


class ImportedRun(BaseModel):
    """One run's part of an import."""

    run: str
    status: str  # imported | unchanged | replaced
    measures: list[str]
    n_scores: int


class PublishedAllLine(BaseModel):
    """A measure's published `all` line held against the file's per-topic lines
    (`tcdb.scoring.score_import.PublishedMean`)."""

    measure: str
    line: int
    published: float
    mean_of_lines: float
    n_lines: int
    n_judged: int | None  # the topics a trec_eval -c mean divides by
    num_q: int | None
    semantics: str  # mean | -c | contradicts | alone (no per-topic line of the measure)
    reported: float  # the published figure, unless it contradicts its lines
    note: str | None  # what is said of a trec_eval -c all line


class ScoresImportResult(Result):
    """What was stored, per run and in sum."""

    collection: str
    snapshot: str
    qrels: str
    qrels_kind: str  # original, …, or published (no judgments: the scores' source instead)
    source: str | None  # where published scores came from
    run: str | None  # the run, when the file held one
    status: str  # imported | unchanged | replaced (any run)
    measures: list[str]
    n_scores: int
    skipped: list[str]  # measures of the file not imported (no ir_measures equivalent)
    runs: list[ImportedRun]
    topics_added: list[str]  # topics a snapshot registered from its scores' ids gained
    published_means: list[PublishedAllLine]  # the file's all lines against its topic lines
    topics_normalised: list[str]  # topic ids as given that were put in Unicode NFC
    warnings: list[str]  # an all line that contradicts its lines: file, line, both values

    def to_frame(self) -> pd.DataFrame:
        """One row per run and measure imported."""
        import pandas as pd

        return pd.DataFrame([{"collection": self.collection, "snapshot": self.snapshot,
                              "qrels": self.qrels, "run": r.run, "status": r.status,
                              "measure": m} for r in self.runs for m in r.measures],
                            columns=["collection", "snapshot", "qrels", "run", "status",
                                     "measure"])


@operation("scores_import", command="scores import", writes=True)
def scores_import(request: ScoresImportRequest, db: Database) -> ScoresImportResult:
    """Store published per-topic scores for runs whose files are gone (no qrels needed)."""
    from tcdb.scoring.score_import import import_scores

    report = import_scores(db, request.collection, request.snapshot, request.file,
                           qrels=request.qrels, run=request.run, system=request.system,
                           source=request.source, replace=request.replace)
    return ScoresImportResult(**report.as_dict())
