"""The Target seam: where a plan's reps run. The one run loop (core/run/loop.py) asks a Target for a
Session per scenario and a Session for reps. Three Targets implement it: `FakeTarget`, the fake
queue with a fleet of real worker processes (core/real_workers/fake_target.py); `SimTarget`, the
same queue and model policies in virtual time (core/sim/sim_target.py); and `LiveTarget`, an
endpoint over RunPod's client API (core/live/live_target.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from jobbench.core.scenario.config import RunConfig, Scenario
from jobbench.errors import JobbenchError
from jobbench.measure.figures import RepMeasure
from jobbench.results.model import ScenarioResult, TargetBlock
from jobbench.results.store import result_path


class Progress(Protocol):
    def message(self, text: str) -> None: ...
    def rep_started(self, scenario: str, rep: int, reps: int, burst: int) -> None: ...
    def rep_progress(self, done: int, total: int) -> None: ...
    def rep_finished(self, scenario: str, rep: int, figures: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class RepOutcome:
    """One rep, measured, and its events as saved; `stopped`: the rep ended early (a live
    burst cut short by a signal or its timeout), raised by the loop once the rep is saved."""

    measure: RepMeasure
    events: list[dict[str, Any]]
    stopped: JobbenchError | None = None


class Session(Protocol):
    """One scenario on one target, started once and reused across reps."""

    scenario: Scenario

    @property
    def title(self) -> str: ...

    def start(self) -> None: ...

    def entry(self) -> ScenarioResult:
        """The scenario's result entry before any rep: name, params, ideal, worker, sdk."""
        ...

    def environment(self) -> dict[str, Any]:
        """What the result's `environment` learns from the session (runpod, cpu_plan)."""
        ...

    def run_rep(self, rep: int, reps: int) -> RepOutcome: ...

    def stop(self) -> None: ...

    def keep_logs(self) -> None:
        """Called instead of a clean-up when the scenario failed: its logs stay for the error."""
        ...

    @property
    def logs_folder(self) -> Path | None:
        """Where the session's logs are (None: it has none), named when a run fails."""
        ...


class Target(Protocol):
    def describe(self) -> TargetBlock:
        """The result's `target` block: kind and endpoint, never a key."""
        ...

    def preflight(self, scenarios: Sequence[Scenario], progress: Progress) -> None:
        """Checks that must pass before anything starts or is written (exit 2 on a bad input);
        what takes a while (an SDK checkout's environment being built) says so on `progress`."""
        ...

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        """One line shown once the preflight passed: what runs where."""
        ...

    def session(self, scenario: Scenario, label: str, progress: Progress) -> Session: ...

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        """How many of these scenarios its sessions can run side by side, each on a queue of
        its own (core/run/lanes.py); 1: one at a time."""
        ...


@dataclass(frozen=True)
class Plan:
    """One side of a run: what runs (scenarios, reps, label), where (its Target)."""

    config: RunConfig
    target: Target

    @property
    def path(self) -> Path:
        return result_path(self.config.out, self.config.label)
