"""Results reported in the literature: the rows, and the report over one metric."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tcdb.api._labels import _speaks_python

if TYPE_CHECKING:
    import pandas as pd


@_speaks_python()
def literature(collection: str, metric: str | None = None) -> pd.DataFrame:
    """The collection's reported results, one row per figure: publication, year, venue, model,
    category, role, metric, value, cross_validated, notes. See `tcdb literature list`."""
    from tcdb.literature.reported import literature_frame

    return literature_frame(collection, metric)


@_speaks_python()
def literature_report(
    collection: str,
    metric: str,
    reference_value: float | None = None,
    reference_name: str | None = None,
    reference_run: str | None = None,
    qrels: str | None = None,
) -> dict[str, Any]:
    """Per year and category the best and baseline figures, a least-squares trend per
    category (slope per year with its 95 % CI), gains in % over a reference value or a stored
    run's mean (`reference_run="SNAPSHOT/RUN"`), and metric usage. See `tcdb literature
    report`."""
    from tcdb.literature.reported import literature_report as report

    return report(collection, metric, reference_value=reference_value,
                  reference_name=reference_name, reference_run=reference_run, qrels=qrels)
