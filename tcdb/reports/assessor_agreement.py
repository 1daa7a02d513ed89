"""`tcdb report agreement POOL`: do two assessors (or an assessor and an LLM judge, imported as
another qrels set) agree on a pool's documents, and would they rank the systems alike?

Cohen's κ — binary (relevant or not) and graded with weights — and the confusion matrix over
the pool's documents both sets judged (`tcdb.analysis.kappa`); then Kendall's τ-b and τ_AP
between the system rankings under each set as a whole (`tcdb.analysis.rank_correlation`), scores
from ir_measures. `topics` (a topic selection, as every report's) keeps only its topics,
for κ and for τ. Reads only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import field_validator, model_validator

from tcdb.errors import FieldError
from tcdb.operations import Database, Name, Names, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import topics_option
from tcdb.scoring.measures import MeasureName

if TYPE_CHECKING:
    import pandas as pd
    from sqlmodel import Session

    from tcdb.schema import Snapshot

WEIGHTS = ("none", "linear", "quadratic")  # tcdb.analysis.kappa's, without importing numpy


def found_collection(session: Session, snap: Snapshot) -> str:
    """The name of a snapshot's collection (a pool is named without it)."""
    from tcdb.schema import Collection

    coll = session.get(Collection, snap.collection_id)
    assert coll is not None
    return str(coll.name)


def _nan_to_none(value: float) -> float | None:
    return None if value != value else value


class AgreementRequest(Request):
    """Which two assessors' qrels sets to compare on which pool's documents."""

    pool: Name = argument(help="Pool name.")
    vs: Name = option(flag="--vs", help="The other assessor's qrels set (e.g. an LLM judge's, "
                     "imported with `tcdb qrels import`).")
    qrels: Name | None = option(None, help="The first assessor's qrels set (default: the pool's "
                               "pooled set).")
    collection: Name | None = option(None, help="The pool's collection, when ambiguous.")
    snapshot: Name | None = option(None, help="The pool's snapshot, when ambiguous.")
    measure: MeasureName = option("AP", help="Measure the systems are ranked by.")
    runs: Names | None = option(None, help="Only these run tags (repeat; default every run "
                                 "of the snapshot).")
    relevant: int = option(1, help="Lowest grade that counts as relevant (binary κ).")
    weights: str = option("linear", help="Graded κ weights: linear, quadratic or none.")
    topics: Name = topics_option()  # of κ and τ

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, weights: str) -> str:
        if weights not in WEIGHTS:
            raise ValueError(f"{weights!r} is not one of {', '.join(WEIGHTS)}")
        return weights

    @model_validator(mode="after")
    def _two_sets(self) -> AgreementRequest:
        if self.qrels is not None and self.qrels == self.vs:
            raise FieldError("vs", f"qrels set {self.vs!r} against itself")
        return self


class AgreementResult(Result):
    """Cohen's κ and the confusion matrix of two assessors on a pool, τ between the rankings."""

    pool: str
    collection: str | None
    snapshot: str
    qrels: str
    vs: str
    topics: str
    assessors: list[str | None]
    n_documents: int
    n_judged: list[int]  # by qrels, by vs
    n_overlap: int
    relevant: int
    weights: str
    kappa_binary: float | None
    kappa_graded: float | None
    kappa_graded_unweighted: float | None
    labels: list[int]  # the grades, rows and columns of `confusion`
    confusion: list[list[int]]  # rows: grades in `qrels`, columns: grades in `vs`
    measure: str
    n_runs: int
    tau_b: float | None
    tau_ap: float | None
    lineage: Lineage | None = None  # both qrels sets, the runs ranked, the topics, the measure

    def to_frame(self) -> pd.DataFrame:
        """The confusion matrix tidy: one row per grade in `qrels` × grade in `vs`, with the
        documents both graded so (κ and τ are single numbers: the result's fields)."""
        import pandas as pd

        rows = [{"pool": self.pool, "qrels": self.qrels, "vs": self.vs, "grade_qrels": a,
                 "grade_vs": b, "n_documents": self.confusion[i][j]}
                for i, a in enumerate(self.labels) for j, b in enumerate(self.labels)]
        return pd.DataFrame(rows, columns=["pool", "qrels", "vs", "grade_qrels", "grade_vs",
                                           "n_documents"])

    def confusion_frame(self) -> pd.DataFrame:
        """The confusion matrix as a square frame: rows `qrels`'s grades, columns `vs`'s."""
        import pandas as pd

        frame = pd.DataFrame(self.confusion, index=self.labels, columns=self.labels)
        frame.index.name, frame.columns.name = self.qrels, self.vs
        return frame


