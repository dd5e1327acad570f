"""`build_scenario`: the one way a Scenario is made from what `jobbench run` and `jobbench locust`
were given, a suite row of jobbench.toml, a built-in suite's row or a sweep's cell. Every default
and every rule across the scenario's fields is applied here once, and every value is checked
here, where it is read into the scenario: what is built is trusted after (the targets, the
simulator and the worker processes check nothing again).

What the caller brings is typed already: numbers, a WorkerSpec read and checked by
core/scenario/worker.py, a LatencyModel, faults read by core/scenario/faults.py. What is read here
is what needs the rest of the scenario: the load profile (its jobs are the rep's), the autoscaled
fleet (its max workers are `workers`), the slots (the default fits the SDK's and the model
worker's concurrency, not a command's) and the worker faults (they must name a worker that runs).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from fake_queue.api import LatencyModel
from jobbench.core.scenario.checks import (
    BURST,
    check_count,
    check_fleet_sizes,
    check_job_seconds,
    toml_terms,
)
from jobbench.core.scenario.config import Scenario, scenario_name
from jobbench.core.scenario.faults import WorkerFault, check_worker_faults
from jobbench.core.scenario.fleet_spec import parse_autoscale
from jobbench.core.scenario.load_profiles import parse_load
from jobbench.errors import UsageError
from jobbench.workers.policies import DEFAULT_SLOTS
from jobbench.workers.spec import WorkerSpec

COMMAND_SLOTS_UNKNOWN = (
    "a --worker command's concurrency is unknown; say how many jobs one process runs at once, "
    "e.g. --slots 1 for a plain sync handler"
)
STALL_S = (0.5, 3600)  # the watchdog's stall bound a scenario may set (--stall-after)


@dataclass(frozen=True)
class Terms:
    """How a scenario's errors name what was written: a command line's flags (the default), or
    a suite row of jobbench.toml (`row_terms`)."""

    load: str = "--load"
    autoscale: str = "--autoscale"
    # A TOML row: its bounds' errors after this, each flag as its key (checks.toml_terms).
    bounds_where: str | None = None

    def bounds(self) -> contextlib.AbstractContextManager[None]:
        if self.bounds_where is None:
            return contextlib.nullcontext()
        return toml_terms(self.bounds_where)


FLAGS = Terms()


def row_terms(at: str, where: str) -> Terms:
    """A suite row's terms: its profile and fleet named after `at` (the row by its number, as its
    keys' types are), its bounds after `where` (the row by its name)."""
    return Terms(load=f"{at}: load", autoscale=f"{at}: autoscale", bounds_where=where)


def build_scenario(
    *,
    name: str | None = None,
    workers: int = Scenario.workers,
    slots: int | None = None,
    burst: int = Scenario.burst,
    load: str | None = None,
    job_seconds: float = Scenario.job_seconds,
    worker: WorkerSpec | None = None,
    latency: LatencyModel | None = None,
    inputs: tuple[Any, ...] = (),
    metric: str | None = None,
    faults: tuple[str, ...] = (),
    worker_faults: tuple[WorkerFault, ...] = (),
    stall_s: float | None = None,
    autoscale: str | None = None,
    terms: Terms = FLAGS,
) -> Scenario:
    """The scenario these spell, every value checked (a one-line UsageError naming the flag, or
    the TOML key, and the fix). Left out: the Scenario's defaults; `name` from the fleet and the
    load (config.scenario_name); `slots` the SDK's 32, which a command worker may not assume;
    `load` a burst; `autoscale` (an --autoscale spec, core/scenario/fleet_spec.py) a fixed
    fleet."""
    worker = WorkerSpec() if worker is None else worker
    if load is not None:
        check_profile_jobs(load, terms.load)
    # The one place a fleet's max workers is set: --workers, checked against its active ones.
    fleet = None if autoscale is None else parse_autoscale(autoscale, workers, terms.autoscale)
    scenario = Scenario(
        name=name or scenario_name(workers, burst, job_seconds, load, fleet),
        workers=workers,
        slots=resolve_slots(slots, worker),
        slots_by_default=slots is None,
        burst=burst,
        load_spec=load,
        job_seconds=job_seconds,
        worker=worker,
        latency=LatencyModel() if latency is None else latency,
        inputs=inputs,
        metric=metric,
        faults=faults,
        worker_faults=worker_faults,
        stall_s=stall_s,
        fleet=fleet,
    )
    with terms.bounds():
        _check_bounds(scenario)
    return scenario


def resolve_slots(slots: int | None, worker: WorkerSpec) -> int:
    """--slots as given, else the default, which only fits workers whose concurrency jobbench
    sets (runpod, model): a user command given 32 jobs it runs one by one would time out."""
    if slots is not None:
        return slots
    if worker.kind == "command":
        raise UsageError(f"--slots: {COMMAND_SLOTS_UNKNOWN}")
    return DEFAULT_SLOTS


def check_profile_jobs(load: str, flag: str) -> None:
    """The profile parses, and its jobs fit in a rep (--burst's bound: the queue holds them all,
    as a live rep holds their records)."""
    jobs = parse_load(load, flag=flag).jobs
    if jobs > BURST.most:
        raise UsageError(
            f"{flag} {load}: {jobs:,} jobs a rep; a rep takes at most {BURST.most:,.0f}; "
            "lower the rate or the duration"
        )


def _check_bounds(s: Scenario) -> None:
    """Its numbers within their bounds (core/scenario/checks.py), its worker faults on workers
    that run, its stall bound."""
    check_fleet_sizes(s.workers, s.slots)
    if s.load_spec is None:  # a profile's jobs were checked as it was read
        check_count(BURST, s.burst)
    check_job_seconds(s.job_seconds)
    check_scenario_faults(s)
    low, high = STALL_S
    if s.stall_s is not None and not low <= s.stall_s <= high:
        raise UsageError(f"--stall-after {s.stall_s:g}: use {low:g} to {high:g} seconds")


def check_scenario_faults(s: Scenario) -> None:
    """Each worker fault names a worker that runs from the start: the fixed fleet's, or an
    autoscaled one's active workers."""
    if s.fleet is None:
        check_worker_faults(s.worker_faults, s.workers, "--worker-fault")
    else:
        check_worker_faults(s.worker_faults, s.fleet.active, "--worker-fault", autoscaled=True)
