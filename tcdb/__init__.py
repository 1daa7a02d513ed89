"""tcdb — a longitudinal test-collection database for IR evaluation.

The Python API lives in `tcdb.api` and is re-exported here lazily, so that `import tcdb`
(and therefore `tcdb --help`) stays fast: pandas and friends load only when used.
"""

from __future__ import annotations

import importlib
from importlib.util import find_spec
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """`tcdb.runs(...)` resolves to `tcdb.api.runs`; submodules import as usual."""
    if name.startswith("_") or name == "api":
        raise AttributeError(name)
    if find_spec(f"tcdb.{name}") is not None:
        return importlib.import_module(f"tcdb.{name}")
    api = importlib.import_module("tcdb.api")
    try:
        return getattr(api, name)
    except AttributeError:
        raise AttributeError(f"module 'tcdb' has no attribute {name!r}") from None
