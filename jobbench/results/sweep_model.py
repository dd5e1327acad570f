"""The sweep document, `jobbench.sweep/1` (reports/README.md, "Sweep"): the grid's axes, what
every cell shares, and one row per cell with its figures (medians over its reps, in virtual
time) and the `jobbench run` that measures it for real."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from jobbench.results.model_base import Doc, Number

SWEEP_SCHEMA: Literal["jobbench.sweep/1"] = "jobbench.sweep/1"
# The grid's axes, in the CSV's and the re-run command's order.
AXIS_NAMES = (
    "policy",
    "take_ahead",
    "workers",
    "slots",
    "job_seconds",
    "take_latency",
    "wake_latency",
    "load",
    "autoscale",
)
# The figures a sweep keeps per cell, in the CSV's order; takes_count is the rep's takes.count,
# steady_e2e_p99_s its steady part's end-to-end p99 (a profile's cell; a burst's is None).
SWEEP_FIGURES = (
    "time_to_p50_s",
    "time_to_p99_s",
    "throughput_jps",
    "efficiency",
    "takes_count",
    "steady_e2e_p99_s",
    "fleet_worker_s",
)
COLOR_FIGURES = {
    "time_to_p99_s": "time to 99 %",
    "efficiency": "efficiency",
    "steady_e2e_p99_s": "steady e2e p99",
    "fleet_worker_s": "worker-seconds",
}


class SweepAxes(Doc):
    """Each axis's values, in the grid's order."""

    policy: list[str]
    take_ahead: list[int]
    workers: list[int]
    slots: list[int]
    job_seconds: list[Number]
    take_latency: list[str]
    wake_latency: list[str]
    load: list[str] = Field(default_factory=list)  # burst:N or a profile; absent before 16
    autoscale: list[str] = Field(default_factory=list)  # "fixed" or a spec; absent before 17


class SweepFixed(Doc):
    """What every cell shares."""

    burst: int
    hold: str
    done_latency: str
    worker: Literal["model"] = "model"


class SweepCell(Doc):
    policy: str
    take_ahead: int
    workers: int
    slots: int
    job_seconds: Number
    take_latency: str
    wake_latency: str
    load: str | None = None  # burst:N (the fixed burst) or an arrival profile
    autoscale: str | None = None  # "fixed" (all workers all along) or an --autoscale spec
    time_to_p50_s: Number | None
    time_to_p99_s: Number | None
    throughput_jps: Number | None
    efficiency: Number | None
    takes_count: int | None
    steady_e2e_p99_s: Number | None = None
    fleet_worker_s: Number | None = None  # an autoscaled cell's worker-seconds billed
    command: str  # `jobbench run ...`: this cell on the fake queue, for real

    def figure(self, name: str) -> float | None:
        value = getattr(self, name)
        return None if value is None else float(value)


class Sweep(Doc):
    schema_: Literal["jobbench.sweep/1"] = Field(alias="schema")
    jobbench: str
    simulated: Literal[True] = True  # virtual time (core/sim/engine.py), never a measurement
    reps: int  # per cell; figures are medians over them
    seed: int | None
    axes: SweepAxes
    fixed: SweepFixed
    skipped: int  # cells whose policy and take-ahead do not go together
    cells: list[SweepCell]
