"""The registry of operations, by name (as ir_measures registers measures).

`@operation("persistence", command="report persistence")` on a function
`persistence(request: PersistenceRequest, db: Database) -> PersistenceResult` registers it;
the request and result types are read from its annotations. `all_operations()` imports the
modules that define operations (`MODULES`) and returns them all, in that order.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_type_hints

from tcdb.operations.database import Database
from tcdb.operations.request import Request
from tcdb.operations.result import Result

Req = TypeVar("Req", bound=Request)
Res = TypeVar("Res", bound=Result)

# Modules that define operations, imported on demand so `tcdb --help` stays fast, and in this
# order only until the one asked for is found (`get_operation`): the light modules that bring
# data in come first, so `tcdb run import` loads neither pandas nor scipy (issue 41, Build 8).
# A new operation's module is added here, and appears in the CLI, the API and the flows.
MODULES: list[str] = [
    # the catalogue, ingest, runs, qrels and scores: what imports data (light to load)
    "tcdb.runs.operations",
    "tcdb.runs.listing",
    "tcdb.runs.exporting",
    "tcdb.catalog.collections",
    "tcdb.catalog.sync",
    "tcdb.ingest.snapshot",
    "tcdb.ingest.register",
    "tcdb.judging.qrels_operations",
    "tcdb.scoring.score_operations",
    "tcdb.catalog.topic_sets",
    "tcdb.catalog.contamination",
    # the evaluation, the pools and the reports (they load pandas and scipy)
    "tcdb.scoring.evaluation",
    "tcdb.pools.build",
    "tcdb.pools.inspect",
    "tcdb.pools.export",
    "tcdb.pools.rounds",
    "tcdb.judging.pooled",
    "tcdb.reports.reusability",
    "tcdb.reports.leave_out",
    "tcdb.reports.assessor_agreement",
    "tcdb.reports.judge_agreement",
    "tcdb.pools.simulate",
    "tcdb.reports.source_bias",
    "tcdb.judging.by_source",
    "tcdb.reports.persistence",
    "tcdb.reports.per_topic_deltas",
    "tcdb.reports.topic_deltas",
    "tcdb.reports.ranking_agreement",
    "tcdb.reports.drift",
    "tcdb.reports.snapshot_stats",
    "tcdb.reports.compare",
    "tcdb.reports.diff_runs",
    "tcdb.reports.leaderboard",
    "tcdb.reports.subset",
    "tcdb.literature.reported",
    "tcdb.published.importing",
    "tcdb.published.listing",
    "tcdb.published.over_time",
    "tcdb.reports.rankings_across_snapshots",
]


@dataclass(frozen=True)
class Operation(Generic[Req, Res]):
    """One operation: its name (the API function and the flow task), the CLI command it is,
    its request and result types, and the function that does it."""

    name: str
    command: tuple[str, ...]
    request: type[Req]
    result: type[Res]
    function: Callable[[Req, Database], Res]
    writes: bool

    @property
    def summary(self) -> str:
        """The first line of the function's docstring: the CLI's and the API's help."""
        return (inspect.getdoc(self.function) or self.name).splitlines()[0]

    def __call__(self, request: Req, db: Database) -> Res:
        """Run on `db`, which the function hands to all it calls; a fault of that database
        leaves as one `DatabaseError`."""
        from tcdb.storage.db import database_faults

        with database_faults(db.url):
            return self.function(request, db)

    def run(self, db: Database, **fields: Any) -> Res:
        """Build the request from `fields` (validated, errors naming the field) and run it."""
        return self(self.request.of(**fields), db)


_REGISTRY: dict[str, Operation[Any, Any]] = {}


def operation(name: str, *, command: str, writes: bool = False
              ) -> Callable[[Callable[[Req, Database], Res]], Callable[[Req, Database], Res]]:
    """Register `function(request, db) -> result` as the operation `name`.

    `command` is its CLI path (`"report persistence"`); `writes`: it stores something (an
    import, an evaluation, a pool), so front ends that only read (the dashboard) leave it out.
    """
    def register(function: Callable[[Req, Database], Res]) -> Callable[[Req, Database], Res]:
        hints = get_type_hints(function)
        parameters = list(inspect.signature(function).parameters)
        request, result = hints[parameters[0]], hints["return"]
        if not (issubclass(request, Request) and issubclass(result, Result)):
            raise TypeError(f"operation {name}: takes a Request and returns a Result")
        if name in _REGISTRY and _REGISTRY[name].function is not function:
            raise ValueError(f"operation {name!r} is defined twice")
        _REGISTRY[name] = Operation(name, tuple(command.split()), request, result, function,
                                    writes)
        return function

    return register


def all_operations() -> dict[str, Operation[Any, Any]]:
    """Every operation, by name, in the order of `MODULES`."""
    for module in MODULES:
        importlib.import_module(module)
    return dict(_REGISTRY)


def get_operation(name: str) -> Operation[Any, Any]:
    """The operation `name`, importing `MODULES` in order only until it is registered; a
    KeyError names the known ones."""
    for module in MODULES:
        if name in _REGISTRY:
            break
        importlib.import_module(module)
    if name not in _REGISTRY:
        raise KeyError(f"no operation {name!r} (known: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[name]
