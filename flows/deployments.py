"""Deployments declared in code: which flow runs when, with what parameters.

`ingest-new-snapshots` for each collection spec the user names, on the spec's `schedule`
(nightly by default); `import-runs` and `evaluate` hourly (imports at :15, evaluation at :30 so
new runs are scored within the hour).
`tcdb flows list` reads these without any Prefect server (building a deployment object talks to
no API); `tcdb serve` serves them in-process, or registers them on a work pool when
`PREFECT_API_URL` names a server; `tcdb flows run NAME` runs one now by calling its flow.

The flows a user may name are the public flows of `tcdb.flows`'s modules, by their own names
(`flows()`); a flow's parameters are its function's (`tcdb.flows.parameters`).
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib
import json
import os
import pkgutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tcdb.collections.specs.spec import SpecSchedule, list_specs, load_spec
from tcdb.errors import FieldError, NotFoundError, some
from tcdb.flows.parameters import check_parameters, parameter_hints, unknown_parameter, wants_text

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.deployments.runner import RunnerDeployment

IMPORT_RUNS_CRON = "15 * * * *"
EVALUATE_CRON = "30 * * * *"
WORK_POOL = "tcdb"
TAGS = ["tcdb"]
DATABASE_VARIABLE = "TCDB_DATABASE_URL"  # where a worker finds its database


@functools.cache
def flows() -> dict[str, Flow[..., Any]]:
    """Every flow a user may run by name: the flows each module of `tcdb.flows` defines under a
    public name (`_each`, a helper, is not one), by the flow's name (imports prefect)."""
    from prefect import Flow

    import tcdb.flows

    found: dict[str, Flow[..., Any]] = {}
    for info in pkgutil.iter_modules(tcdb.flows.__path__):
        module = importlib.import_module(f"{tcdb.flows.__name__}.{info.name}")
        for attribute, value in vars(module).items():
            if (isinstance(value, Flow) and not attribute.startswith("_")
                    and value.fn.__module__ == module.__name__):
                found[value.name] = value
    return found


@dataclass(frozen=True)
class DeploymentDecl:
    """One scheduled deployment as tcdb declares it (before Prefect sees it)."""

    name: str
    flow: str  # a flow's name (`flows()`)
    schedule: SpecSchedule
    parameters: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    @property
    def cron(self) -> str | None:
        return self.schedule.cron

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "flow": self.flow, "schedule": self.schedule.describe(),
                "parameters": self.parameters, "description": self.description,
                "entrypoint": entrypoint(self.flow)}


def entrypoint(flow_name: str) -> str:
    """The module-path entrypoint a worker imports (works wherever tcdb is installed)."""
    function = load_flow(flow_name).fn
    return f"{function.__module__}.{function.__name__}"


def load_flow(flow_name: str) -> Flow[..., Any]:
    """The flow object for a flow name (imports prefect)."""
    known = flows()
    if flow_name not in known:
        raise NotFoundError(f"no flow {flow_name!r} (flows: {', '.join(known)})")
    return known[flow_name]


def spec_parameter(spec: Path | str) -> tuple[Path, str]:
    """(the spec file, the `spec_path` a deployment passes): a file the user names becomes an
    absolute path, so a worker in another folder finds it; a shipped spec named by its name
    (`longeval-web` or `longeval-web.yaml`) stays a name, which resolves on any machine."""
    path = Path(spec).expanduser()
    if path.exists():
        return path.resolve(), str(path.resolve())
    shipped = {p.name: p for p in list_specs()} | {p.stem: p for p in list_specs()}
    if not path.is_absolute() and str(spec) in shipped:
        return shipped[str(spec)], shipped[str(spec)].name
    names = ", ".join(sorted(p.stem for p in list_specs()))
    raise NotFoundError(f"collection spec not found: {spec} (shipped specs: {names})")


