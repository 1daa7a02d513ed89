"""Source bias per run (Cocktail): human-written against LLM-generated documents, Relative Δ.

Each run's ranking of the mixed corpus, unchanged, is scored with ir_measures three times: against
the judgments of the human-written documents only, of the LLM-generated ones only (each rewrite
carrying its original's judgment when it has none of its own), and of both (`mixed`: the run's
effectiveness) — `tcdb.judging.by_source`. Per run and measure: the two means over the same topics
(every topic the mixed set judges, unanswered ones 0 as `trec_eval -c`), Relative Δ with a
percentile bootstrap CI over topics, the per-topic Δ and paired tests (`tcdb.analysis.source_bias`).
Across runs: the averages, and Pearson's r between effectiveness and Relative Δ (Cocktail Fig. 1).
A run whose first-stage run is recorded (`run import --first-stage TAG`) is set beside it: the
bias the re-ranker carried or changed (Cocktail Table 4). With `also`, other collections'
snapshots are reported too and averaged across collections (Cocktail Table 3).

A report reads: the per-source qrels and scores live in memory. With `save` the three sets are
stored as `derived` qrels sets (`<save>-human`, `<save>-llm`, `<save>-mixed`) and the runs are
evaluated on them (stored scores, computed once), so a second report reads instead of scoring.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pydantic import BaseModel, field_validator

from tcdb.judging.by_source import HUMAN, LLM, MIXED, SourceQrels
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
from tcdb.operations.lineage import Lineage, lineage_of
from tcdb.reports.fields import qrels_option, topics_option
from tcdb.reports.source_bias_figures import (
    AcrossMeasure,
    SourceBiasReport,
    SourceSet,
    across_collections,
    measure_figures,
)
from tcdb.scoring.measures import MeasureNames
from tcdb.vocabulary import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

if TYPE_CHECKING:
    import pandas as pd

FRAME_COLUMNS = ["collection", "snapshot", "measure", "run", "first_stage", "effectiveness",
                 "human", "llm", "relative_delta", "ci_low", "ci_high", "p_t", "p_wilcoxon"]


class SourceBiasRequest(Request):
    """Which runs, measures and source labels a source-bias report compares."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    measures: MeasureNames = option(["nDCG@10"], short="-m",
                              help="Measure (repeat), e.g. nDCG@1, nDCG@10.")
    runs: Names | None = option(None, help="Only these run tags (repeat).")
    qrels: Name = qrels_option()  # original: the snapshot's designated original set
    human: str = option(HUMAN, metavar="LABEL", help="Source label of human-written documents.")
    llm: str = option(LLM, metavar="LABEL", help="Source label of LLM-generated documents.")
    twins: bool = option(True, help="Copy an original's judgment to its LLM twin when the twin "
                         "has none (Cocktail's rule; --no-twins: do not).")
    topics: Name = topics_option()
    bootstrap: int = option(BOOTSTRAP_SAMPLES, ge=0, metavar="N",
                            help="Bootstrap samples for the CI of Relative Δ (0: none).")
    seed: int = option(BOOTSTRAP_SEED, help="Seed of the bootstrap.")
    save: Name | None = option(
        None, metavar="PREFIX", help="Also store the per-source qrels as derived sets "
        "PREFIX-human, PREFIX-llm, PREFIX-mixed and the runs' scores on them; a second report "
        "then reads them.")
    also: Names | None = option(
        None, flag="--with", metavar="COLLECTION/SNAPSHOT",
        help="Report on these too (repeat), then average across collections: each "
        "collection's mean Relative Δ over its runs, their mean, and per run tag its mean "
        "(Cocktail's Table 3).")

    @field_validator("also")
    @classmethod
    def _collection_snapshot(cls, values: list[str] | None) -> list[str] | None:
        for value in values or []:
            name, _, label = value.rpartition("/")
            if not name or not label:
                raise ValueError(f"COLLECTION/SNAPSHOT, not {value!r}")
        return values


