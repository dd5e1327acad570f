"""The scaler rules an autoscaled fleet (autoscaled_fleet.py) follows: RunPod's two scaler types,
queue delay and request count (runpod-protocol.md section 6), one class each, and the registry that
maps the name a flag, a TOML file, the event log or a result spells to its rule.

A rule holds all that differs between scalers: its name and short label, what value it takes,
how many workers it wants added at an evaluation, how many one evaluation adds by default, and
how it reads in words. The fleet, jobbench's `--autoscale` spec, scenario names and the legend
ask the rule, never compare its name, so a new rule is one class here and its entry in SCALERS.
The real fleet and the simulated one run the same Fleet, so they follow the same rule object.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Protocol


@dataclass(frozen=True)
class Seen:
    """What a rule sees at one evaluation."""

    queued: int  # jobs in the queue (a job a take-ahead buffer holds is delivered, not queued)
    in_progress: int  # jobs delivered and not ended
    oldest_s: float  # how long the oldest queued job has waited; 0 when none is queued
    running: int  # workers decided, booting or polling


@dataclass(frozen=True)
class Decision:
    """What a rule wants at one evaluation; the fleet caps `add` at the room under its max."""

    add: int
    target: int | None  # the workers a rule that aims at a number aims at; None for the others
    reason: str  # each scale-up's reason in the log


class ScalerSettings(Protocol):
    """What a rule reads of the fleet's settings (fleet.FleetSettings)."""

    @property
    def max_workers(self) -> int: ...
    @property
    def scaler_value(self) -> float: ...
    @property
    def added_at_most(self) -> int: ...
    @property
    def count_in_progress(self) -> bool: ...
    @property
    def from_zero(self) -> bool: ...


class Scaler(ABC):
    """One scaler rule. Stateless: every fleet with this scaler shares the one instance."""

    name: ClassVar[str]  # how flags, TOML files, events and results spell it: `queue-delay`
    metavar: ClassVar[str]  # what its value is, in the spec's errors: `queue-delay=SECONDS`
    example: ClassVar[str]  # a value the --autoscale help shows: `queue-delay=4`
    label: ClassVar[str]  # its short name in a scenario's name: `4w-1024j-0.5s-qd4`

    def value_problem(self, value: float) -> str | None:
        """What is wrong with the scaler's value, None if nothing: both of RunPod's scalers
        take a positive number."""
        if value > 0 and math.isfinite(value):
            return None
        return f"must be positive, got {value:g}"

    @abstractmethod
    def default_step(self, max_workers: int) -> int:
        """The most workers one evaluation adds when the settings leave `step` at 0."""

    @abstractmethod
    def decide(self, seen: Seen, settings: ScalerSettings) -> Decision:
        """How many workers to add, given what the evaluation sees."""

    @abstractmethod
    def wording(self, value: float) -> str:
        """The rule and its value in words, for a scenario's legend: `queue delay 4 s`."""


class QueueDelay(Scaler):
    """Add workers once the oldest queued job has waited the value's seconds; with
    `from_zero`, a job queued while no worker runs starts one at once."""

    name = "queue-delay"
    metavar = "SECONDS"
    example = "4"
    label = "qd"

    def default_step(self, max_workers: int) -> int:
        return 1

    def decide(self, seen: Seen, settings: ScalerSettings) -> Decision:
        if seen.queued and seen.running == 0 and settings.from_zero:
            return Decision(1, None, "a job is queued and no worker runs")
        if seen.queued and seen.oldest_s >= settings.scaler_value:
            reason = f"queue delay {seen.oldest_s:.2f} s >= {settings.scaler_value:g} s"
            return Decision(settings.added_at_most, None, reason)
        return Decision(0, None, "")

    def wording(self, value: float) -> str:
        return f"queue delay {value:g} s"


class RequestCount(Scaler):
    """Keep ceil(jobs / value) workers, jobs being the queued ones and, with
    `count_in_progress`, those in progress too."""

    name = "request-count"
    metavar = "JOBS"
    example = "8"
    label = "rc"

    def default_step(self, max_workers: int) -> int:
        return max_workers  # no limit but the fleet's

    def decide(self, seen: Seen, settings: ScalerSettings) -> Decision:
        counted = seen.queued + (seen.in_progress if settings.count_in_progress else 0)
        target = min(math.ceil(counted / settings.scaler_value), settings.max_workers)
        add = min(max(target - seen.running, 0), settings.added_at_most)
        shown = (
            f"{seen.queued} queued + {seen.in_progress} in progress"
            if settings.count_in_progress
            else f"{seen.queued} queued"
        )
        reason = f"request count: {shown} / {settings.scaler_value:g} = {target} workers"
        return Decision(add, target, reason)

    def wording(self, value: float) -> str:
        return f"request count {value:g}"


# Every rule by its name, in the order errors and help list them.
SCALERS: Mapping[str, Scaler] = {rule.name: rule for rule in (QueueDelay(), RequestCount())}