@operation("assessor_agreement", command="report agreement")
def assessor_agreement(request: AgreementRequest, db: Database) -> AgreementResult:
    """Assessor agreement on a pool: Cohen's κ (binary, graded weighted), the confusion
    matrix, and τ between the system rankings under each assessor's qrels.

    Why: an LLM judge (or a second assessor) is usable when it agrees with the first on the
    pool's documents and, what matters for evaluation, ranks the systems alike. Reads only.
    """
    import pandas as pd
    from sqlalchemy import text

    from tcdb.analysis.kappa import cohen_kappa, confusion_matrix, grade_labels
    from tcdb.analysis.rank_correlation import tau_ap, tau_b
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.pools.inspect import get_pool
    from tcdb.pools.simulation import mean_scores
    from tcdb.queries import snapshot_topics
    from tcdb.queries.qrels import qrels_of
    from tcdb.queries.runs import read_runs
    from tcdb.queries.topic_selection import topic_lists
    from tcdb.runs import get_runs
    from tcdb.schema import QrelsSet, Snapshot
    from tcdb.scoring.measures import parse_measures

    pool, qrels, versus, topics = request.pool, request.qrels, request.vs, request.topics
    relevant, weights = request.relevant, request.weights
    (name,) = parse_measures([request.measure], "measure")
    with db.session() as session:
        found = get_pool(session, pool, request.collection, request.snapshot)
        snap = session.get(Snapshot, found.snapshot_id)
        assert snap is not None
        if qrels is None:
            if found.pooled_qrels_id is None:
                raise FieldError("qrels", f"pool {pool!r} has no judgments yet: import them, "
                                 "or name the first assessor's set")
            first = session.get(QrelsSet, found.pooled_qrels_id)
            assert first is not None
        else:
            first = get_qrels_set(session, snap, qrels)
        second = get_qrels_set(session, snap, versus)
        if first.id == second.id:
            raise FieldError("vs", f"qrels set {second.name!r} against itself")
        conn = session.connection()
        only = ""
        kept: set[str] | None = None
        if topics != "all":
            names = snapshot_topics(conn, snap.pk)
            members = topic_lists(session, found_collection(session, snap),
                                   {snap.label: dict.fromkeys(names, "")},
                                   topics)[snap.label]
            only = f" AND pe.topic_id IN ({', '.join(str(int(t)) for t in members)})"
            kept = {names[t][0] for t in members}
        pairs = conn.execute(text(
            "SELECT ja.grade, jb.grade FROM pool_entry pe "
            "JOIN judgment ja ON ja.qrels_set_id = :a AND ja.topic_id = pe.topic_id "
            "AND ja.document_id = pe.document_id "
            "JOIN judgment jb ON jb.qrels_set_id = :b AND jb.topic_id = pe.topic_id "
            "AND jb.document_id = pe.document_id WHERE pe.pool_id = :p" + only),
            {"a": first.id, "b": second.id, "p": found.id}).tuples().all()
        judged = {}
        for label, qset in (("a", first), ("b", second)):
            judged[label] = int(conn.execute(text(
                "SELECT COUNT(*) FROM pool_entry pe JOIN judgment j ON j.qrels_set_id = :q "
                "AND j.topic_id = pe.topic_id AND j.document_id = pe.document_id "
                "WHERE pe.pool_id = :p" + only), {"q": qset.id, "p": found.id}).scalar_one())
        chosen = get_runs(session, snap, request.runs or None)
        qrels_a = qrels_of(conn, first.pk)
        qrels_b = qrels_of(conn, second.pk)
        tags = {r.pk: r.tag for r in chosen}
        run_dicts = {tags[i]: run for i, run in read_runs(conn, snap.pk, list(tags))}
        lineage = lineage_of(db, found_collection(session, snap),
                             runs=[(snap.label, tag) for tag in tags.values()],
                             qrels=[(snap.label, first.name), (snap.label, second.name)],
                             topics=topics, measures=[name], session=session)
    if kept is not None:
        qrels_a = {t: docs for t, docs in qrels_a.items() if t in kept}
        qrels_b = {t: docs for t, docs in qrels_b.items() if t in kept}
        run_dicts = {tag: {t: docs for t, docs in run.items() if t in kept}
                     for tag, run in run_dicts.items()}
    a = [int(x) for x, _ in pairs]
    b = [int(y) for _, y in pairs]
    labels = grade_labels(a, b)
    binary_a = [int(x >= relevant) for x in a]
    binary_b = [int(y >= relevant) for y in b]
    taus: dict[str, float | None] = {"tau_b": None, "tau_ap": None}
    if len(run_dicts) >= 2 and qrels_a and qrels_b:
        means_a = pd.Series(mean_scores(run_dicts, qrels_a, name, len(qrels_a)))
        means_b = pd.Series(mean_scores(run_dicts, qrels_b, name, len(qrels_b)))
        taus = {"tau_b": _nan_to_none(tau_b(means_a, means_b)),
                "tau_ap": _nan_to_none(tau_ap(means_a, means_b))}
    return AgreementResult(
        pool=found.name, collection=request.collection, snapshot=snap.label, qrels=first.name,
        vs=second.name, topics=topics, assessors=[first.assessor, second.assessor],
        n_documents=found.n_documents, n_judged=[judged["a"], judged["b"]],
        n_overlap=len(pairs), relevant=relevant, weights=weights,
        kappa_binary=_nan_to_none(cohen_kappa(binary_a, binary_b, "none", [0, 1])),
        kappa_graded=_nan_to_none(cohen_kappa(a, b, weights, labels)),
        kappa_graded_unweighted=_nan_to_none(cohen_kappa(a, b, "none", labels)),
        labels=labels, confusion=confusion_matrix(a, b, labels).tolist(), measure=name,
        n_runs=len(run_dicts), lineage=lineage, **taus)
