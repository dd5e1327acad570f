"""Frozen run configuration. Core code sees these, never CLI objects; a Scenario is built, and its
values checked, by core/scenario/build.py, and trusted after."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from fake_queue.api import FleetSettings, LatencyModel, LatencySpecError
from jobbench.core.scenario.checks import check_memory
from jobbench.core.scenario.faults import WorkerFault
from jobbench.core.scenario.load import Burst, Load
from jobbench.core.scenario.load_profiles import parse_load
from jobbench.errors import UsageError
from jobbench.workers.policies import DEFAULT_SLOTS
from jobbench.workers.spec import WorkerSpec


@dataclass(frozen=True)
class Scenario:
    name: str
    workers: int = 4
    slots: int = DEFAULT_SLOTS
    burst: int = 1024  # jobs per rep, all submitted at once (the `load`)
    job_seconds: float = 0.5
    worker: WorkerSpec = field(default_factory=WorkerSpec)
    latency: LatencyModel = field(default_factory=LatencyModel)
    inputs: tuple[Any, ...] = ()  # empty: every job gets {"seconds": job_seconds}
    metric: str | None = None  # the figure a gate rests on for this scenario (None: default)
    faults: tuple[str, ...] = ()  # the queue's fault rules (core/scenario/faults.py), as written
    worker_faults: tuple[WorkerFault, ...] = ()
    stall_s: float | None = None  # the watchdog's stall bound (None: from the scenario)
    slots_by_default: bool = False  # a suite row gave no slots: a command worker must not run it
    # An arrival profile (core/scenario/load_profiles.py); None: the burst
    load_spec: str | None = None
    # An autoscaled fleet (fake_queue/queue/autoscaled_fleet.py; `workers` is its max, as
    # build_scenario reads it); None: `workers` always on.
    fleet: FleetSettings | None = None

    def __post_init__(self) -> None:
        """What follows from the scenario's own fields however it is made (built, a preset, a
        test's), with nothing to check: a profile's job count and the fleet's worker names."""
        if self.load_spec is not None:  # a profile's jobs are the rep's: `burst` counts them
            object.__setattr__(self, "burst", self.load.jobs)
        if self.fleet is not None:  # the platform names its workers as the fixed fleet is named
            object.__setattr__(self, "fleet", replace(self.fleet, id_prefix=self._id_prefix))

    @cached_property
    def load(self) -> Load:
        """When the rep's jobs are submitted (core/scenario/load.py): the profile's arrivals, or
        `burst` jobs at once."""
        if self.load_spec is None:
            return Burst(self.burst)
        return parse_load(self.load_spec)

    @property
    def is_burst(self) -> bool:
        """Every job submitted at once: the load the ideal (docs/latency-model.md) is for."""
        return isinstance(self.load, Burst)

    @property
    def max_workers(self) -> int:
        """The most workers it runs at once: its fixed fleet, or an autoscaled fleet's max."""
        return max(self.workers, self.fleet.max_workers if self.fleet is not None else 0)

    @property
    def _id_prefix(self) -> str:
        return self.name.replace(" ", "-")[:24] + "-w"

    def worker_ids(self) -> list[str]:
        """The workers that run from the start, `<name>-w<N>`: the fixed fleet, or an
        autoscaled one's active workers (the platform numbers the ones it adds on). The fake
        target's and the simulator's alike, so a simulated split pairs with a measured one."""
        if self.fleet is not None:
            return self.fleet.active_ids()
        return [f"{self._id_prefix}{index}" for index in range(self.workers)]

    def job_inputs(self) -> list[Any]:
        return list(self.inputs) if self.inputs else [{"seconds": self.job_seconds}]

    @property
    def job_length_s(self) -> float | None:
        """How long each job lasts, as far as jobbench knows: `job_seconds` when it writes the
        inputs (the bench handler sleeps that long); None when they are the user's (--input,
        --inputs), whose handler takes what it takes. The ideal and the efficiency need it."""
        return None if self.inputs else self.job_seconds

    def describe_jobs(self) -> str:
        """`16 x 0.5 s jobs`, or `16 jobs (your inputs)` when their length is not known."""
        if self.job_length_s is None:
            return f"{self.burst} jobs (your inputs)"
        return f"{self.burst} x {self.job_length_s:g} s jobs"

    def params(self) -> dict[str, Any]:
        """The parameters a result records and comparisons match on."""
        return {
            "workers": self.workers,
            "slots": self.slots,
            "burst": self.burst,
            "job_seconds": self.job_seconds,
            "take_ahead": self.worker.take_ahead,
            "worker": self.worker.kind if self.worker.kind != "command" else self.worker.command,
            "policy": self.worker.policy,
            "latency": self.latency.to_json(),
            **({"load": self.load_spec} if self.load_spec is not None else {}),
            **({"fleet": self.fleet.to_json()} if self.fleet is not None else {}),
            # Only when set, as the faults: a run of the user's inputs never pairs with one of
            # jobbench's, and older results still pair.
            **({"inputs": len(self.inputs)} if self.inputs else {}),
            **self.fault_params(),
        }

    def fault_params(self) -> dict[str, list[str]]:
        """Only when set: a faulted scenario never pairs with a clean one, old results still do."""
        out = {"faults": list(self.faults)} if self.faults else {}
        if self.worker_faults:
            out["worker_faults"] = [fault.describe() for fault in self.worker_faults]
        return out