def declared_deployments(specs: Sequence[Path | str] | None = None, *, shipped: bool = False,
                         drop_folder: str = "runs") -> list[DeploymentDecl]:
    """The deployments: ingestion of each spec given (on its `schedule`, nightly by default),
    and the hourly run imports and evaluation. Shipped specs are scheduled only when named, or
    all of them with `shipped=True` (what `tcdb flows list` shows can be scheduled)."""
    from tcdb.flows.evaluate import evaluate
    from tcdb.flows.ingest import ingest_new_snapshots
    from tcdb.flows.runs import import_runs

    decls: list[DeploymentDecl] = []
    given: list[Path | str] = [p.name for p in list_specs()] if shipped else []
    given += list(specs or [])
    seen: set[str] = set()
    for item in given:
        path, parameter = spec_parameter(item)
        spec = load_spec(path)
        name = f"ingest-{spec.name}"
        if name in seen:
            continue
        seen.add(name)
        decls.append(DeploymentDecl(
            name, ingest_new_snapshots.name, spec.schedule, {"spec_path": parameter},
            f"Ingest the snapshots of {spec.name} declared in {path.name} that are new and "
            f"whose source is available ({spec.schedule.describe()})."))
    decls.append(DeploymentDecl(
        "import-runs", import_runs.name, SpecSchedule(cron=IMPORT_RUNS_CRON),
        {"drop_folder": drop_folder},
        f"Hourly: import run files dropped into {drop_folder}/<collection>/<snapshot>/."))
    decls.append(DeploymentDecl(
        "evaluate", evaluate.name, SpecSchedule(cron=EVALUATE_CRON), {},
        "Hourly: compute the scores that are missing for every run and qrels set."))
    return decls


def build_deployments(specs: Sequence[Path | str] | None = None, *, shipped: bool = False,
                      drop_folder: str = "runs", work_pool: str | None = None,
                      database_url: str | None = None) -> list[RunnerDeployment]:
    """Prefect deployment objects for the declarations; no API call, no server.

    `database_url` (absolute, see `worker_database_url`) goes into each deployment's job
    variables, so a worker that runs the flow in a temporary folder opens the same database.
    """
    from prefect.deployments.runner import EntrypointType

    result: list[RunnerDeployment] = []
    for decl in declared_deployments(specs, shipped=shipped, drop_folder=drop_folder):
        flow_obj = load_flow(decl.flow)
        timing: dict[str, Any] = ({"cron": decl.schedule.cron} if decl.schedule.cron
                                  else {"interval": decl.schedule.interval})
        try:
            deployment = flow_obj.to_deployment(
                name=decl.name, parameters=decl.parameters, description=decl.description,
                tags=TAGS, work_pool_name=work_pool,
                # one run of a deployment at a time on a server; a served deployment's limit
                # would be leased by whichever local API process took the slot ("slot lost")
                concurrency_limit=1 if work_pool else None,
                entrypoint_type=EntrypointType.MODULE_PATH,
                job_variables={"env": {DATABASE_VARIABLE: database_url}}
                if database_url else None, **timing)
        except ValueError as exc:  # Prefect's own check of a cron line
            raise FieldError("schedule", f"{decl.name}: {decl.schedule.describe()!r} is not a "
                             f"valid schedule ({str(exc).splitlines()[-1].strip()})") from None
        result.append(cast("RunnerDeployment", deployment))  # sync here: not a coroutine
    return result


def worker_database_url(url: str, folder: Path | None = None) -> tuple[str, str | None]:
    """The database URL a worker in any folder can open, and what was changed to make it so.

    A relative SQLite path is made absolute against `folder` (the current one): a process
    worker runs each flow in a temporary folder, where `sqlite:///tcdb.sqlite` names nothing.
    A password is left out (the worker's PGPASSWORD or ~/.pgpass supplies it), so it is not
    stored in Prefect's database.
    """
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if not database or database == ":memory:" or Path(database).is_absolute():
            return url, None
        absolute = ((folder or Path.cwd()) / database).resolve()
        return parsed.set(database=str(absolute)).render_as_string(hide_password=False), \
            f"the SQLite path {database} made absolute: {absolute}"
    if parsed.password is not None:
        return parsed._replace(password=None).render_as_string(hide_password=False), \
            "the password left out (a worker takes it from PGPASSWORD or ~/.pgpass)"
    return url, None


@contextmanager
def worker_database(url: str) -> Iterator[None]:
    """This process as a flow run's worker whose database is `url`, for the run only.

    A worker's database is its environment's `TCDB_DATABASE_URL` (a deployment's job
    variables, `tcdb serve`): each flow opens `Database()` once, at its start. `tcdb flows
    run` is the worker of the run it starts, so the database the user named is given the same
    way, and the process's own setting comes back when the run ends.
    """
    before = os.environ.get(DATABASE_VARIABLE)
    os.environ[DATABASE_VARIABLE] = url
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DATABASE_VARIABLE, None)
        else:
            os.environ[DATABASE_VARIABLE] = before


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


