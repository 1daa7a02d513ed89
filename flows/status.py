"""What the scheduled deployments did and will do, read from the Prefect API: `tcdb flows status`.

Per deployment: its schedule, the next run the scheduler created, the last run (state, time,
what it did: the description of its artifact) and the work pool's workers. A schedule whose
next runs were never created — Prefect's scheduler keeps several runs ahead of every active
schedule — is said in one line: it is what a server without a working scheduler looks like.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import BaseModel

from tcdb.flows.deployments import TAGS

# A schedule younger than this may simply not have been visited by the scheduler yet.
SCHEDULER_GRACE = dt.timedelta(seconds=90)
TERMINAL = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


class RunSummary(BaseModel):
    """One flow run of a deployment."""

    name: str
    state: str
    time: dt.datetime | None  # when it ended, else when it started, else when it is due
    auto_scheduled: bool  # created by the server's scheduler, not by hand
    outcome: str | None  # what the run reported (its artifact's description)


class DeploymentStatus(BaseModel):
    name: str
    flow: str
    schedule: str
    paused: bool
    work_pool: str | None
    next_run: dt.datetime | None
    last_run: RunSummary | None
    problem: str | None  # one line, e.g. a scheduler that creates no runs


class WorkerStatus(BaseModel):
    name: str
    status: str
    last_heartbeat: dt.datetime | None


class FlowsStatus(BaseModel):
    """Every tcdb deployment on the server, and the workers of their work pools."""

    api: str
    deployments: list[DeploymentStatus]
    workers: dict[str, list[WorkerStatus]]  # by work pool

    @property
    def problems(self) -> list[str]:
        return [f"{d.name}: {d.problem}" for d in self.deployments if d.problem]


def describe_schedule(schedule: Any) -> str:
    """A Prefect schedule as a person reads it: the cron line, or every N s."""
    cron = getattr(schedule, "cron", None)
    if cron:
        return str(cron)
    interval = getattr(schedule, "interval", None)
    if isinstance(interval, dt.timedelta):
        return f"every {int(interval.total_seconds())} s"
    return str(schedule)


def flows_status(api: str, now: dt.datetime | None = None) -> FlowsStatus:
    """Read the tcdb deployments (tagged `tcdb`) and their runs from the API in use."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        DeploymentFilterTags,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort
    from prefect.exceptions import ObjectNotFound

    now = now or dt.datetime.now(dt.UTC)
    rows: list[DeploymentStatus] = []
    pools: set[str] = set()
    with get_client(sync_client=True) as client:
        deployments = client.read_deployments(
            deployment_filter=DeploymentFilter(tags=DeploymentFilterTags(all_=TAGS)))
        flows = {d.flow_id: client.read_flow(d.flow_id).name for d in deployments}
        for deployment in sorted(deployments, key=lambda d: d.name):
            only = DeploymentFilter(id=DeploymentFilterId(any_=[deployment.id]))

            def runs(states: list[StateType], sort: FlowRunSort, filt: DeploymentFilter = only
                     ) -> list[Any]:
                return client.read_flow_runs(
                    deployment_filter=filt, sort=sort, limit=1,
                    flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                        type=FlowRunFilterStateType(any_=states))))

            upcoming = runs([StateType.SCHEDULED], FlowRunSort.EXPECTED_START_TIME_ASC)
            done = runs([StateType(s) for s in TERMINAL] + [StateType.RUNNING],
                        FlowRunSort.EXPECTED_START_TIME_DESC)
            last = _summary(client, done[0]) if done else None
            schedules = [describe_schedule(s.schedule) for s in deployment.schedules or []]
            active = [s for s in deployment.schedules or [] if s.active]
            paused = bool(getattr(deployment, "paused", False))
            problem = None
            created = deployment.created or now
            if active and not paused and not upcoming and now - created > SCHEDULER_GRACE:
                problem = (f"the server's scheduler has created no run ahead of its schedule "
                           f"({', '.join(schedules)}) since the deployment was registered at "
                           f"{created:%Y-%m-%d %H:%M} UTC: is `prefect server start` running "
                           "with its scheduler service on?")
            if deployment.work_pool_name:
                pools.add(deployment.work_pool_name)
            rows.append(DeploymentStatus(
                name=deployment.name, flow=flows[deployment.flow_id],
                schedule=", ".join(schedules) or "none", paused=paused,
                work_pool=deployment.work_pool_name,
                next_run=upcoming[0].expected_start_time if upcoming else None,
                last_run=last, problem=problem))
        workers: dict[str, list[WorkerStatus]] = {}
        for pool in sorted(pools):
            try:
                found = client.read_workers_for_work_pool(pool)
            except ObjectNotFound:
                found = []
            workers[pool] = [WorkerStatus(name=w.name, status=str(getattr(w.status, "value",
                                                                            w.status)),
                                          last_heartbeat=w.last_heartbeat_time) for w in found]
    return FlowsStatus(api=api, deployments=rows, workers=workers)


def _summary(client: Any, run: Any) -> RunSummary:
    """A flow run's state, its time and what it did (its artifacts' descriptions)."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    artifacts = client.read_artifacts(
        flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run.id])))
    outcome = "; ".join(a.description for a in artifacts if a.description) or None
    if outcome is None and run.state is not None and run.state.message:
        outcome = run.state.message.splitlines()[0]
    return RunSummary(
        name=run.name, state=run.state.name if run.state else "unknown",
        time=run.end_time or run.start_time or run.expected_start_time,
        auto_scheduled=bool(run.auto_scheduled), outcome=outcome)
