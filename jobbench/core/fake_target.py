"""One scenario end to end: queue up, workers polling, reps of atomic bursts, events, metrics."""

from __future__ import annotations

import contextlib
import math
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobbench.clients.bench_client import BenchClient, split_server
from jobbench.core.config import Scenario
from jobbench.core.target import Progress, RepOutcome
from jobbench.errors import RunFailed
from jobbench.measure import metrics
from jobbench.measure.conservation import check_conservation
from jobbench.procs.cpu_plan import CpuPlan, pin, plan_cpus
from jobbench.procs.embedded_queue import EmbeddedQueue, start_embedded_queue
from jobbench.procs.signals import interrupts_deferred
from jobbench.procs.spawn import WorkerProcess, stop_all
from jobbench.results.model import ScenarioResult
from jobbench.results.model import Target as TargetBlock
from jobbench.workers.kinds import describe_sdk, probe_sdk, worker_process_spec
from jobbench.workers.spec import WorkerSpec

POLL_S = 0.05
READY_TIMEOUT_S = 90.0  # eight real SDK workers importing runpod on two cores take a while


def wait_until_polling(
    client: BenchClient,
    workers: list[WorkerProcess],
    logs: Path,
    timeout_s: float = READY_TIMEOUT_S,
) -> None:
    """Until every worker has a take waiting at the queue; a worker that exits raises."""
    deadline = time.monotonic() + timeout_s
    while True:
        for worker in workers:
            worker.check_alive("exited before it started polling")
        seen = client.workers()
        missing = [w.worker_id for w in workers if seen.get(w.worker_id, {}).get("polling", 0) < 1]
        if not missing:
            return
        if time.monotonic() > deadline:
            raise RunFailed(
                f"workers {', '.join(missing)} did not poll the queue within "
                f"{timeout_s:.0f} s; see their logs in {logs}"
            )
        time.sleep(POLL_S)


def rep_timeout_s(s: Scenario) -> float:
    """Generous bound from the slowest modelled policy (a 1 s re-check per batch), never tight."""
    batches = math.ceil(s.burst / (s.workers * s.slots))
    cycle = s.latency.take.mean + max(1.0, s.job_seconds) + 0.5
    return 30.0 + 3.0 * (s.latency.wake.mean + batches * cycle)


@dataclass
class ScenarioSession:
    """Queue and workers for one scenario, started once and reused across reps."""

    scenario: Scenario
    workdir: Path
    progress: Progress
    label: str = ""
    server_url: str | None = None
    api_key: str | None = None
    seed: int | None = None
    pin_queue: bool = True
    cpu_plan: CpuPlan | None = None
    sdk: dict[str, Any] | None = None
    queue: EmbeddedQueue | None = None
    client: BenchClient | None = None
    endpoint_url: str = ""
    workers: list[WorkerProcess] = field(default_factory=list)
    logs_kept: bool = False  # a failed scenario's logs stay for the error message to point at

    @property
    def title(self) -> str:
        return f"{self.label} {self.scenario.name}" if self.label else self.scenario.name

    @property
    def worker_ids(self) -> list[str]:
        return [w.worker_id for w in self.workers]

    def entry(self) -> ScenarioResult:
        return scenario_entry(self.scenario, self.sdk)

    def environment(self) -> dict[str, Any]:
        return {
            "runpod": describe_sdk(self.sdk),
            "cpu_plan": self.cpu_plan and self.cpu_plan.to_json(),
        }

    def start(self) -> None:
        self.progress.message(
            f"{self.title}: starting {self.scenario.workers} x {self.scenario.worker.describe()}"
        )
        spec = self.scenario.worker
        if self.sdk is None:  # the target's preflight passes it in
            self.sdk = probe_sdk(spec)
        if self.server_url is None:
            self.queue = start_embedded_queue(self.workdir / "fake_queue.log", seed=self.seed)
            base, self.endpoint_url = self.queue.base_url, self.queue.endpoint_url
            self.cpu_plan = plan_cpus() if self.pin_queue else None
            if self.cpu_plan is not None:
                pin(self.queue.process.pid, self.cpu_plan.queue)
        else:
            base, self.endpoint_url = split_server(self.server_url)
        self.client = BenchClient(base, self.api_key)
        self.client.set_latency(self.scenario.latency.to_json())
        self._spawn_workers()
        self.wait_all_polling()

    def _spawn_workers(self) -> None:
        tag = self.scenario.name.replace(" ", "-")[:24]
        spawn_workers(
            self.workers,
            self.scenario.worker,
            [f"{tag}-w{index}" for index in range(self.scenario.workers)],
            self.endpoint_url,
            self.scenario.slots,
            self.api_key,
            self.workdir,
            cpus=self.cpu_plan.workers if self.cpu_plan is not None else None,
        )

    def check_workers(self) -> None:
        for worker in self.workers:
            worker.check_alive()
        if self.queue is not None and not self.queue.alive():
            raise RunFailed("the embedded fake queue died; see its log in " + str(self.workdir))

    def wait_all_polling(self) -> None:
        """A rep starts only when every worker has a take waiting at the queue."""
        assert self.client is not None
        wait_until_polling(self.client, self.workers, self.workdir)

    def run_rep(self, rep: int, reps: int) -> RepOutcome:
        assert self.client is not None
        s = self.scenario
        self.wait_all_polling()
        cursor = self.client.reset()
        self.progress.rep_started(self.title, rep, reps, s.load.jobs)
        self._submit_and_wait(rep)
        events, _ = self.client.events(cursor)
        check_conservation(self.client.state(), events, s.load.jobs)
        measure = metrics.rep_measure(
            events,
            workers=s.workers,
            slots=s.slots,
            burst=s.load.jobs,
            job_seconds=s.job_seconds,
            wake_latency_s=s.latency.wake.mean,
            worker_ids=self.worker_ids,
        )
        self.progress.rep_finished(self.title, rep, measure.figures)
        return RepOutcome(measure, events)

    def _submit_and_wait(self, rep: int) -> None:
        """Submit the load's waves on time, until every job is terminal or the rep times out."""
        assert self.client is not None
        s, total = self.scenario, self.scenario.load.jobs
        waves = list(s.load.waves())
        inputs = s.job_inputs()
        began = time.monotonic()
        timeout_s = rep_timeout_s(s) + waves[-1].at_s
        while True:
            while waves and time.monotonic() - began >= waves[0].at_s:
                self.client.burst(waves.pop(0).jobs, inputs)
            time.sleep(POLL_S)
            self.check_workers()
            counts = self.client.counts()
            done = counts["submitted"] - counts["in_queue"] - counts["in_progress"]
            self.progress.rep_progress(done, total)
            if done >= total:
                return
            if time.monotonic() - began > timeout_s:
                raise RunFailed(
                    f"rep {rep} of {s.name} did not finish within "
                    f"{timeout_s:.0f} s: {total - done} jobs unfinished"
                )

    def keep_logs(self) -> None:
        self.logs_kept = True

    def stop(self) -> None:
        """Workers, client, then queue, each even if one before failed, then the logs unless
        kept; a Ctrl-C or SIGTERM meanwhile waits for the end (the queue runs in its own
        session: nothing else stops it)."""
        with interrupts_deferred(), contextlib.ExitStack() as later:
            if not self.logs_kept:
                later.callback(shutil.rmtree, self.workdir, ignore_errors=True)
            if self.queue is not None:
                later.callback(self.queue.stop)
            if self.client is not None:
                later.callback(self.client.close)
            stop_all(self.workers)


