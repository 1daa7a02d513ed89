"""What the literature operations return: the import's counts, the reported figures with how
often each metric is reported, and the report over one metric. Field names are the `--json`
keys of `tcdb literature import|list|report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from tcdb.operations import Result
from tcdb.operations.lineage import Lineage

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["publication", "year", "venue", "model", "category", "role", "metric", "value",
           "cross_validated", "notes"]


class LiteratureImportResult(Result):
    """What an import did: `added`, `replaced` or `unchanged`, with row counts."""

    collection: str
    file: str
    status: str
    n_rows: int
    n_added: int
    n_replaced: int
    n_unchanged: int

    def to_frame(self) -> pd.DataFrame:
        """One row: the file, its status and counts."""
        import pandas as pd

        return pd.DataFrame([self.model_dump()])


class ReportedFigure(BaseModel):
    """One figure of one publication: a model's best or baseline value of a metric."""

    publication: str
    year: int
    venue: str | None
    model: str
    category: str | None
    role: str
    metric: str
    value: float
    cross_validated: bool
    notes: str | None


class MetricUsage(BaseModel):
    """How many publications report a metric, and how many figures."""

    metric: str
    n_publications: int
    n_results: int


class LiteratureResult(Result):
    """A collection's reported figures by year, and how often each metric is reported."""

    collection: str
    metric: str | None  # only this metric (normalised), or every one
    results: list[ReportedFigure]
    metric_usage: list[MetricUsage]  # most used first: the metric pickers' order

    def to_frame(self) -> pd.DataFrame:
        """One row per figure: publication, year, venue, model, category, role, metric, value,
        cross_validated, notes; by year, publication, model, role and metric."""
        import pandas as pd

        frame = pd.DataFrame([r.model_dump() for r in self.results], columns=COLUMNS)
        return frame.astype({"year": "int64", "value": "float64", "cross_validated": "bool"})


class ValueReference(BaseModel):
    """A reference figure given by value (say, the best TREC run's)."""

    name: str
    value: float
    source: Literal["value"] = "value"


class RunReference(BaseModel):
    """A reference figure that is a stored run's mean score."""

    name: str
    value: float
    source: Literal["run"] = "run"
    snapshot: str
    run: str
    qrels: str
    n_topics: int


class YearCategory(BaseModel):
    """The highest best and baseline figures of one year and model category."""

    year: int
    category: str | None
    best: float | None
    n_best: int
    baseline: float | None
    n_baseline: int
    best_gain: float | None  # % over the reference


class Trend(BaseModel):
    """A least-squares line through a category's best figures (None below 3 figures)."""

    category: str | None
    n: int
    slope: float | None  # per year
    intercept: float | None
    r: float | None
    p: float | None
    ci_low: float | None
    ci_high: float | None
    first_year: int | None
    last_year: int | None
    trend_first: float | None = None  # the line's value in the first and the last year
    trend_last: float | None = None


class Gain(BaseModel):
    """A best figure and its gain in % over the reference."""

    publication: str
    year: int
    model: str
    category: str | None
    value: float
    cross_validated: bool
    gain: float | None


class LiteratureReport(Result):
    """Per year and category the best and baseline figures, a trend per category, gains over
    the reference, and how often each metric is reported."""

    collection: str
    metric: str
    reference: RunReference | ValueReference | None
    n_results: int
    n_publications: int
    per_year: list[YearCategory]
    trends: list[Trend]
    gains: list[Gain]
    metric_usage: list[MetricUsage]  # every metric of the collection
    lineage: Lineage | None = None  # the publications read, the reference run, the versions

    def to_frame(self) -> pd.DataFrame:
        """One row per year and category: best, n_best, baseline, n_baseline, best_gain."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.per_year],
                            columns=list(YearCategory.model_fields))
