"""`tcdb report diff-runs`: two runs of one snapshot, topic by topic, and one topic's rankings
side by side (diffir's per-query comparison).

A mean hides where two runs differ. The topics come ordered by how much the measure differs
(|A − B|, largest first; per-topic scores as `report compare` reads them: every topic the qrels
set judges, ∩ a topic set, a topic a run did not answer counting 0 as `trec_eval -c`); for one
topic (`topic`, else the one that differs most) both rankings come side by side to `depth`, in
trec_eval's order, each document with its grade in the qrels set (None: unjudged), the rank the
other run gave it, and the start of its text (whitespace collapsed, cut at a word boundary; data,
escaped by every front end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, field_validator

from tcdb.errors import FieldError
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import TopicChoice, qrels_option, topic_set_option
from tcdb.scoring.measures import MeasureName
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd
    from sqlalchemy import Connection

DEPTH = 10
SNIPPET = 160  # characters of a document's text shown beside it


class DiffRunsRequest(Request):
    """Which two runs of a snapshot, under which measure and qrels, and which topic to open."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    run_a: Name = argument(help="Run A's tag.")
    run_b: Name = argument(help="Run B's tag.")
    measure: MeasureName = option("nDCG@10", help="Measure.", short="-m")
    qrels: Name = qrels_option()
    topics: TopicChoice = topic_set_option()
    topic: Name | None = option(None, help="Show this topic's rankings side by side (default: "
                                "the topic where the runs differ most).")
    depth: int = option(DEPTH, help="Ranks shown side by side.")
    snippet: int = option(SNIPPET, metavar="CHARS", help="Characters of each document's text "
                          "shown (0: none).")
    compute: bool = option(True, help="Compute missing scores first (--no-compute: only read "
                           "stored ones).")

    @field_validator("depth")
    @classmethod
    def _depth(cls, value: int) -> int:
        if not 1 <= value <= 1000:
            raise ValueError("depth must be between 1 and 1000")
        return value

    @field_validator("snippet")
    @classmethod
    def _snippet(cls, value: int) -> int:
        if not 0 <= value <= 10_000:
            raise ValueError("snippet must be between 0 and 10000 characters")
        return value


class TopicDifference(BaseModel):
    """One topic: both runs' scores and A − B."""

    topic: str
    score_a: float
    score_b: float
    difference: float  # A − B, rounded to 12 decimals so equal scores tie at 0


class RankedDocument(BaseModel):
    """A document at one rank of one run."""

    document: str  # its id in the run file
    score: float
    grade: int | None  # in the qrels set; None: unjudged
    other_rank: int | None  # where the other run ranks it (None: not in its ranking)
    snippet: str | None  # the start of its text (None: no text stored)


class RankPair(BaseModel):
    """One rank of the two rankings (trec_eval's order)."""

    rank: int
    a: RankedDocument | None
    b: RankedDocument | None


class TopicRankings(BaseModel):
    """One topic's two rankings side by side."""

    topic: str
    query: str | None
    score_a: float
    score_b: float
    n_relevant: int  # documents the qrels set grades above 0 for the topic
    ranks: list[RankPair]