def spawn_workers(
    into: list[WorkerProcess],
    spec: WorkerSpec,
    worker_ids: list[str],
    endpoint_url: str,
    slots: int,
    api_key: str | None,
    workdir: Path,
    cpus: frozenset[int] | None = None,
) -> None:
    """Start one worker per id, each added to the caller's `into` before it starts, so the
    caller's cleanup stops every process started even if a later start fails or is interrupted."""
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    for worker_id in worker_ids:
        argv, env = worker_process_spec(spec, worker_id, endpoint_url, slots, api_key, home)
        worker = WorkerProcess(worker_id, argv, env, workdir / f"{worker_id}.log")
        into.append(worker)
        worker.start()
        if cpus is not None and worker.popen is not None:
            pin(worker.popen.pid, cpus)  # what it forks later inherits this


def scenario_entry(s: Scenario, sdk: dict[str, Any] | None) -> ScenarioResult:
    """A fake-queue scenario's result entry before any rep."""
    ideal = metrics.ideal_time(s.burst, s.workers, s.slots, s.job_seconds, s.latency.wake.mean)
    return ScenarioResult.model_validate(
        {
            "name": s.name,
            "params": s.params(),
            "ideal_s": ideal,
            "worker": s.worker.describe(),
            "sdk": sdk,
            "gate_metric": s.metric,
            "reps": [],
            "summary": {},
        }
    )


def make_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="jobbench-"))


@dataclass
class FakeQueue:
    """The fake queue Target: the embedded one (started per scenario) or `server_url`'s, with a
    fleet of real worker processes per scenario."""

    server_url: str | None = None
    api_key: str | None = None
    seed: int | None = None
    pin_queue: bool = True
    sdks: dict[WorkerSpec, dict[str, Any]] = field(default_factory=dict)

    def describe(self) -> TargetBlock:
        return TargetBlock(kind="fake", endpoint=self.server_url or "embedded")

    def preflight(self, scenarios: Sequence[Scenario]) -> None:
        """Check every runpod SDK the workers will import before anything starts or is
        written: a usage error must leave no processes and no half-written result."""
        for scenario in scenarios:
            spec = scenario.worker
            if spec not in self.sdks and (info := probe_sdk(spec)) is not None:
                self.sdks[spec] = info  # one probe per variant, not per scenario

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        """One line: target and model, workers, burst, reps (docs/metrics.md, "The run table")."""
        s = scenarios[0]
        where = f"fake queue at {self.server_url}" if self.server_url else "embedded fake queue"
        more = f" (+{len(scenarios) - 1} more scenarios)" if len(scenarios) > 1 else ""
        return (
            f"{where}, take {s.latency.take.describe()} s, wake {s.latency.wake.describe()} s; "
            f"{s.workers} x {s.worker.describe()} x {s.slots} slots; {s.burst} x "
            f"{s.job_seconds:g} s jobs; {reps} reps{more}"
        )

    def session(self, scenario: Scenario, label: str, progress: Progress) -> ScenarioSession:
        return ScenarioSession(
            scenario,
            make_workdir(),
            progress,
            label=label,
            server_url=self.server_url,
            api_key=self.api_key,
            seed=self.seed,
            pin_queue=self.pin_queue,
            sdk=self.sdks.get(scenario.worker),
        )