@dataclass(frozen=True)
class RunConfig:
    """What a plan runs and where its result goes; where it runs is the plan's Target."""

    scenarios: tuple[Scenario, ...]
    reps: int = 5
    label: str = "run"
    out: Path = Path("reports")
    quiet: bool = False
    save_events: bool = True


def check_fits(s: Scenario) -> Scenario:
    """Its workers (of its kind) and its burst fit in this machine's memory."""
    check_memory(s.workers, s.worker.kind, s.burst)
    return s


@dataclass(frozen=True)
class LatencyFlags:
    """The latency flags as given (seconds, kind:a,b or samples:FILE), for run and locust, and
    --take-extra (run's), the jobs more than asked a take may claim."""

    take: str = "0.5"
    wake: str = "0.05"
    hold: str = "20"
    done: str = "0"
    take_extra: int = 0

    def model(self) -> LatencyModel:
        values: dict[str, str | int] = {
            "take_latency": self.take,
            "wake_latency": self.wake,
            "hold": self.hold,
            "done_latency": self.done,
            "take_extra": self.take_extra,
        }
        try:
            return LatencyModel.from_mapping(values)
        except LatencySpecError as exc:  # exc.name is the key: Typer's flag is --take-latency
            raise UsageError(f"--{exc.name.replace('_', '-')}: {exc.problem}") from None


def scenario_name(
    workers: int,
    burst: int,
    job_seconds: float,
    load: str | None = None,
    fleet: FleetSettings | None = None,
) -> str:
    """`4w-1024j-0.5s`; a profile stands for the burst: `4w-rate-40-for-30s-0.5s`; an
    autoscaled fleet of up to 4 says its scaler's label and value: `4w-1024j-0.5s-qd4`
    (`-rc8`: request count)."""
    jobs = f"{burst}j" if load is None else load_tag(load)
    name = f"{workers}w-{jobs}-{job_seconds:g}s"
    if fleet is not None:
        name += f"-{fleet.rule.label}{fleet.scaler_value:g}"
    return name


def load_tag(load: str) -> str:
    """A profile in a scenario name: `rate:40/s:for:30s` -> `rate-40-for-30s`."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", load.replace("/s", "")).strip("-")[:40]


def read_inputs(input_json: str | None, inputs_file: Path | None) -> tuple[Any, ...]:
    """`--input JSON` (one input for every job) or `--inputs FILE.jsonl` (cycled)."""
    if input_json is not None and inputs_file is not None:
        raise UsageError("--input and --inputs: give one of them, not both")
    if input_json is not None:
        try:
            return (json.loads(input_json),)
        except ValueError as exc:
            raise UsageError(
                f"--input: not valid JSON ({exc}); e.g. '{{\"seconds\": 0.5}}'"
            ) from None
    if inputs_file is None:
        return ()
    try:
        lines = [line for line in inputs_file.read_text().splitlines() if line.strip()]
        values = tuple(json.loads(line) for line in lines)
    except OSError as exc:
        raise UsageError(f"--inputs {inputs_file}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise UsageError(f"--inputs {inputs_file}: a line is not valid JSON ({exc})") from None
    if not values:
        raise UsageError(f"--inputs {inputs_file}: no inputs; write one JSON value per line")
    return values
