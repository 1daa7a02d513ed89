"""Results reported in the literature for a collection: import them, list them, report on them.

A literature file (`tcdb.collections.literature`) is about one collection: `tcdb literature import
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
from tcdb.collections.literature import ReportedRow, normalise_metric, read_reported
from tcdb.errors import ConflictError, InputError, OptionError
from tcdb.schema import ReportedResult
from tcdb.storage.db import bulk_insert, is_integrity_error, session_scope

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["publication", "year", "venue", "model", "category", "role", "metric", "value",
           "cross_validated", "notes"]


def import_literature(path: Path | str, collection: str, *, replace: bool = False
                      ) -> dict[str, Any]:
    """Store a literature file's rows for `collection`; `{collection, file, status, n_rows,
    n_added, n_replaced, n_unchanged}` (status `added`, `replaced` or `unchanged`)."""
    path = Path(path)
    rows = read_reported(path)
    try:
        with session_scope() as session:
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
    return {"collection": collection, "file": str(path), "status": status, "n_rows": len(rows),
            "n_added": len(new), "n_replaced": len(changed),
            "n_unchanged": len(rows) - len(new) - len(changed)}


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


def literature_frame(collection: str, metric: str | None = None) -> pd.DataFrame:
    """The collection's reported results (of one metric, written any way that normalises to
    it), by year, publication, model, role and metric."""
    import pandas as pd

    with session_scope() as session:
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


def literature_report(
    collection: str,
    metric: str,
    *,
    reference_value: float | None = None,
    reference_name: str | None = None,
    reference_run: str | None = None,
    qrels: str | None = None,
) -> dict[str, Any]:
    """`tcdb literature report`: per year and category the best and baseline values, a trend
    per category, gains over the reference, and how often each metric is reported."""
    from tcdb.analysis.literature import literature_summary

    name = normalise_metric(metric)
    every = literature_frame(collection)
    if not (every["metric"] == name).any():
        known = ", ".join(sorted(every["metric"].unique())) or "none yet"
        raise OptionError("--metric", f"{collection!r} has no reported {name} (reported: "
                          f"{known}); import results with `tcdb literature import`")
    reference = _reference(collection, name, reference_value, reference_name, reference_run,
                           qrels)
    summary = literature_summary(every, name, None if reference is None else reference["value"])
    return {"collection": collection, "metric": name, "reference": reference, **summary}


def _reference(collection: str, metric: str, value: float | None, name: str | None,
               run: str | None, qrels: str | None) -> dict[str, Any] | None:
    """The figure gains are measured against: a value given by name, or a run's mean score."""
    if value is not None and run is not None:
        raise OptionError("--reference-value/--reference-run", "give one reference, a value or "
                          "a run")
    if qrels is not None and run is None:
        raise OptionError("--qrels", "names the qrels set of --reference-run: give that too")
    if name is not None and value is None and run is None:
        raise OptionError("--reference-name", "names --reference-value: give that too")
    if value is not None:
        return {"name": name or "reference", "value": float(value), "source": "value"}
    if run is None:
        return None
    snapshot, slash, tag = run.partition("/")
    if not slash or not snapshot or not tag:
        raise OptionError("--reference-run", f"{run!r} is not SNAPSHOT/RUN (say 2004/pircRB04t3)")
    return {"name": name or tag, **_run_mean(collection, snapshot, tag, metric, qrels)}


def _run_mean(collection: str, snapshot: str, run: str, metric: str, qrels: str | None
              ) -> dict[str, Any]:
    """A stored run's mean of `metric` (`trec_eval -c`; scored first when missing) on the
    snapshot's designated original qrels unless `qrels` names a set."""
    import math

    from tcdb.catalog.collections import get_snapshot
    from tcdb.collections.trec_eval_output import canonical_measure
    from tcdb.scoring.scores import score_table

    if canonical_measure(metric) is None:
        raise OptionError("--reference-run", f"{metric} is not a measure ir_measures computes: "
                          "give --reference-value instead")
    if qrels is None:
        with session_scope() as session:
            qrels = get_snapshot(session, collection, snapshot).original_qrels
        if qrels is None:
            raise OptionError("--qrels", f"snapshot {snapshot!r} has no original qrels: name "
                              "the set with --qrels")
    table = score_table(collection, snapshot, qrels, [metric], runs=[run])
    mean = float(table["value"].iloc[0])
    if math.isnan(mean):
        raise InputError(f"{snapshot}/{run}", None, f"no {metric} score for this run")
    return {"value": mean, "source": "run", "snapshot": snapshot, "run": run, "qrels": qrels,
            "n_topics": int(table["n_topics"].iloc[0])}
