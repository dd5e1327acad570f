"""The live Target: bursts or arrival profiles at an endpoint that speaks RunPod's client API (a
real one, or a fake queue someone else runs). No queue, no workers: each rep submits via /run
(a profile's jobs each at its intended time) and follows /status until every job is terminal;
figures come from client-side times (docs/metrics.md, live mode)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.clients.endpoint import Endpoint, describe_rate
from jobbench.clients.live_burst import RUN_WINDOW, BurstPlan, LiveBurst
from jobbench.clients.live_http import LiveHttp
from jobbench.clients.live_records import BurstRecord
from jobbench.core.run.target_seam import Progress, RepOutcome
from jobbench.core.scenario.config import Scenario, load_tag
from jobbench.core.scenario.load import Wave
from jobbench.errors import Interrupted, JobbenchError, RunFailed
from jobbench.measure import live_metrics
from jobbench.procs.signals import stop_signals_call
from jobbench.results.model import ScenarioResult, TargetBlock


def live_scenario_name(burst: int, job_seconds: float, load: str | None = None) -> str:
    """`live-1024j-0.5s`; a profile stands for the burst: `live-rate-40-for-30s-0.5s`."""
    if load is None:
        return f"live-{burst}j-{job_seconds:g}s"
    return f"live-{load_tag(load)}-{job_seconds:g}s"


@dataclass(frozen=True)
class LiveTarget:
    """The live Target: an endpoint over RunPod's client API, paced at `submit_rate`."""

    endpoint: Endpoint
    submit_rate: float | None  # None: RunPod's /run window; inf: unpaced
    run_window: tuple[int, float] = RUN_WINDOW  # that window (a test's may be tighter)

    def describe(self) -> TargetBlock:
        return TargetBlock(kind="live", endpoint=self.endpoint.url)

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        """One endpoint, one queue: its rows cannot overlap."""
        return 1

    def preflight(self, scenarios: Sequence[Scenario], progress: Progress) -> None:
        asyncio.run(_preflight(self.endpoint))

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        s, where = scenarios[0], f"live endpoint {self.endpoint.url}"
        pace = describe_rate(self.submit_rate)
        if s.is_burst:
            return f"{where}: {s.burst} jobs x {reps} reps, /run paced {pace}"
        return (
            f"{where}: {s.load.describe()} x {reps} reps, each /run at its intended time "
            f"(open loop) within /run pacing {pace}"
        )

    def session(self, scenario: Scenario, label: str, progress: Progress) -> LiveSession:
        return LiveSession(scenario, self, progress)


@dataclass
class LiveSession:
    scenario: Scenario
    target: LiveTarget
    progress: Progress

    @property
    def title(self) -> str:
        return self.scenario.name

    def start(self) -> None:
        """Nothing to start: the endpoint's workers are the platform's."""

    def stop(self) -> None:
        """Nothing to stop: every burst cancels what it left pending before it returns."""

    def keep_logs(self) -> None:
        """No logs of ours to keep."""

    @property
    def logs_folder(self) -> Path | None:
        return None

    def environment(self) -> dict[str, Any]:
        return {}

    def entry(self) -> ScenarioResult:
        s = self.scenario
        return ScenarioResult.model_validate(
            {
                "name": s.name,
                "params": {
                    "workers": None,
                    "slots": None,
                    "burst": s.burst,
                    "job_seconds": s.job_seconds,
                    "take_ahead": None,
                    "worker": "live",
                    "policy": None,
                    "latency": None,
                    "submit_rate": describe_rate(self.target.submit_rate),
                    "inputs": len(s.inputs) or None,
                    **({"load": s.load_spec} if not s.is_burst else {}),
                },
                "ideal_s": None,
                "worker": "live endpoint",
                "sdk": None,
                "reps": [],
                "summary": {},
            }
        )

    def rep_timeout_s(self) -> float:
        """A bound, never tight: cold starts, then every job on one slot, then the pacing and
        the profile's own span."""
        s, rate = self.scenario, self.target.submit_rate
        submit_s = s.burst / (rate or RUN_WINDOW[0] / RUN_WINDOW[1])
        span_s = s.load.waves()[-1].at_s
        return 300.0 + s.burst * max(s.job_seconds, 0.1) + submit_s + span_s

    def run_rep(self, rep: int, reps: int) -> RepOutcome:
        self.progress.rep_started(self.title, rep, reps, self.scenario.burst)
        record = asyncio.run(self._drive())
        s = self.scenario
        measure = live_metrics.live_rep_measure(
            record, None if s.is_burst else s.load_spec, s.load.warmup_s
        )
        self.progress.rep_finished(self.title, rep, measure.figures)
        return RepOutcome(measure, live_metrics.live_events(record), _stopped(record, rep))

    async def _drive(self) -> BurstRecord:
        """One burst; the first Ctrl-C or SIGTERM stops it and cancels its pending jobs, a
        second one skips the cancelling."""
        stop, hard_stop = asyncio.Event(), asyncio.Event()

        def on_signal() -> None:
            (hard_stop if stop.is_set() else stop).set()

        s = self.scenario
        expected = None if s.inputs else s.job_seconds  # the bench handler sleeps that long
        inputs = s.job_inputs()
        plan = BurstPlan(
            tuple(inputs[i % len(inputs)] for i in range(s.burst)),
            self.target.submit_rate,
            self.rep_timeout_s(),
            expected_execution_s=expected,
            due_s=None if s.is_burst else due_times(s.load.waves()),
            run_window=self.target.run_window,
        )
        http = LiveHttp(self.target.endpoint)
        try:
            with stop_signals_call(on_signal):
                burst = LiveBurst(http, plan, self.progress.rep_progress)
                record = await burst.run(stop, hard_stop)
            if stop.is_set() and record.stopped is None:  # stopped just as the burst ended
                record.stopped = "interrupted"
            return record
        finally:
            await http.close()


def due_times(waves: Sequence[Wave]) -> tuple[float, ...]:
    """Each job's intended /run time (s from the rep's start): a wave's jobs share its time."""
    return tuple(wave.at_s for wave in waves for _ in range(wave.jobs))


def _stopped(record: BurstRecord, rep: int) -> JobbenchError | None:
    """Why a burst ended early, as the error the loop raises once the rep is saved."""
    if record.stopped is None:
        return None
    pending = sum(1 for job in record.jobs if job.outcome == "accepted" and job.done_ns is None)
    cancelled = record.counts["cancelled"]
    if record.stopped == "interrupted":
        return Interrupted(
            f"interrupted in rep {rep}: cancelled {cancelled} of {pending} unfinished jobs"
        )
    if record.stopped == "timeout":
        return RunFailed(
            f"rep {rep} did not finish in time: {pending} jobs unfinished ({cancelled} cancelled)"
        )
    return record.error or RunFailed(f"rep {rep} failed")


async def _preflight(endpoint: Endpoint) -> None:
    http = LiveHttp(endpoint, max_connections=4)
    try:
        await http.preflight()
    finally:
        await http.close()
