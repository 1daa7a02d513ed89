"""Deployments declared in code: which flow runs when, with what parameters.

Defaults: `ingest-new-snapshots` for every shipped collection spec nightly, `import-runs` and
`evaluate` hourly (imports at :15, evaluation at :30 so new runs are scored within the hour).
`tcdb flows list` reads these without any Prefect server (building a deployment object talks to
no API); `tcdb serve` serves them in-process, or registers them on a work pool when
`PREFECT_API_URL` names a server; `tcdb flows run NAME` runs one now by calling its flow.
"""

from __future__ import annotations

import importlib
import inspect
import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tcdb.errors import FieldError, NotFoundError

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.deployments.runner import RunnerDeployment

NIGHTLY = "0 2 * * *"
IMPORT_RUNS_CRON = "15 * * * *"
EVALUATE_CRON = "30 * * * *"
WORK_POOL = "tcdb"
TAGS = ["tcdb"]

# Flow name → "module:function" under tcdb.flows (imported only when needed).
FLOWS: dict[str, str] = {
    "ingest-snapshot": "tcdb.flows.ingest:ingest_snapshot",
    "ingest-new-snapshots": "tcdb.flows.ingest:ingest_new_snapshots",
    "import-runs": "tcdb.flows.runs:import_runs",
    "evaluate": "tcdb.flows.evaluate:evaluate",
    "build-pool": "tcdb.flows.pools:build_pool",
    "simulate-pools": "tcdb.flows.pools:simulate_pools",
    "refresh": "tcdb.flows.refresh:refresh",
}


@dataclass(frozen=True)
class DeploymentDecl:
    """One scheduled deployment as tcdb declares it (before Prefect sees it)."""

    name: str
    flow: str  # a key of FLOWS
    cron: str
    parameters: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "flow": self.flow, "schedule": self.cron,
                "parameters": self.parameters, "description": self.description,
                "entrypoint": entrypoint(self.flow)}


def entrypoint(flow_name: str) -> str:
    """The module-path entrypoint a worker imports (works wherever tcdb is installed)."""
    module, function = FLOWS[flow_name].split(":")
    return f"{module}.{function}"


def load_flow(flow_name: str) -> Flow:
    """The flow object for a flow name (imports prefect)."""
    if flow_name not in FLOWS:
        raise NotFoundError(f"no flow {flow_name!r} (flows: {', '.join(FLOWS)})")
    module, function = FLOWS[flow_name].split(":")
    return getattr(importlib.import_module(module), function)


def declared_deployments(specs: Sequence[Path | str] | None = None, *, shipped: bool = True,
                         drop_folder: str = "runs") -> list[DeploymentDecl]:
    """The deployments: nightly ingestion per spec (shipped ones and `specs`), hourly runs."""
    from tcdb.collections.spec import list_specs, load_spec

    decls: list[DeploymentDecl] = []
    paths: list[tuple[Path, str]] = []
    if shipped:
        paths += [(p, p.name) for p in list_specs()]  # by name: resolves on any machine
    paths += [(Path(p).resolve(), str(Path(p).resolve())) for p in specs or []]
    seen: set[str] = set()
    for path, parameter in paths:
        spec = load_spec(path)
        name = f"ingest-{spec.name}"
        if name in seen:
            continue
        seen.add(name)
        decls.append(DeploymentDecl(
            name, "ingest-new-snapshots", NIGHTLY, {"spec_path": parameter},
            f"Nightly: ingest the snapshots of {spec.name} declared in {path.name} that are "
            "new and whose source is available."))
    decls.append(DeploymentDecl(
        "import-runs", "import-runs", IMPORT_RUNS_CRON, {"drop_folder": drop_folder},
        f"Hourly: import run files dropped into {drop_folder}/<collection>/<snapshot>/."))
    decls.append(DeploymentDecl(
        "evaluate", "evaluate", EVALUATE_CRON, {},
        "Hourly: compute the scores that are missing for every run and qrels set."))
    return decls


def build_deployments(specs: Sequence[Path | str] | None = None, *, shipped: bool = True,
                      drop_folder: str = "runs",
                      work_pool: str | None = None) -> list[RunnerDeployment]:
    """Prefect deployment objects for the declarations; no API call, no server."""
    from prefect.deployments.runner import EntrypointType

    result: list[RunnerDeployment] = []
    for decl in declared_deployments(specs, shipped=shipped, drop_folder=drop_folder):
        flow_obj = load_flow(decl.flow)
        result.append(flow_obj.to_deployment(  # type: ignore[arg-type]  # sync here
            name=decl.name, cron=decl.cron, parameters=decl.parameters,
            description=decl.description, tags=TAGS, concurrency_limit=1,
            work_pool_name=work_pool, entrypoint_type=EntrypointType.MODULE_PATH,
        ))
    return result