def next_run(schedule: SpecSchedule, after: dt.datetime | None = None) -> dt.datetime | None:
    """When a schedule fires next after `after` (now), in UTC; for an interval, counted from
    `after` (Prefect anchors it when the deployment is created)."""
    from prefect._vendor.croniter import croniter

    start = after or dt.datetime.now(dt.UTC)
    if schedule.interval is not None:
        return start + dt.timedelta(seconds=schedule.interval)
    if schedule.cron is None:
        return None
    return croniter(schedule.cron, start).get_next(dt.datetime)


def serve_deployments(deployments: Sequence[RunnerDeployment],
                      limit: int | None = None) -> None:
    """Serve in this process until stopped (SIGTERM/SIGINT end it cleanly). Prefect's own
    starting message is left out: its hint (`prefect deployment run …`) works only in a shell
    whose PREFECT_HOME matches; `tcdb serve` prints hints that carry it."""
    import warnings

    from prefect import serve

    # Prefect's SIGTERM handler calls the async `stop` without awaiting it; the shutdown that
    # follows (pause schedules, stop the local server) is still clean, so hide the warning.
    warnings.filterwarnings("ignore", message="coroutine 'Runner.astop' was never awaited",
                            category=RuntimeWarning)
    warnings.filterwarnings("ignore", message="coroutine 'Runner.start' was never awaited",
                            category=RuntimeWarning)
    _ignore_half_built_event_loops()
    _ignore_cancelled_callbacks()
    for deployment in deployments:
        deployment.work_pool_name = None
    serve(*deployments, limit=limit, print_starting_message=False)


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


def _ignore_cancelled_callbacks() -> None:
    """Silence another shutdown race of Prefect 3.8's runner: SIGTERM while a flow run's
    control channel is connected cancels its reader task, and asyncio logs the cancelled
    callback ("Exception in callback … CancelledError") with a traceback. The shutdown that
    follows is graceful; a cancelled task is not an error."""
    import asyncio
    import logging

    def keep(record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, asyncio.CancelledError)

    logging.getLogger("asyncio").addFilter(keep)


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
    declared = declared_deployments(specs, shipped=True)
    for decl in declared:
        if decl.name == name:
            return decl.flow, dict(decl.parameters)
    if name in flows():
        return name, {}
    known = sorted({d.name for d in declared} | set(flows()))
    raise NotFoundError(f"no flow or deployment {name!r} (known: {some(known)})")


def parse_params(items: Sequence[str], flow_obj: Flow[..., Any] | None = None
                 ) -> dict[str, Any]:
    """`k=v` pairs: v is JSON when it parses (1, true, ["AP"]), else the text as given.

    With a flow, names are checked against what it takes (its parameters, its request's
    fields: `tcdb.flows.parameters`), and a value for text is kept as text (`snapshot=2022`
    stays "2022").
    """
    hints = parameter_hints(flow_obj) if flow_obj is not None else {}
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise FieldError("param", f"{item}: not of the form k=v")
        if flow_obj is not None and key not in hints:
            raise unknown_parameter(flow_obj, key)
        if wants_text(hints.get(key)):
            params[key] = raw
            continue
        try:
            params[key] = json.loads(raw)
        except ValueError:
            params[key] = raw
    return params


def prepare_run(name: str, params: Sequence[str] = (),
                specs: Sequence[Path | str] | None = None
                ) -> tuple[Flow[..., Any], dict[str, Any]]:
    """The flow of a deployment (or a flow's name) and the arguments to call it with: its
    defaults and the `k=v` overrides, checked against the flow, its requests built (no API is
    started)."""
    flow_name, defaults = resolve(name, specs)
    flow_obj = load_flow(flow_name)
    return flow_obj, check_parameters(flow_obj, {**defaults, **parse_params(params, flow_obj)})


def run_now(name: str, params: Sequence[str] = (),
            specs: Sequence[Path | str] | None = None) -> Any:
    """Run a deployment's (or a flow's) flow now in this process and return its result."""
    flow_obj, parameters = prepare_run(name, params, specs)
    return flow_obj(**parameters)
