"""`tcdb report judge-agreement COLLECTION SNAPSHOT --qrels A --vs B`: does a second judge (an
LLM such as UMBRELA, or a second assessor) agree with the first (NIST), as the papers on LLM
judges report it?

On the (topic, document) pairs both qrels sets of the snapshot judged: Cohen's κ unweighted,
linear and quadratic, Krippendorff's α ordinal and nominal, the confusion matrix, κ and α on the
labels binarised at `relevant`, per topic and overall (`tcdb.analysis.label_agreement`). Then
ranking fidelity: the runs ranked by mean `measure` under each set (per-topic scores stored by
`tcdb.scoring.evaluate`, missing ones computed first unless `compute` is off) compared with τ-b,
τ_AP (the first set's ranking the truth), τ-b and τ_AP among the first set's top k, RBO
extrapolated to k with persistence p, and the runs whose rank moves most
(`tcdb.analysis.ranking_fidelity`). Every figure has a percentile bootstrap interval over
topics (`bootstrap` resamples, `seed`). Topics: those both sets judge, under `topics`.

Why its own command and not `report agreement` with an optional POOL: that report asks about a
pool's documents and is named by the pool; this one is named by a snapshot and two of its
qrels sets, over every pair both judged. One request each keeps each argument list meaning one
thing. Reads only (besides the missing scores `compute` stores, as `report reusability`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, model_validator

from tcdb.errors import FieldError, InputError
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_from_rows
from tcdb.operations.paper import PaperTable
from tcdb.reports.common import Interval
from tcdb.reports.fields import qrels_option, topics_option
from tcdb.scoring.measures import MeasureName
from tcdb.vocabulary import BOOTSTRAP_SEED, PERCENTILE_BOOTSTRAP, bootstrap_said

if TYPE_CHECKING:
    import pandas as pd

JUDGE_BOOTSTRAP = 1_000  # resamples by default: every resample re-ranks the runs
# the figures' names as the CLI, the paper table and the dashboard print them
LABEL_NAMES = {"kappa": "κ", "kappa_linear": "κ linear", "kappa_quadratic": "κ quadratic",
               "alpha_ordinal": "α ordinal", "alpha_nominal": "α nominal",
               "kappa_binary": "κ binary", "alpha_binary": "α binary",
               "agreement": "agreement", "agreement_binary": "agreement binary"}
RANKING_NAMES = {"tau_b": "τ-b", "tau_ap": "τ_AP", "top_k_tau_b": "top-k τ-b",
                 "top_k_tau_ap": "top-k τ_AP", "top_k_overlap": "top-k overlap",
                 "rbo": "RBO_ext"}


class JudgeAgreementRequest(Request):
    """Which two qrels sets of a snapshot to compare, and how the runs are ranked."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    qrels: Name = qrels_option()  # the first judge (the truth of τ_AP)
    vs: Name = option(flag="--vs", help="The second judge's qrels set (e.g. an LLM's).")
    measure: MeasureName = option("nDCG@10", help="Measure the runs are ranked by.")
    runs: Names | None = option(None, help="Only these run tags (repeat; default every run).")
    relevant: int = option(1, help="Lowest grade that counts as relevant (binarised labels).")
    k: int = option(10, ge=1, le=10_000, help="Top k runs of the first set: top-k τ and RBO "
                    "depth.")
    p: float = option(0.9, gt=0, lt=1, help="RBO persistence p.")
    topics: Name = topics_option()
    bootstrap: int = option(JUDGE_BOOTSTRAP, ge=0, le=1_000_000,
                            help="Bootstrap resamples of topics for the intervals (0: none).")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the bootstrap.")
    compute: bool = option(True, help="Compute missing scores first (else only read).")

    @model_validator(mode="after")
    def _two_sets(self) -> JudgeAgreementRequest:
        if self.qrels == self.vs:
            raise FieldError("vs", f"compare two different qrels sets, not {self.qrels!r} "
                             "with itself")
        return self


class TopicAgreement(BaseModel):
    """One topic's pairs and their agreement (None where a figure is undefined)."""

    topic: str
    n_pairs: int
    kappa: float | None
    kappa_linear: float | None
    kappa_quadratic: float | None
    alpha_ordinal: float | None
    alpha_nominal: float | None
    kappa_binary: float | None
    alpha_binary: float | None
    agreement: float | None
    agreement_binary: float | None


class RunRanks(BaseModel):
    run: str
    score_a: float
    rank_a: int
    score_b: float
    rank_b: int
    rank_change: int  # places gained under `vs` (+) or lost (−)