def register_deployments(deployments: Sequence[RunnerDeployment],
                         work_pool: str = WORK_POOL) -> list[str]:
    """Register deployments with the server at PREFECT_API_URL on a process work pool.

    The pool is created when missing; its workers (`prefect worker start --pool tcdb`, on any
    machine with tcdb installed) then run the flows. Returns the deployment ids.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_work_pool(work_pool)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=work_pool, type="process"))
    ids = []
    for deployment in deployments:
        deployment.work_pool_name = work_pool
        ids.append(str(deployment.apply(work_pool_name=work_pool)))
    return ids


def serve_deployments(deployments: Sequence[RunnerDeployment], limit: int | None = None,
                      announce: bool = True) -> None:
    """Serve in this process until stopped (SIGTERM/SIGINT end it cleanly)."""
    import warnings

    from prefect import serve

    # Prefect's SIGTERM handler calls the async `stop` without awaiting it; the shutdown that
    # follows (pause schedules, stop the local server) is still clean, so hide the warning.
    warnings.filterwarnings("ignore", message="coroutine 'Runner.astop' was never awaited",
                            category=RuntimeWarning)
    warnings.filterwarnings("ignore", message="coroutine 'Runner.start' was never awaited",
                            category=RuntimeWarning)
    _ignore_half_built_event_loops()
    for deployment in deployments:
        deployment.work_pool_name = None
    serve(*deployments, limit=limit, print_starting_message=announce)


def _ignore_half_built_event_loops() -> None:
    """Silence one shutdown race of Prefect 3.8: an event loop created while SIGTERM unwinds
    the runner can be garbage-collected half-built, and its `__del__` then prints an
    "Exception ignored … object has no attribute …" traceback — '_ssock', or '_debug' when it
    was cut off sooner (`tcdb serve` under load). Nothing is left undone by it."""
    import sys

    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not half_built_event_loop(unraisable.exc_value):
            previous(unraisable)

    sys.unraisablehook = hook


def half_built_event_loop(error: BaseException | None) -> bool:
    """Whether `error` is an attribute an event loop lacks because its `__init__` never ran
    to the end (the interpreter names the object an attribute lookup failed on)."""
    import asyncio

    return isinstance(error, AttributeError) and isinstance(
        getattr(error, "obj", None), asyncio.AbstractEventLoop)


# --- running one now --------------------------------------------------------------------------


def resolve(name: str, specs: Sequence[Path | str] | None = None
            ) -> tuple[str, dict[str, Any]]:
    """(flow name, default parameters) for a deployment name or a flow name."""
    for decl in declared_deployments(specs):
        if decl.name == name:
            return decl.flow, dict(decl.parameters)
    if name in FLOWS:
        return name, {}
    known = sorted({d.name for d in declared_deployments(specs)} | set(FLOWS))
    raise NotFoundError(f"no flow or deployment {name!r} (known: {', '.join(known)})")


def parse_params(items: Sequence[str], flow_obj: Flow | None = None) -> dict[str, Any]:
    """`k=v` pairs: v is JSON when it parses (1, true, ["AP"]), else the text as given.

    With a flow, names are checked against its parameters, and a value for a text parameter is
    kept as text (`snapshot=2022` stays "2022").
    """
    hints: dict[str, Any] = {}
    names: list[str] | None = None
    if flow_obj is not None:
        names = list(inspect.signature(flow_obj.fn).parameters)
        try:
            hints = typing.get_type_hints(flow_obj.fn)
        except (NameError, TypeError):  # an annotation only a type checker can resolve
            hints = {}
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise FieldError("param", f"{item}: not of the form k=v")
        if flow_obj is not None and names is not None and key not in names:
            raise FieldError("param", f"flow {flow_obj.name!r} has no parameter {key!r} "
                             f"(parameters: {', '.join(names)})")
        if _wants_text(hints.get(key)):
            params[key] = raw
            continue
        try:
            params[key] = json.loads(raw)
        except ValueError:
            params[key] = raw
    return params


def _wants_text(hint: Any) -> bool:
    """True for `str` and `str | None` parameters."""
    if hint is str:
        return True
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = set(typing.get_args(hint)) - {type(None)}
        return args == {str}
    return False


def run_now(name: str, params: Sequence[str] = (),
            specs: Sequence[Path | str] | None = None) -> Any:
    """Run a deployment's (or a flow's) flow now in this process and return its result."""
    from tcdb.flows.parameters import check_parameters

    flow_name, defaults = resolve(name, specs)
    flow_obj = load_flow(flow_name)
    return flow_obj(**check_parameters(flow_obj, {**defaults, **parse_params(params, flow_obj)}))
