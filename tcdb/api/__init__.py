"""The Python API: every tcdb operation as a function, with the same names as the CLI's fields.

    import tcdb
    result = tcdb.api.scores("longeval-web", "2023-01", measures=["nDCG@10", "AP"])
    result.to_frame()          # a tidy pandas DataFrame

Each function is derived from an operation (`tcdb.operations`): its parameters are the
request's fields (the CLI's positional arguments positional, every other field a keyword), it
runs on the default database (`TCDB_DATABASE_URL`) or `database=`, and it returns the typed
result, whose `.to_frame()` is a flat, tidy DataFrame and `.to_data()` the CLI's `--json`.

A parameter that takes several snapshots, measures, runs or systems takes one label as a string
(`"2022-06"` is one snapshot, never its characters) or a list of labels. Errors name these
parameters (`snapshots: …`), as the core speaks in fields. `help(tcdb.api.persistence)` lists
every parameter with its help text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MADE: dict[str, Callable[..., Any]] = {}


def _names() -> list[str]:
    from tcdb.operations import all_operations

    return sorted(all_operations())


def __getattr__(name: str) -> Callable[..., Any]:
    """Functions are made on first use, so `import tcdb.api` imports no report module."""
    if name.startswith("_"):
        raise AttributeError(name)
    if name not in _MADE:
        from tcdb.api.derive import function_of
        from tcdb.operations import all_operations

        operations = all_operations()
        if name not in operations:
            raise AttributeError(f"module 'tcdb.api' has no attribute {name!r}")
        _MADE[name] = function_of(operations[name])
    return _MADE[name]


def __dir__() -> list[str]:
    return _names()