class JudgeAgreementResult(Result):
    """Label agreement of two judges and the fidelity of the run rankings under their sets."""

    collection: str
    snapshot: str
    qrels: str
    vs: str
    assessors: list[str | None]
    topics: str
    n_topics: int
    n_judged: list[int]  # judgments of each set on the topics compared
    n_pairs: int  # (topic, document) pairs both judged
    relevant: int
    labels: list[int]  # the grade scale: rows and columns of `confusion`
    confusion: list[list[int]]  # rows: grades in `qrels`, columns: grades in `vs`
    confusion_binary: list[list[int]]  # [not relevant, relevant] × the same
    agreement: dict[str, float | None]  # LABEL_NAMES keys → overall figure
    per_topic: list[TopicAgreement]
    measure: str
    n_runs: int
    skipped: list[str]  # runs without scores under both sets
    k: int
    p: float
    ranking: dict[str, float | None]  # RANKING_NAMES keys → figure (None: fewer than two runs)
    runs: list[RunRanks]  # largest rank change first
    movers: list[RunRanks]
    top_k: list[str]  # the first set's top k runs
    intervals: dict[str, Interval] | None  # label and ranking figures → bootstrap interval
    n_samples: int
    seed: int
    lineage: Lineage | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per topic with its pairs and agreement figures, then the row `all`."""
        import pandas as pd

        rows = [t.model_dump() for t in self.per_topic]
        rows.append({"topic": "all", "n_pairs": self.n_pairs, **self.agreement})
        frame = pd.DataFrame(rows, columns=list(TopicAgreement.model_fields))
        frame.insert(0, "vs", self.vs)
        frame.insert(0, "qrels", self.qrels)
        return frame

    def confusion_frame(self) -> pd.DataFrame:
        """The confusion matrix as a square frame: rows `qrels`'s grades, columns `vs`'s."""
        import pandas as pd

        frame = pd.DataFrame(self.confusion, index=self.labels, columns=self.labels)
        frame.index.name, frame.columns.name = self.qrels, self.vs
        return frame

    def runs_frame(self) -> pd.DataFrame:
        """Each run's mean and rank under both sets (the ranking scatter's points)."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs],
                            columns=list(RunRanks.model_fields))

    def paper_table(self) -> PaperTable:
        """Every agreement and ranking figure with its interval, as a paper reports them."""
        return judge_paper(self)


def judge_paper(result: JudgeAgreementResult) -> PaperTable:
    """Figure, value, interval bounds; the caption says what was compared over what."""
    intervals = result.intervals or {}
    rows: list[list[Any]] = []
    groups: list[str | None] = []
    for names, values, group in (
            (LABEL_NAMES, result.agreement, f"labels ({result.n_pairs:,} pairs)"),
            (RANKING_NAMES, result.ranking, f"rankings by {result.measure} "
             f"({result.n_runs} runs)")):
        for key, name in names.items():
            interval = intervals.get(key)
            rows.append([name, values.get(key), interval.low if interval else None,
                         interval.high if interval else None])
            groups.append(group)
    said = (f"; 95 % intervals: {PERCENTILE_BOOTSTRAP}, "
            f"{bootstrap_said(result.n_samples, result.seed)}" if intervals else "")
    caption = (f"Agreement of qrels {result.vs} with {result.qrels} on {result.collection} "
               f"{result.snapshot}, topics {result.topics} ({result.n_topics} topics): labels "
               f"on the pairs both judged, binary at grade ≥ {result.relevant}; runs ranked by "
               f"mean {result.measure}, τ_AP with {result.qrels} as the truth, top-k at "
               f"k = {result.k}, RBO extrapolated (Webber et al. 2010) with p = {result.p:g}"
               f"{said}.")
    return PaperTable(columns=["figure", "value", "low", "high"], rows=rows, groups=groups,
                      caption=caption, label="tab:judge-agreement", lineage=result.lineage)


