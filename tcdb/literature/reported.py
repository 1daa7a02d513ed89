"""Results reported in the literature for a collection: import them, list them, report on them.

A literature file (`tcdb.collections.results_tables.literature`) is about one collection: `tcdb
literature import
FILE COLLECTION`. Import is atomic and idempotent: every row is validated before anything is
written, a row already stored with the same value is left alone (the same file twice is
"unchanged"), and one stored with another value is refused unless `replace`. The report's
figures come from `tcdb.analysis.literature`; its reference is a named value or a stored run's
mean score (`tcdb.scoring.scores.score_table`, trec_eval semantics).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, tuple_
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from tcdb.catalog.collections import get_collection
from tcdb.collections.results_tables.literature import ReportedRow, normalise_metric, read_reported
from tcdb.errors import ConflictError, FieldError, InputError, some
from tcdb.literature.results import (
    COLUMNS,
    LiteratureImportResult,
    LiteratureReport,
    LiteratureResult,
    ReportedFigure,
    RunReference,
    ValueReference,
)
from tcdb.operations import Database, Name, Request, argument, operation, option
from tcdb.operations.lineage import lineage_of
from tcdb.reports.fields import QRELS_DEFAULT, qrels_option
from tcdb.schema import ReportedResult
from tcdb.storage.bulk import bulk_insert
from tcdb.storage.db import is_integrity_error

if TYPE_CHECKING:
    import pandas as pd

FILE_HELP = ("CSV (a header line), TSV or YAML (a list of mappings) with publication, year, "
             "venue, model, category (probabilistic / neural / llm), role (baseline / best), "
             "metric, value, cross_validated (true / false), notes.")


class LiteratureImportRequest(Request):
    """Which file of reported results to store for which collection."""

    file: Path = argument(help=FILE_HELP)
    collection: Name = argument(help="The collection the results are reported on.")
    replace: bool = option(False, help="Store the file's value where a stored result of the "
        "same publication, model, role and metric differs (otherwise refused).")


@operation("literature_import", command="literature import", writes=True)
def literature_import(request: LiteratureImportRequest, db: Database) -> LiteratureImportResult:
    """Import reported results from a file: every row validated first, nothing written on any
    error; the same file again adds nothing.

    Metrics are normalised to ir_measures' spelling when they parse in any case (ndcg@10 →
    nDCG@10, map → AP); other names are kept as written. Values of ir_measures measures must
    lie in [0, 1]. Why atomic and idempotent: a literature file grows by hand, and is imported
    again after every correction.
    """
    path, collection = Path(request.file), request.collection
    replace = request.replace
    rows = read_reported(path)
    try:
        with db.session() as session:
            coll = get_collection(session, collection)
            stored = _stored_values(session, coll.pk, rows)
            new = [r for r in rows if r.key not in stored]
            changed = [r for r in rows if r.key in stored and stored[r.key] != r.value]
            if changed and not replace:
                first = changed[0]
                raise ConflictError(
                    f"{path}:{first.line}: {first.publication!r} {first.model!r} "
                    f"{first.role.value} {first.metric} is stored with value "
                    f"{stored[first.key]:g}, the file says {first.value:g} ({len(changed)} "
                    "row(s) differ): pass --replace to store the file's values")
            if changed:
                session.execute(delete(ReportedResult).where(
                    col(ReportedResult.collection_id) == coll.pk,
                    tuple_(col(ReportedResult.publication), col(ReportedResult.model),
                           col(ReportedResult.role), col(ReportedResult.metric)).in_(
                        [r.key for r in changed])))
            written = [*new, *changed]
            bulk_insert(session, "reported_result",
                        ["collection_id", *COLUMNS],
                        ((coll.pk, r.publication, r.year, r.venue, r.model, r.category.value,
                          r.role.value, r.metric, r.value, r.cross_validated, r.notes)
                         for r in written))
    except Exception as exc:
        if is_integrity_error(exc):
            raise ConflictError(f"{path}: another import stored some of these results at the "
                                "same time; run the import again") from None
        raise
    status = "replaced" if changed else "added" if new else "unchanged"
    return LiteratureImportResult(collection=collection, file=str(path), status=status,
                                  n_rows=len(rows), n_added=len(new), n_replaced=len(changed),
                                  n_unchanged=len(rows) - len(new) - len(changed))


def _stored_values(session: Session, collection_id: int, rows: list[ReportedRow]
                   ) -> dict[tuple[str, str, str, str], float]:
    """(publication, model, role, metric) → value of the collection's stored results."""
    wanted = {r.key for r in rows}
    table = ReportedResult.__table__.c  # type: ignore[attr-defined]
    found = session.execute(sa_select(table.publication, table.model, table.role, table.metric,
                                      table.value)
                            .where(table.collection_id == collection_id)).all()
    out = {}
    for publication, model, role, metric, value in found:
        key = (publication, model, getattr(role, "value", role), metric)
        if key in wanted:
            out[key] = float(value)
    return out


