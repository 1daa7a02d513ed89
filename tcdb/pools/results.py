"""What the pool operations return: typed results the CLI, the API, flows and dashboard read.

Why one module: a pool's parameters and sizes appear in every pool result (build, list, show),
so they are one model, extended by each operation's own fields.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tcdb.operations import Result

if TYPE_CHECKING:
    import pandas as pd


class SizeStats(BaseModel):
    """Documents per topic of a pool."""

    min: int
    max: int
    mean: float
    total: int


class PoolParameters(BaseModel):
    """What every pool result names: the pool, how it was built, and its size."""

    name: str
    collection: str
    snapshot: str
    depth: int
    tie_order: str
    max_per_topic: int | None
    exclude_judged: str | None  # the qrels set whose judged documents were left out
    strategy: str  # `depth`, or the strategy with its parameters (`rbp:p=0.8,aggregate=sum`)
    budget: int | None  # a budgeted pool's budget (None: every document of the depth-k pool)
    budget_per_topic: bool  # the budget is per topic
    n_documents: int
    n_topics: int
    size: SizeStats
    status: str

    def flat(self) -> dict[str, Any]:
        """One flat row: the size as `size_min`, `size_max`, … columns."""
        row = self.model_dump(exclude={"size"})
        row.update({f"size_{k}": v for k, v in self.size.model_dump().items()})
        return {k: v for k, v in row.items() if not isinstance(v, list | dict)}


class PoolBuildResult(PoolParameters, Result):
    """`pool_build`: the pool built (status `built`, or `unchanged`) and how its runs were
    chosen."""

    runs: list[str]
    chosen: str
    n_unresolved_skipped: int
    seconds: float
    # an adaptive strategy given a budget without a batch orders it knowing no judgment
    adaptive_without_rounds: bool = False

    def to_frame(self) -> pd.DataFrame:
        """One row per pooled run, each with the pool's parameters and sizes."""
        import pandas as pd

        row = self.flat()
        return pd.DataFrame([{**row, "run": run} for run in self.runs],
                            columns=[*row, "run"])


class PoolSummary(PoolParameters):
    """One pool as `pools` lists it: parameters, sizes, status, judged fraction."""

    pooled_qrels: str | None
    n_runs: int
    n_judged: int
    judged_fraction: float
    created_at: dt.datetime
    exported_at: dt.datetime | None


class PoolsResult(Result):
    """`pools`: every pool (of a collection), oldest collection and snapshot first."""

    pools: list[PoolSummary]

    def to_frame(self) -> pd.DataFrame:
        """One row per pool; the size per topic as `size_min`, `size_max`, `size_mean`,
        `size_total`."""
        import pandas as pd

        columns = [*PoolSummary.model_fields]
        columns.remove("size")
        columns += ["size_min", "size_max", "size_mean", "size_total"]
        return pd.DataFrame([p.flat() for p in self.pools], columns=columns)

    def to_data(self) -> list[dict[str, Any]]:
        """A list of pools, as `pool list --json` has always printed."""
        rows: list[dict[str, Any]] = super().to_data()["pools"]
        return rows


class PoolTopic(BaseModel):
    topic: str
    n_documents: int
    n_judged: int
    n_unjudged: int  # still to judge


class PoolRunContribution(BaseModel):
    """A chosen run's pooled documents, and those no other chosen run retrieved."""

    run: str  # its tag
    n_pooled: int
    unique: int
    contributed: bool  # the run fed the snapshot's original judgments


class PoolShowResult(PoolSummary, Result):
    """`pool_show`: a summary with sizes per topic and each run's contribution."""

    per_topic: list[PoolTopic]
    runs: list[PoolRunContribution]
    description: str | None
    # no pooled run contributed to the original judgments: the pool judges what they missed
    only_new_runs: bool

    def to_frame(self) -> pd.DataFrame:
        """One row per topic: documents to judge, judged, still to judge."""
        import pandas as pd

        return pd.DataFrame([t.model_dump() for t in self.per_topic],
                            columns=list(PoolTopic.model_fields))

    def runs_frame(self) -> pd.DataFrame:
        """One row per pooled run: pooled documents, those only it retrieved, contributed."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs],
                            columns=list(PoolRunContribution.model_fields))


class PoolExportItem(BaseModel):
    """One document to judge, as assessors get it (blind: no run, rank or score)."""

    topic_id: str
    doc_id: str
    query: str | None = None
    description: str | None = None
    text: str | None = None  # the document's text (jsonl and csv exports only)


class PoolExportResult(Result):
    """`pool_export`: what was (or, without `out`, would be) written for assessors."""

    name: str
    format: str
    out: str | None  # the file written; None: nothing written, the pool left as it was
    n_documents: int
    n_topics: int
    order: str
    seed: int | None
    status: str
    n_texts_trimmed: int  # texts written without the blank lines around them
    grade_scale: str  # what the assessor writes in the grade column
    items: list[PoolExportItem]  # in the file's order

    def to_frame(self) -> pd.DataFrame:
        """One row per document to judge, in the file's order."""
        import pandas as pd

        return pd.DataFrame([i.model_dump() for i in self.items],
                            columns=list(PoolExportItem.model_fields))

    def to_data(self) -> dict[str, Any]:
        """The summary without the items (the file holds them)."""
        data = super().to_data()
        data.pop("items")
        return data

    def trec_text(self) -> str:
        """The export as the TREC format's qrels template, `topic 0 docid` lines."""
        return "".join(f"{i.topic_id} 0 {i.doc_id}\n" for i in self.items)


class PoolRoundResult(Result):
    """`pool_next_round`: the round added to a budgeted pool."""

    name: str
    round: int
    n_added: int
    n_documents: int
    budget: int
    budget_per_topic: bool
    n_topics: int
    status: str

    def to_frame(self) -> pd.DataFrame:
        """One row: the round and the pool's size after it."""
        import pandas as pd

        return pd.DataFrame([self.model_dump()])


class GradeConflict(BaseModel):
    """A document the base and the pooled set grade differently."""

    topic: str
    doc: str
    base: int
    new: int


class ExpandResult(Result):
    """`pool_expand`: the expanded set base ∪ pooled, and the grades the two disagree on."""

    name: str
    status: str  # created, or unchanged (that very union was already stored)
    base: str
    pooled: str
    n_judgments: int
    n_added: int
    prefer: str
    n_conflicts: int
    conflicts: list[GradeConflict]

    def to_frame(self) -> pd.DataFrame:
        """One row per conflicting grade (the set's figures in every row)."""
        import pandas as pd

        head = self.model_dump(exclude={"conflicts"})
        return pd.DataFrame([{**head, **c.model_dump()} for c in self.conflicts],
                            columns=[*head, *GradeConflict.model_fields])


class ImportJudgmentsResult(Result):
    """`pool_import_judgments`: the batch added to the pool's pooled set, and the expanded
    set when asked for."""

    name: str
    file: str
    pooled_qrels: str
    n_new: int
    n_repeated: int
    n_judged: int
    n_documents: int
    judged_fraction: float
    status: str
    expanded: ExpandResult | None
    seconds: float

    def to_frame(self) -> pd.DataFrame:
        """One row: the batch and the pool's judged share after it."""
        import pandas as pd

        row = self.model_dump(exclude={"expanded"})
        row["expanded"] = self.expanded.name if self.expanded is not None else None
        return pd.DataFrame([row])
