"""`tcdb report agreement POOL`: do two assessors (or an assessor and an LLM judge, imported as
another qrels set) agree on a pool's documents, and would they rank the systems alike?

Cohen's κ — binary (relevant or not) and graded with weights — and the confusion matrix over
the pool's documents both sets judged (`tcdb.analysis.kappa`); then Kendall's τ-b and τ_AP
between the system rankings under each set as a whole (`tcdb.analysis.rank_correlation`), scores
from ir_measures. `topics` (a topic set) keeps only its topics, for κ and for τ. Reads only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tcdb.errors import OptionError
from tcdb.storage.db import session_scope

if TYPE_CHECKING:
    from sqlmodel import Session

    from tcdb.schema import Snapshot


def found_collection(session: Session, snap: Snapshot) -> str:
    """The name of a snapshot's collection (a pool is named without it)."""
    from tcdb.schema import Collection

    coll = session.get(Collection, snap.collection_id)
    assert coll is not None
    return str(coll.name)


def _nan_to_none(value: float) -> float | None:
    return None if value != value else value


def assessor_agreement_report(
    pool: str,
    versus: str,
    qrels: str | None = None,
    *,
    collection: str | None = None,
    snapshot: str | None = None,
    measure: str = "AP",
    runs: Sequence[str] | None = None,
    relevant: int = 1,
    weights: str = "linear",
    topics: str | None = None,
) -> dict[str, Any]:
    """Agreement of qrels set `qrels` (default: the pool's pooled set) with `versus` on the
    pool's documents. `relevant`: the lowest grade that counts as relevant (binary κ);
    `topics`: only the topics of this topic set."""
    import pandas as pd
    from sqlalchemy import text

    from tcdb.analysis.kappa import WEIGHTS, cohen_kappa, confusion_matrix, grade_labels
    from tcdb.analysis.rank_correlation import tau_ap, tau_b
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.pools.inspect import get_pool
    from tcdb.pools.simulation import mean_scores
    from tcdb.queries import snapshot_topics, topic_set_topic_ids
    from tcdb.queries.qrels import qrels_frame
    from tcdb.queries.runs import read_runs
    from tcdb.runs import get_runs
    from tcdb.schema import QrelsSet, Snapshot
    from tcdb.scoring.evaluate import qrels_dict
    from tcdb.scoring.measures import parse_measures

    if weights not in WEIGHTS:
        raise OptionError("--weights", f"{weights!r} is not one of {', '.join(WEIGHTS)}")
    (name,) = parse_measures([measure])
    with session_scope() as session:
        found = get_pool(session, pool, collection, snapshot)
        snap = session.get(Snapshot, found.snapshot_id)
        assert snap is not None
        if qrels is None:
            if found.pooled_qrels_id is None:
                raise OptionError("--qrels", f"pool {pool!r} has no judgments yet: import "
                                  "them, or name the first assessor's set with --qrels")
            first = session.get(QrelsSet, found.pooled_qrels_id)
            assert first is not None
        else:
            first = get_qrels_set(session, snap, qrels)
        second = get_qrels_set(session, snap, versus)
        if first.id == second.id:
            raise OptionError("--vs", f"qrels set {second.name!r} against itself")
        conn = session.connection()
        only = ""
        kept: set[str] | None = None
        if topics is not None:
            names = snapshot_topics(conn, snap.pk)
            members = sorted(topic_set_topic_ids(session, found_collection(session, snap),
                                                 topics) & set(names))
            if not members:
                raise OptionError("--topics", f"topic set {topics!r} has no topic of "
                                  f"snapshot {snap.label!r}")
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
        chosen = get_runs(session, snap, list(runs) if runs else None)
        qrels_a = qrels_dict(qrels_frame(conn, first.pk))
        qrels_b = qrels_dict(qrels_frame(conn, second.pk))
        tags = {r.pk: r.tag for r in chosen}
        run_dicts = {tags[i]: run for i, run in read_runs(conn, snap.pk, list(tags))}
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
    return {
        "pool": found.name, "collection": collection, "snapshot": snap.label,
        "qrels": first.name, "versus": second.name, "topic_set": topics,
        "assessors": [first.assessor, second.assessor],
        "n_documents": found.n_documents, "n_judged": [judged["a"], judged["b"]],
        "n_overlap": len(pairs), "relevant": relevant, "weights": weights,
        "kappa_binary": _nan_to_none(cohen_kappa(binary_a, binary_b, "none", [0, 1])),
        "kappa_graded": _nan_to_none(cohen_kappa(a, b, weights, labels)),
        "kappa_graded_unweighted": _nan_to_none(cohen_kappa(a, b, "none", labels)),
        "labels": labels, "confusion": confusion_matrix(a, b, labels).tolist(),
        "measure": name, "n_runs": len(run_dicts), **taus,
    }