def reported_frame(db: Database, collection: str, metric: str | None = None) -> pd.DataFrame:
    """The collection's reported results (of one metric, written any way that normalises to
    it), by year, publication, model, role and metric: what `literature` and the report read."""
    import pandas as pd

    with db.session() as session:
        coll = get_collection(session, collection)
        query = select(ReportedResult).where(col(ReportedResult.collection_id) == coll.pk)
        if metric is not None:
            query = query.where(col(ReportedResult.metric) == normalise_metric(metric))
        found = session.exec(query).all()
        rows = [(r.publication, r.year, r.venue, r.model, r.category, r.role.value, r.metric,
                 r.value, r.cross_validated, r.notes) for r in found]
    frame = pd.DataFrame(rows, columns=COLUMNS).astype({"year": "int64", "value": "float64",
                                                        "cross_validated": "bool"})
    return frame.sort_values(["year", "publication", "model", "role", "metric"],
                             kind="stable").reset_index(drop=True)


class LiteratureRequest(Request):
    """Whose reported results to list, of which metric."""

    collection: Name = argument(help="Collection name.")
    metric: str | None = option(None, short="-m", help="Only this metric.")


@operation("literature", command="literature list")
def literature(request: LiteratureRequest, db: Database) -> LiteratureResult:
    """List the reported results of a collection by year, and how often each metric is
    reported (most used first: the order a metric picker offers them in)."""
    from tcdb.analysis.literature import metric_usage

    frame = reported_frame(db, request.collection, request.metric)
    return LiteratureResult(
        collection=request.collection,
        metric=None if request.metric is None else normalise_metric(request.metric),
        results=[ReportedFigure(**row) for row in _records(frame)],
        metric_usage=_records(metric_usage(frame)))


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain values, missing ones None."""
    return [{k: None if v is None or v != v else (v.item() if hasattr(v, "item") else v)
             for k, v in row.items()} for row in frame.astype(object).to_dict("records")]


class LiteratureReportRequest(Request):
    """Which metric to report on, over which reference."""

    collection: Name = argument(help="Collection name.")
    metric: str = option(short="-m", help="The metric to report on, e.g. nDCG@10 or AP.")
    reference_value: float | None = option(None, metavar="X", help="Gains are in % over this "
                                           "value (say, the best TREC run's).")
    reference_name: Name | None = option(None, metavar="NAME", help="What the reference is.")
    reference_run: Name | None = option(None, metavar="SNAPSHOT/RUN", help="Gains over this "
                                       "stored run's mean of the metric (scored when missing).")
    qrels: Name = qrels_option()  # of the reference run; original: the designated original


@operation("literature_report", command="literature report")
def literature_report(request: LiteratureReportRequest, db: Database) -> LiteratureReport:
    """Best and baseline figures per year and model category, a trend per category, gains over
    a reference, and how often each metric is reported.

    Per year and category: the highest figure reported as best and the highest reported as
    baseline, with how many. Trend: a least-squares line (scipy's linregress) through every
    best figure of the category, year against value: slope per year with its 95 % CI (the
    slope's standard error times Student's t with n − 2 degrees of freedom), r and p; "–"
    below 3 figures. Gain: (value − reference) / reference × 100. Metric usage counts the
    publications that report each metric, over every metric of the collection.
    """
    from tcdb.analysis.literature import literature_summary

    r = request
    name = normalise_metric(r.metric)
    every = reported_frame(db, r.collection)
    if not (every["metric"] == name).any():
        known = some(sorted(every["metric"].unique())) or "none yet"
        raise FieldError("metric", f"{r.collection!r} has no reported {name} (reported: "
                         f"{known}); import results with `tcdb literature import`")
    reference = _reference(db, r.collection, name, r.reference_value, r.reference_name,
                           r.reference_run, r.qrels)
    summary = literature_summary(every, name, None if reference is None else reference.value)
    for trend in summary["trends"]:
        if trend["slope"] is not None:
            trend["trend_first"] = trend["intercept"] + trend["slope"] * trend["first_year"]
            trend["trend_last"] = trend["intercept"] + trend["slope"] * trend["last_year"]
    ref_run = reference if isinstance(reference, RunReference) else None
    lineage = lineage_of(db, r.collection, publications=sorted(every["publication"].unique()),
                         measures=[name],
                         runs=[(ref_run.snapshot, ref_run.run)] if ref_run else [],
                         qrels=[(ref_run.snapshot, ref_run.qrels)] if ref_run else [])
    return LiteratureReport(collection=r.collection, metric=name, reference=reference,
                            lineage=lineage, **summary)


def _reference(db: Database, collection: str, metric: str, value: float | None, name: str | None,
               run: str | None, qrels: str | None) -> RunReference | ValueReference | None:
    """The figure gains are measured against: a value given by name, or a run's mean score."""
    if value is not None and run is not None:
        raise FieldError("reference_value/reference_run", "give one reference, a value or "
                         "a run")
    if qrels not in (None, QRELS_DEFAULT) and run is None:  # the default asks for nothing
        raise FieldError("qrels", "names the qrels set of the reference run: give that too")
    if name is not None and value is None and run is None:
        raise FieldError("reference_name", "names the reference value: give that too")
    if value is not None:
        return ValueReference(name=name or "reference", value=float(value))
    if run is None:
        return None
    snapshot, slash, tag = run.partition("/")
    if not slash or not snapshot or not tag:
        raise FieldError("reference_run", f"{run!r} is not SNAPSHOT/RUN (say 2004/pircRB04t3)")
    return RunReference(name=name or tag, **_run_mean(db, collection, snapshot, tag, metric, qrels))


def _run_mean(db: Database, collection: str, snapshot: str, run: str, metric: str, qrels: str | None
              ) -> dict[str, Any]:
    """A stored run's mean of `metric` (`trec_eval -c`; scored first when missing) on the
    snapshot's designated original qrels unless `qrels` names a set."""
    import math

    from tcdb.catalog.collections import get_snapshot
    from tcdb.collections.scores.trec_eval import canonical_measure
    from tcdb.scoring.scores import score_table

    if canonical_measure(metric) is None:
        raise FieldError("reference_run", f"{metric} is not a measure ir_measures computes: "
                         "give a reference value instead")
    if qrels is None:
        with db.session() as session:
            qrels = get_snapshot(session, collection, snapshot).original_qrels
        if qrels is None:
            raise FieldError("qrels", f"snapshot {snapshot!r} has no original qrels: name "
                             "the set")
    table = score_table(db, collection, snapshot, qrels, [metric], runs=[run])
    mean = float(table["value"].iloc[0])
    if math.isnan(mean):
        raise InputError(f"{snapshot}/{run}", None, f"no {metric} score for this run")
    return {"value": mean, "snapshot": snapshot, "run": run, "qrels": qrels,
            "n_topics": int(table["n_topics"].iloc[0])}
