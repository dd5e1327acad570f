"""What a trend or a bisection runs at each commit: the suite's rows (or the one scenario of the
flags) run by the given worker from the commit's checkout, saved under the commit's label."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from jobbench.core.run.lanes import AUTO
from jobbench.core.run.target_seam import Plan, Target
from jobbench.core.scenario.build import build_scenario
from jobbench.core.scenario.checks import REPS, check_count, check_writable_folder
from jobbench.core.scenario.config import LatencyFlags, RunConfig, Scenario
from jobbench.core.scenario.project import Suite, Variant, apply_variant, load_project, pick_suite
from jobbench.core.sdk_history.commit_results import commit_label
from jobbench.core.sdk_history.commits import base_worker, check_repo, commit_worker
from jobbench.errors import UsageError
from jobbench.results.trend import Commit
from jobbench.workers.spec import WorkerSpec


@dataclass(frozen=True)
class Setup:
    repo: Path
    suite: Suite  # its rows as written: the worker is set per commit
    worker: WorkerSpec  # runpod, or a command; its checkout is each commit's
    reps: int
    out: Path
    pin_queue: bool = True
    lanes: int | str = AUTO  # rows side by side (core/run/lanes.py)

    def label(self, commit: Commit) -> str:
        return commit_label(self.repo, commit.sha)

    def planned(self) -> tuple[Scenario, ...]:
        """The rows with the worker, at no commit: what a saved entry is matched against."""
        return tuple(replace(s, worker=self.worker) for s in self.suite.scenarios)

    def scenarios(
        self, commit: Commit, names: frozenset[str] | None = None
    ) -> tuple[Scenario, ...]:
        """The rows (those of `names`, if given) as `commit` runs them; a UsageError when the
        commit cannot run them (its checkout lacks the command's script)."""
        rows = tuple(s for s in self.suite.scenarios if names is None or s.name in names)
        worker = commit_worker(self.worker, self.repo, commit)
        return apply_variant(
            replace(self.suite, scenarios=rows), Variant(self.label(commit), worker)
        )

    def plan(
        self, commit: Commit, target: Target, names: frozenset[str] | None = None, reps: int = 0
    ) -> Plan:
        config = RunConfig(
            scenarios=self.scenarios(commit, names),
            reps=reps or self.reps,
            label=self.label(commit),
            out=self.out,
        )
        return Plan(config, target)


@dataclass(frozen=True)
class ScenarioFlags:
    """`--workers`, `--slots`, `--burst`, `--job-seconds`, `--load` and the latency flags: any of
    them given runs that one scenario instead of a suite (None: not given)."""

    workers: int | None = None
    slots: int | None = None
    burst: int | None = None
    job_seconds: float | None = None
    load: str | None = None
    latency: LatencyFlags | None = None

    def given(self) -> list[str]:
        flags = {
            "--workers": self.workers,
            "--slots": self.slots,
            "--burst": self.burst,
            "--job-seconds": self.job_seconds,
            "--load": self.load,
            "--take-latency/--wake-latency/--hold/--done-latency": self.latency,
        }
        return [flag for flag, value in flags.items() if value is not None]


@dataclass(frozen=True)
class SetupRequest:
    """What trend and bisect are given alike: the checkout, the rows and the worker."""

    repo: Path | None
    suite: str | None = None
    scenario: ScenarioFlags = field(default_factory=ScenarioFlags)
    worker: str = "runpod"
    take_ahead: int = 0
    python: str | None = None
    reps: int | None = None  # None: the suite's (5 for the scenario of the flags)
    out: Path = Path("reports")
    pin_queue: bool = True
    lanes: int | str = AUTO
    folder: Path = Path(".")  # where jobbench.toml is looked for


def make_setup(request: SetupRequest) -> Setup:
    """Every flag checked (one line naming it and the fix) before anything runs."""
    worker = base_worker(request.worker, request.take_ahead, request.python)
    given = request.scenario.given()
    if request.suite is not None and given:
        raise UsageError(
            f"--suite {request.suite} and {given[0]}: give a suite or one scenario's flags"
        )
    if given:
        suite = Suite("flags", (_flags_scenario(request.scenario, worker),), reps=5)
    else:
        suite = pick_suite(load_project(request.folder), request.suite)
    reps = suite.reps if request.reps is None else request.reps
    check_count(REPS, reps)
    check_writable_folder(request.out, "--out")
    return Setup(
        check_repo(request.repo), suite, worker, reps, request.out, request.pin_queue,
        request.lanes,
    )  # fmt: skip


def _flags_scenario(flags: ScenarioFlags, worker: WorkerSpec) -> Scenario:
    return build_scenario(
        workers=Scenario.workers if flags.workers is None else flags.workers,
        slots=flags.slots,
        burst=Scenario.burst if flags.burst is None else flags.burst,
        load=flags.load,
        job_seconds=Scenario.job_seconds if flags.job_seconds is None else flags.job_seconds,
        worker=worker,
        latency=(flags.latency or LatencyFlags()).model(),
    )