class DiffRunsResult(Result):
    """Per topic, two runs' scores and A − B, largest difference first; one topic side by side."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    run_a: str
    run_b: str
    topic_set: str | None
    depth: int
    n_topics: int
    mean_a: float
    mean_b: float
    a_better: int
    b_better: int
    tied: int
    topics: list[TopicDifference]
    rankings: TopicRankings | None
    lineage: Lineage | None = None  # what the figures were computed from

    def to_frame(self) -> pd.DataFrame:
        """`topic, score_a, score_b, difference`, one row per topic, largest |A − B| first."""
        import pandas as pd

        return pd.DataFrame([t.model_dump() for t in self.topics],
                            columns=list(TopicDifference.model_fields))


@operation("diff_runs", command="report diff-runs")
def diff_runs(request: DiffRunsRequest, db: Database) -> DiffRunsResult:
    """Two runs topic by topic, largest difference first, and one topic's rankings side by
    side with each document's grade and text.

    Why: a difference in means is a sum of topics; the few where two systems part ways, read
    document by document, say what one does that the other does not.
    """
    from tcdb.analysis import json_float
    from tcdb.analysis.means import DECIMALS, aggregate
    from tcdb.reports.run_scores import load_run_scores

    r = request
    if r.run_a == r.run_b:
        raise FieldError("run_b", "give two different runs")
    data = load_run_scores(db, r.collection, r.snapshot, r.qrels, [r.run_a, r.run_b], r.measure,
                           compute=r.compute, topics=r.topics)
    wide = data.wide
    rows = [TopicDifference(topic=str(topic), score_a=float(a), score_b=float(b),
                            difference=round(float(a) - float(b), DECIMALS))
            for topic, a, b in zip(wide.index, wide[r.run_a], wide[r.run_b], strict=True)]
    rows.sort(key=lambda t: (-abs(t.difference), -t.difference, natural_key(t.topic)))
    chosen = r.topic
    if chosen is not None and chosen not in set(wide.index):
        raise FieldError("topic", f"topic {chosen!r} is not among the {len(rows)} topics "
                         f"scored on qrels {r.qrels!r} of {r.snapshot!r}")
    if chosen is None and rows:
        chosen = rows[0].topic
    rankings = None
    if chosen is not None:
        topic_id = data.topic_ids[list(wide.index).index(chosen)]
        score = {t.topic: t for t in rows}[chosen]
        rankings = _rankings(db, r, topic_id, chosen, score.score_a, score.score_b)
    differences = [t.difference for t in rows]
    return DiffRunsResult(
        collection=r.collection, snapshot=r.snapshot, qrels=r.qrels, measure=data.measure,
        run_a=r.run_a, run_b=r.run_b, topic_set=r.topics, depth=r.depth, n_topics=len(rows),
        mean_a=json_float(aggregate(data.measure, wide[r.run_a].tolist())),
        mean_b=json_float(aggregate(data.measure, wide[r.run_b].tolist())),
        a_better=sum(d > 0 for d in differences), b_better=sum(d < 0 for d in differences),
        tied=sum(d == 0 for d in differences), topics=rows, rankings=rankings,
        lineage=lineage_of(db, r.collection, runs=[(r.snapshot, r.run_a), (r.snapshot, r.run_b)],
                           qrels=[(r.snapshot, r.qrels)], topics=r.topics,
                           measures=[data.measure]))


def _rankings(db: Database, r: DiffRunsRequest, topic_id: int, topic: str, score_a: float,
              score_b: float) -> TopicRankings:
    """Both runs' top `depth` for one topic, with grades, the other run's ranks and text."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.runs import get_runs
    from tcdb.schema import SnapshotTopic
    with db.session() as session:
        snap = get_snapshot(session, r.collection, r.snapshot)
        qset = get_qrels_set(session, snap, r.qrels)
        run_a, run_b = get_runs(session, snap, [r.run_a, r.run_b])
        stated = session.get(SnapshotTopic, (snap.pk, topic_id))
        conn = session.connection()
        ranked = {run.pk: _ranking(conn, snap.pk, run.pk, topic_id, r.depth)
                  for run in (run_a, run_b)}
        grades = _grades(conn, snap.pk, qset.pk, topic_id)
        n_relevant = sum(1 for g in grades.values() if g > 0)
        texts = _texts(conn, snap.pk, {d for rows in ranked.values() for d in rows},
                       r.snippet) if r.snippet else {}
        # Where the other run ranks a document, at any depth (not only the top `depth`).
        everywhere = {run.pk: _ranks_of(conn, snap.pk, run.pk, topic_id,
                                        list(ranked[other.pk]))
                      for run, other in ((run_a, run_b), (run_b, run_a))}
    sides: list[list[RankedDocument]] = []
    for run, other in ((run_a, run_b), (run_b, run_a)):
        sides.append([RankedDocument(document=doc, score=value, grade=grades.get(doc),
                                     other_rank=everywhere[other.pk].get(doc),
                                     snippet=texts.get(doc))
                      for doc, value in ranked[run.pk].items()])
    a_side, b_side = sides
    ranks = [RankPair(rank=i + 1, a=a_side[i] if i < len(a_side) else None,
                      b=b_side[i] if i < len(b_side) else None)
             for i in range(max(len(a_side), len(b_side)))]
    return TopicRankings(topic=topic, query=stated.query if stated else None, score_a=score_a,
                         score_b=score_b, n_relevant=n_relevant, ranks=ranks)


