"""The simulated Target (`--target sim`): each rep is core/sim/engine.py's simulate_rep, the same
queue and model policies the fake target runs, in this process, in virtual time. No processes, no
sockets and no logs; the result is marked simulated (target kind `sim`, and each scenario's
`simulated`: the model policy that ran it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.core.run.queue_figures import scenario_entry
from jobbench.core.run.target_seam import Progress, RepOutcome
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import EVENTS_MAX_JOBS, check_simulable, simulate_rep
from jobbench.results.model import ScenarioResult, TargetBlock

KIND = "sim"
WHERE = "simulated in virtual time (no processes)"


@dataclass
class SimSession:
    """One scenario simulated: nothing to start or stop, each rep a fresh queue and fleet."""

    scenario: Scenario
    progress: Progress
    label: str = ""
    seed: int | None = None

    @property
    def title(self) -> str:
        return f"{self.label} {self.scenario.name}" if self.label else self.scenario.name

    @property
    def logs_folder(self) -> Path | None:
        return None  # nothing runs outside this process: no logs to keep

    def start(self) -> None:
        """Nothing runs between reps; the preflight checked the scenario can be simulated."""
        if self.scenario.load.jobs > EVENTS_MAX_JOBS:
            self.progress.message(
                f"{self.title}: {self.scenario.load.jobs:,} jobs a rep: its events are not "
                f"saved to the events file (a simulated rep keeps them up to {EVENTS_MAX_JOBS:,})"
            )

    def entry(self) -> ScenarioResult:
        entry = scenario_entry(self.scenario, None)
        entry.simulated = check_simulable(self.scenario)
        return entry

    def environment(self) -> dict[str, Any]:
        return {}  # no SDK imported, no CPUs pinned

    def run_rep(self, rep: int, reps: int) -> RepOutcome:
        self.progress.rep_started(self.title, rep, reps, self.scenario.load.jobs)
        outcome = simulate_rep(
            self.scenario, seed=self.seed, rep=rep, progress=self.progress.rep_progress
        )
        self.progress.rep_finished(self.title, rep, outcome.measure.figures)
        return outcome

    def stop(self) -> None:
        """Nothing to stop: each rep's loop is closed when the rep ends."""

    def keep_logs(self) -> None:
        """No logs to keep."""


@dataclass
class SimTarget:
    """The simulated Target: scenarios of model (or runpod, by its sdk-1.12 model) workers."""

    seed: int | None = None

    def describe(self) -> TargetBlock:
        return TargetBlock(kind=KIND, endpoint="virtual time")

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        """Virtual time runs as fast as one core allows: nothing to overlap."""
        return 1

    def preflight(self, scenarios: Sequence[Scenario], progress: Progress) -> None:
        """Every scenario's workers are model policies and it asks for no fault: else a usage
        error before anything is written."""
        for scenario in scenarios:
            check_simulable(scenario)

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        """The fake target's line (docs/metrics.md, "The run table"), where it runs first."""
        s = scenarios[0]
        more = f" (+{len(scenarios) - 1} more scenarios)" if len(scenarios) > 1 else ""
        policy = check_simulable(s)
        worker = s.worker.describe() + ("" if s.worker.kind == "model" else f" as model {policy}")
        return (
            f"{WHERE}, take {s.latency.take.describe()} s, wake {s.latency.wake.describe()} s; "
            f"{s.workers} x {worker} x {s.slots} slots; "
            f"{s.describe_jobs()}; {reps} reps{more}"
        )

    def session(self, scenario: Scenario, label: str, progress: Progress) -> SimSession:
        return SimSession(scenario, progress, label=label, seed=self.seed)
