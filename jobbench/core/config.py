"""Frozen run configuration and its validation. Core code sees these, never CLI objects."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_queue.latency import LatencyModel, LatencySpecError
from jobbench.errors import UsageError
from jobbench.workers.spec import WorkerSpec, validate_worker

DEFAULT_SLOTS = 32


@dataclass(frozen=True)
class Scenario:
    name: str
    workers: int = 4
    slots: int = DEFAULT_SLOTS
    burst: int = 1024
    job_seconds: float = 0.5
    worker: WorkerSpec = field(default_factory=WorkerSpec)
    latency: LatencyModel = field(default_factory=LatencyModel)
    inputs: tuple[Any, ...] = ()  # empty: every job gets {"seconds": job_seconds}
    metric: str | None = None  # the figure a gate rests on for this scenario (None: default)

    def job_inputs(self) -> list[Any]:
        return list(self.inputs) if self.inputs else [{"seconds": self.job_seconds}]

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
        }


@dataclass(frozen=True)
class RunConfig:
    scenarios: tuple[Scenario, ...]
    reps: int = 5
    label: str = "run"
    out: Path = Path("reports")
    server_url: str | None = None  # None: start the embedded fake queue
    seed: int | None = None
    quiet: bool = False
    save_events: bool = True
    pin_queue: bool = True  # embedded queue on a CPU of its own, workers on the others


def validate_scenario(s: Scenario) -> Scenario:
    check_positive_int("--workers", s.workers)
    check_positive_int("--slots", s.slots)
    check_positive_int("--burst", s.burst)
    check_job_seconds(s.job_seconds)
    validate_worker(s.worker)
    return s


def validate_run(cfg: RunConfig) -> RunConfig:
    check_positive_int("--reps", cfg.reps)
    check_label(cfg.label)
    for scenario in cfg.scenarios:
        validate_scenario(scenario)
    return cfg


# Checks shared by fake-queue runs (validate_run) and live runs (live_command.live_config).
def check_positive_int(flag: str, value: int) -> None:
    if value < 1:
        raise UsageError(f"{flag} {value}: must be a whole number >= 1")


def check_label(label: str) -> None:
    """The label names the result file: no folders, no hidden files."""
    if not label or any(c in label for c in "/\\") or label.startswith("."):
        raise UsageError(f"--label {label!r}: use a plain file name like main or pr-123")


def check_job_seconds(value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--job-seconds {value}: use a number of seconds >= 0")


# Flags that the run and locust commands read alike.
def latency_from_flags(flags: dict[str, Any]) -> LatencyModel:
    try:
        return LatencyModel.from_mapping(
            {
                "take": flags["take_latency"],
                "wake": flags["wake_latency"],
                "hold": flags["hold"],
                "done": flags["done_latency"],
            }
        )
    except LatencySpecError as exc:
        raise UsageError(f"--{exc}".replace("_", "-", 1)) from None


def scenario_name(workers: int, burst: int, job_seconds: float) -> str:
    return f"{workers}w-{burst}j-{job_seconds:g}s"


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