@operation("judge_agreement", command="report judge-agreement")
def judge_agreement(request: JudgeAgreementRequest, db: Database) -> JudgeAgreementResult:
    """Two judges' qrels sets of a snapshot: κ, α and the confusion matrix on the pairs both
    judged, and how alike the run rankings under each are (τ-b, τ_AP, top-k τ, RBO).

    Why: an LLM judge can stand in for assessors only if it labels alike and, what evaluation
    needs, ranks the systems alike, above all the best ones. Reads only.
    """
    import pandas as pd

    from tcdb.analysis.label_agreement import label_agreement
    from tcdb.analysis.means import counts_unanswered
    from tcdb.analysis.ranking_fidelity import ranking_fidelity
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import evaluations, load_judgments, measure_ids, qrels_topics, stored_scores
    from tcdb.queries.topic_selection import select_topics
    from tcdb.reports.common import per_topic_frame
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import evaluate
    from tcdb.scoring.scores import with_unanswered

    collection, snapshot, name = request.collection, request.snapshot, request.measure
    if request.compute:
        evaluate(db, collection, snapshot, request.qrels, [name], request.runs or None)
        evaluate(db, collection, snapshot, request.vs, [name], request.runs or None)
    with db.session() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        set_a = get_qrels_set(session, snap, request.qrels)
        set_b = get_qrels_set(session, snap, request.vs)
        judged_a, judged_b = load_judgments(conn, set_a.pk), load_judgments(conn, set_b.pk)
        both = set(judged_a["topic"].tolist()) & set(judged_b["topic"].tolist())
        topic_names = select_topics(session, collection, snap, sorted(both), request.topics)
        run_list = get_runs(session, snap, request.runs or None)
        tags = {r.pk: r.tag for r in run_list}
        ids = measure_ids(conn, [name])
        mid = ids.get(name)
        usable: list[int] = []
        scores_a: dict[Any, dict[int, float]] = {}
        scores_b: dict[Any, dict[int, float]] = {}
        if mid is not None:
            done_a = evaluations(conn, set_a.pk, list(tags), [mid])
            done_b = evaluations(conn, set_b.pk, list(tags), [mid])
            usable = [r for r in tags if (r, mid) in done_a and (r, mid) in done_b]
            scores_a = stored_scores(conn, set_a.pk, usable, [mid])
            scores_b = stored_scores(conn, set_b.pk, usable, [mid])
            if counts_unanswered(name):  # NumRel, NumQ: as trec_eval -c
                scores_a = with_unanswered(conn, set_a.pk, [name], ids, qrels_topics(
                    conn, set_a.pk, snap.pk), done_a, scores_a)
                scores_b = with_unanswered(conn, set_b.pk, [name], ids, qrels_topics(
                    conn, set_b.pk, snap.pk), done_b, scores_b)
        by_id = {r.pk: r for r in run_list}  # the lineage from the rows resolved above
        lineage = lineage_from_rows(session, collection,
                                    runs=[(snap.label, by_id[r]) for r in usable],
                                    qrels=[(snap.label, set_a.name, set_a),
                                           (snap.label, set_b.name, set_b)],
                                    topics=request.topics, measures=[name])
        assessors = [set_a.assessor, set_b.assessor]
    if not topic_names:
        raise InputError(f"qrels {set_a.name} and {set_b.name}", None,
                         "no topic judged in both under the topic selection")
    kept = set(topic_names)
    judged_a = judged_a[judged_a["topic"].isin(kept)]
    judged_b = judged_b[judged_b["topic"].isin(kept)]
    pairs = judged_a.merge(judged_b, on=["topic", "doc"], suffixes=("_a", "_b"))
    order = {t: i for i, t in enumerate(topic_names)}
    pairs = pairs.assign(order=pairs["topic"].map(order)).sort_values(["order", "doc"])
    pairs = pd.DataFrame({"topic": pairs["topic"].map(topic_names),
                          "grade_a": pairs["grade_a"], "grade_b": pairs["grade_b"]})
    labels = label_agreement(pairs, request.relevant, request.bootstrap, request.seed)
    intervals = {key: Interval(**value) for key, value in (labels["intervals"] or {}).items()}
    ranking: dict[str, Any] = {"figures": {}, "runs": [], "movers": [], "top_k": []}
    if len(usable) >= 2:
        per_a = per_topic_frame(scores_a, usable, tags, mid or 0, topic_names)
        per_b = per_topic_frame(scores_b, usable, tags, mid or 0, topic_names)
        ranking = ranking_fidelity(per_a, per_b, list(topic_names.values()), request.k,
                                   request.p, n_samples=request.bootstrap, seed=request.seed)
        intervals |= {key: Interval(**value)
                      for key, value in (ranking["intervals"] or {}).items()}
    return JudgeAgreementResult(
        collection=collection, snapshot=snapshot, qrels=set_a.name, vs=set_b.name,
        assessors=assessors, topics=request.topics, n_topics=len(topic_names),
        n_judged=[len(judged_a), len(judged_b)], n_pairs=labels["n_pairs"],
        relevant=request.relevant, labels=labels["labels"], confusion=labels["confusion"],
        confusion_binary=labels["confusion_binary"], agreement=labels["overall"],
        per_topic=[TopicAgreement(**row) for row in labels["per_topic"]], measure=name,
        n_runs=len(usable), skipped=sorted(tags[r] for r in tags if r not in set(usable)),
        k=request.k, p=request.p,
        ranking={key: ranking["figures"].get(key) for key in RANKING_NAMES},
        runs=[RunRanks(**r) for r in ranking["runs"]],
        movers=[RunRanks(**r) for r in ranking["movers"]], top_k=ranking["top_k"],
        intervals=intervals or None, n_samples=request.bootstrap, seed=request.seed,
        lineage=lineage)