class SourceBiasResult(SourceBiasReport, Result):
    """The source bias of a snapshot's runs; with `also`, every report and the averages
    across collections."""

    reports: list[SourceBiasReport] = []  # with `also`: this snapshot's, then the others'
    across: dict[str, AcrossMeasure] | None = None  # with `also`: per measure

    def to_frame(self) -> pd.DataFrame:
        """One row per collection × measure × run (`FRAME_COLUMNS`): effectiveness, the
        scores under the human and the LLM judgments, Relative Δ, its CI, paired p-values."""
        import pandas as pd

        rows = [{"collection": report.collection, "snapshot": report.snapshot,
                 "measure": measure, **run.model_dump(include=set(FRAME_COLUMNS[3:]))}
                for report in (self.reports or [self])
                for measure, result in report.measures.items() for run in result.runs]
        return pd.DataFrame(rows, columns=FRAME_COLUMNS)


@operation("source_bias", command="report source-bias")
def source_bias(request: SourceBiasRequest, db: Database) -> SourceBiasResult:
    """Source bias per run: is human-written or LLM-generated text ranked higher?

    Each run's ranking of the mixed corpus is scored, unchanged, with ir_measures twice:
    HUMAN against the judgments of the documents labelled human only, LLM against those of the
    documents labelled llm only. An LLM document without a judgment of its own for a topic
    carries the judgment of its twin (the original it was rewritten from) for that topic;
    --no-twins turns this off. Both are means over the same topics, every topic judged in
    either set (unanswered topics count 0). Relative Δ = (HUMAN − LLM) / ((HUMAN + LLM) / 2)
    × 100: positive when human-written documents are ranked higher, negative when LLM text is
    preferred. CI: percentile bootstrap over topics; p: paired t-test and Wilcoxon of the
    per-topic HUMAN and LLM scores (scipy). Effectiveness is the score against both sets'
    judgments (the mixed corpus); r is Pearson's between effectiveness and Relative Δ across
    runs. Runs imported with --first-stage TAG are set beside their first stage.
    """
    first = _report(request, db, request.collection, request.snapshot, request.runs,
                    request.qrels)
    if not request.also:
        return SourceBiasResult(**dict(first))
    reports = [first] + [_report(request, db, *value.rpartition("/")[::2], None, None)
                         for value in request.also]
    return SourceBiasResult(**dict(first), reports=reports,
                            across=across_collections(reports))


def _report(request: SourceBiasRequest, db: Database, collection: str, snapshot: str,
            runs: list[str] | None, qrels: str | None) -> SourceBiasReport:
    """One snapshot's report (the runs and qrels named apply to the first snapshot only)."""
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.by_source import derive_source_qrels, parent_name, store_source_qrels
    from tcdb.judging.qrels import get_qrels_set
    from tcdb.queries import documents_per_source
    from tcdb.queries.topic_selection import select_topics
    from tcdb.reports.source_bias_scores import score_in_memory, score_stored
    from tcdb.runs import get_runs
    from tcdb.scoring.evaluate import provider_data
    from tcdb.scoring.measures import check_providers

    started = time.perf_counter()
    names = list(request.measures)  # parsed by the request (MeasureNames)
    sources = (request.human, request.llm)
    save, twins = request.save, request.twins
    stored_as: dict[str, str] | None = None
    with db.session() as session:
        conn = session.connection()
        snap = get_snapshot(session, collection, snapshot)
        parent = get_qrels_set(session, snap, parent_name(snap, qrels))
        check_providers(names, lambda: provider_data(conn, snap.pk, parent.pk))
        run_list = [r for r in get_runs(session, snap, runs) if r.n_entries + r.n_unresolved]
        derived = derive_source_qrels(conn, snap, parent, sources, twins)
        judged = sorted(set(derived[MIXED].frame["topic"].tolist()))
        topic_names = select_topics(session, collection, snap, judged, request.topics)
        documents = documents_per_source(conn, snap.pk)
        if save is None:
            scores = score_in_memory(conn, snap.pk, [r.pk for r in run_list], names, derived,
                                     topic_names)
        else:
            stored_as = store_source_qrels(session, snap, parent, save, derived, twins, "save")
        parent_label = parent.name
    if stored_as is not None:
        scores = score_stored(db, collection, snapshot, run_list, names, stored_as)
    tags = {r.pk: r.tag for r in run_list}
    first_stage = {r.tag: r.first_stage for r in run_list}
    return SourceBiasReport(
        collection=collection, snapshot=snapshot, qrels=parent_label, human=request.human,
        llm=request.llm, twins=twins, topics=request.topics, n_topics=len(topic_names),
        bootstrap=request.bootstrap, seed=request.seed, saved=save, documents=documents,
        sets={s: SourceSet(name=stored_as[s] if stored_as else None,
                           n_judgments=q.n_judgments, n_copied=q.n_copied)
              for s, q in derived.items()},
        measures={name: measure_figures(name, scores, tags, first_stage, topic_names, sources,
                                        request.bootstrap, request.seed,
                                        _unanswered(name, derived, topic_names))
                  for name in names},
        seconds=time.perf_counter() - started,
        lineage=lineage_of(db, collection, runs=[(snapshot, t) for t in tags.values()],
                           qrels=[(snapshot, parent_label)] + [
                               (snapshot, s) for s in (stored_as or {}).values()],
                           topics=request.topics, measures=names))


