"""Typed results: what an operation returns, with a tidy DataFrame and JSON for every one.

`to_frame()` is flat and tidy (one row per observation, one column per variable: a report of
systems × snapshots × measures is one row per system, snapshot and measure), so a notebook
user can filter, pivot and plot it; `to_data()` is what `--json` prints, `to_json()` the same as
JSON text.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.operations.paper import PaperTable


class Result(BaseModel):
    """Base of every operation's result."""

    model_config = ConfigDict(arbitrary_types_allowed=True, protected_namespaces=())

    def to_frame(self) -> pd.DataFrame:
        """The result as one tidy DataFrame. Every result type defines its own."""
        raise NotImplementedError(f"{type(self).__name__}.to_frame")

    def paper_table(self) -> PaperTable:
        """The result as a table for a paper (`--format markdown|latex|csv`): by default its
        frame, captioned with what it is and, where the result has one, its lineage. Reports
        with significance tests override it to add marks and name the test."""
        from tcdb.operations.paper import frame_table, lineage_caption

        lineage = getattr(self, "lineage", None)
        doc = " ".join((type(self).__doc__ or type(self).__name__).strip().split("\n\n")[0]
                       .split())
        caption = "; ".join(p for p in (doc.rstrip("."), lineage_caption(lineage)) if p)
        return frame_table(self.to_frame(), caption=caption + ".", lineage=lineage,
                           label=f"tab:{type(self).__name__.removesuffix('Result').lower()}")

    def to_data(self) -> Any:
        """The result as JSON-able data (what `--json` prints): a dict, or a list for the
        results that list rows; NaN and infinities become null (JSON has no spelling for them)."""
        return json_safe(self.model_dump(mode="json"))

    def to_json(self, indent: int | None = 2) -> str:
        """The result as JSON text, as `--json` prints it (UTF-8, not escaped to ASCII)."""
        import json

        return json.dumps(self.to_data(), ensure_ascii=False, indent=indent)


def json_safe(value: Any) -> Any:
    """NaN and infinities as null (JSON has no spelling for them), numpy scalars as Python
    numbers, keys as text: the one rule `to_data` and the CLI's `--json` share."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return json_safe(value.item())
    return value
