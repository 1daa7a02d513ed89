"""Typed results: what an operation returns, with a tidy DataFrame and JSON for every one.

`to_frame()` is flat and tidy (one row per observation, one column per variable: a report of
systems × snapshots × measures is one row per system, snapshot and measure), so a notebook
user can filter, pivot and plot it; `to_json()` is what `--json` prints.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import pandas as pd


class Result(BaseModel):
    """Base of every operation's result."""

    model_config = ConfigDict(arbitrary_types_allowed=True, protected_namespaces=())

    def to_frame(self) -> pd.DataFrame:
        """The result as one tidy DataFrame. Every result type defines its own."""
        raise NotImplementedError(f"{type(self).__name__}.to_frame")

    def to_json(self) -> dict[str, Any]:
        """JSON-able: NaN and infinities become null (JSON has no spelling for them)."""
        return _clean(self.model_dump(mode="json"))


def _clean(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