def _unanswered(measure: str, derived: dict[str, SourceQrels], topics: dict[int, str],
                ) -> dict[str, dict[int, float]]:
    """source → topic → what `trec_eval -c` gives a judged topic a run did not answer under
    that source's qrels, for a count that is not 0 there (NumRel, NumQ); {} otherwise."""
    from tcdb.analysis.means import counts_unanswered, unanswered_value

    if not counts_unanswered(measure):
        return {}
    out: dict[str, dict[int, float]] = {}
    for source, qrels in derived.items():
        judged: dict[int, dict[str, int]] = {}
        frame = qrels.frame
        for topic, doc, grade in zip(frame["topic"].tolist(), frame["doc"].tolist(),
                                     frame["grade"].tolist(), strict=True):
            judged.setdefault(int(topic), {})[str(doc)] = int(grade)
        out[source] = {t: unanswered_value(measure, judged[t]) for t in topics if t in judged}
    return out


class DocumentsBySourceRequest(Request):
    """Whose documents to count by source label."""

    collection: Name = argument(help="Collection name.")


class SourceCount(BaseModel):
    snapshot: str
    source: str  # a source label, or "unlabelled"
    documents: int


class DocumentsBySourceResult(Result):
    """Documents per source label per complete snapshot."""

    collection: str
    rows: list[SourceCount]
    labelled_snapshots: list[str]  # with documents that say who wrote them (a report runs)
    lineage: Lineage | None = None  # the collection, versions and schema (no runs or qrels)

    def to_frame(self) -> pd.DataFrame:
        """`snapshot, source, documents`, one row per snapshot and source label."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.rows],
                            columns=["snapshot", "source", "documents"])


@operation("documents_by_source", command="report documents-by-source")
def documents_by_source(request: DocumentsBySourceRequest, db: Database
                        ) -> DocumentsBySourceResult:
    """Documents per source label (human, llm, …, unlabelled) per snapshot.

    Why: a source-bias report needs documents that say who wrote them; this shows which
    snapshots have them, and how many of each.
    """
    from sqlmodel import select

    from tcdb.catalog.collections import get_collection
    from tcdb.queries import UNLABELLED, documents_per_source
    from tcdb.schema import Snapshot, SnapshotStatus

    rows = []
    with db.session() as session:
        coll = get_collection(session, request.collection)
        snaps = session.exec(
            select(Snapshot).where(
                Snapshot.collection_id == coll.pk,
                Snapshot.status == SnapshotStatus.complete)).all()
        for snap in sorted(snaps, key=lambda s: s.ordinal):
            for label, n in documents_per_source(session.connection(), snap.pk).items():
                rows.append(SourceCount(snapshot=snap.label, source=label, documents=n))
        lineage = lineage_of(db, request.collection, session=session)
    labelled = {r.snapshot for r in rows if r.source != UNLABELLED}
    return DocumentsBySourceResult(
        collection=request.collection, rows=rows,
        labelled_snapshots=list(dict.fromkeys(r.snapshot for r in rows if r.snapshot in labelled)),
        lineage=lineage)