def _ranking(conn: Connection, snapshot_id: int, run_id: int, topic_id: int, depth: int
             ) -> dict[str, float]:
    """document → score of a run's top `depth` for a topic, in trec_eval's order (entries the
    snapshot lacks included, under their submitted ids)."""
    from sqlalchemy import text

    params = {"r": run_id, "t": topic_id, "s": snapshot_id, "k": depth}
    rows = conn.execute(text(
        "SELECT e.eval_rank, sd.external_id, e.score FROM run_entry e "
        "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = e.document_id "
        "WHERE e.run_id = :r AND e.topic_id = :t AND e.eval_rank <= :k "
        "UNION ALL SELECT u.eval_rank, u.external_doc_id, u.score FROM run_entry_unresolved u "
        "WHERE u.run_id = :r AND u.topic_id = :t AND u.eval_rank <= :k"), params).all()
    return {str(doc): float(score) for _, doc, score in sorted(rows, key=lambda row: row[0])}


def _ranks_of(conn: Connection, snapshot_id: int, run_id: int, topic_id: int,
              documents: list[str]) -> dict[str, int]:
    """document → its rank (trec_eval's order) in a run's ranking of a topic, for the documents
    named that the run ranks at all."""
    from sqlalchemy import bindparam, text

    if not documents:
        return {}
    query = text(
        "SELECT sd.external_id, e.eval_rank FROM run_entry e "
        "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = e.document_id "
        "WHERE e.run_id = :r AND e.topic_id = :t AND sd.external_id IN :docs "
        "UNION ALL SELECT u.external_doc_id, u.eval_rank FROM run_entry_unresolved u "
        "WHERE u.run_id = :r AND u.topic_id = :t AND u.external_doc_id IN :docs"
    ).bindparams(bindparam("docs", expanding=True))
    rows = conn.execute(query, {"r": run_id, "t": topic_id, "s": snapshot_id,
                                "docs": documents}).all()
    return {str(doc): int(rank) for doc, rank in rows}


def _grades(conn: Connection, snapshot_id: int, qrels_set_id: int, topic_id: int
            ) -> dict[str, int]:
    """document (its id in the snapshot) → grade for one topic of a qrels set; judgments of
    documents no snapshot holds by the id they were given."""
    from sqlalchemy import text

    params = {"q": qrels_set_id, "t": topic_id, "s": snapshot_id}
    rows = conn.execute(text(
        "SELECT sd.external_id, j.grade FROM judgment j "
        "JOIN snapshot_document sd ON sd.snapshot_id = :s AND sd.document_id = j.document_id "
        "WHERE j.qrels_set_id = :q AND j.topic_id = :t "
        "UNION ALL SELECT u.external_doc_id, u.grade FROM judgment_unresolved u "
        "WHERE u.qrels_set_id = :q AND u.topic_id = :t"), params).all()
    return {str(doc): int(grade) for doc, grade in rows}


def _texts(conn: Connection, snapshot_id: int, documents: set[str], chars: int
           ) -> dict[str, str]:
    """document → the start of its text in the snapshot (documents without stored text left
    out)."""
    from sqlalchemy import bindparam, text

    if not documents:
        return {}
    query = text(
        "SELECT sd.external_id, c.text FROM snapshot_document sd "
        "JOIN content c ON c.id = sd.content_id "
        "WHERE sd.snapshot_id = :s AND sd.external_id IN :docs AND c.text IS NOT NULL"
    ).bindparams(bindparam("docs", expanding=True))
    rows = conn.execute(query, {"s": snapshot_id, "docs": sorted(documents)}).all()
    return {str(doc): snippet(str(body), chars) for doc, body in rows}


def snippet(body: str, chars: int) -> str:
    """The start of a text: whitespace runs as one space, at most `chars` characters, cut at a
    word boundary when one is near (else mid-word), `…` when cut."""
    flat = " ".join(body.split())
    if len(flat) <= chars:
        return flat
    cut = flat[:max(chars - 1, 0)]  # room for the `…`
    space = cut.rfind(" ")
    if space >= chars * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"
