"""tcdb — a longitudinal test-collection database for IR evaluation.

The Python API lives in `tcdb.api`: every operation as a function returning a typed result,
whose `.to_frame()` is a tidy DataFrame::

    import tcdb
    tcdb.api.scores("longeval-web", "2023-01", measures=["nDCG@10", "AP"]).to_frame()

Its names that are not also core modules (`persistence`, `reusability`, `per_topic_deltas`,
…) are re-exported here lazily, so that `import tcdb` (and `tcdb --help`) stays fast.
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """Submodules import as usual; other names resolve to `tcdb.api`."""
    if name.startswith("_"):
        raise AttributeError(name)
    if find_spec(f"tcdb.{name}") is not None:
        return importlib.import_module(f"tcdb.{name}")
    api = importlib.import_module("tcdb.api")
    try:
        return getattr(api, name)
    except AttributeError:
        raise AttributeError(f"module 'tcdb' has no attribute {name!r}") from None
