"""One scenario end to end: queue up, workers polling, reps of atomic bursts, events, metrics."""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from jobbench.clients.bench_client import BenchClient, split_server
from jobbench.core.config import Scenario
from jobbench.errors import RunFailed
from jobbench.measure import metrics
from jobbench.procs.cpu_plan import CpuPlan, pin, plan_cpus
from jobbench.procs.embedded_queue import EmbeddedQueue, start_embedded_queue
from jobbench.procs.signals import interrupts_deferred
from jobbench.procs.spawn import WorkerProcess, stop_all
from jobbench.workers.kinds import probe_sdk, worker_process_spec
from jobbench.workers.spec import WorkerSpec

POLL_S = 0.05
READY_TIMEOUT_S = 90.0  # eight real SDK workers importing runpod on two cores take a while


class Progress(Protocol):
    def message(self, text: str) -> None: ...
    def rep_started(self, scenario: str, rep: int, reps: int, burst: int) -> None: ...
    def rep_progress(self, done: int, total: int) -> None: ...
    def rep_finished(self, scenario: str, rep: int, figures: dict[str, Any]) -> None: ...


@dataclass
class RepOutcome:
    figures: dict[str, Any]
    events: list[dict[str, Any]]


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

    @property
    def title(self) -> str:
        return f"{self.label} {self.scenario.name}" if self.label else self.scenario.name

    @property
    def worker_ids(self) -> list[str]:
        return [w.worker_id for w in self.workers]

    def start(self) -> None:
        spec = self.scenario.worker
        if self.sdk is None:  # run_plans' preflight passes it in
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
        self.progress.rep_started(self.title, rep, reps, s.burst)
        self.client.burst(s.burst, s.job_inputs())
        deadline = time.monotonic() + rep_timeout_s(s)
        while True:
            time.sleep(POLL_S)
            self.check_workers()
            counts = self.client.counts()
            done = counts["submitted"] - counts["in_queue"] - counts["in_progress"]
            self.progress.rep_progress(done, s.burst)
            if done >= s.burst:
                break
            if time.monotonic() > deadline:
                raise RunFailed(
                    f"rep {rep} of {s.name} did not finish within "
                    f"{rep_timeout_s(s):.0f} s: {s.burst - done} jobs unfinished"
                )
        events, _ = self.client.events(cursor)
        check_conservation(self.client.state(), events, s.burst)
        figures = metrics.rep_metrics(
            events,
            workers=s.workers,
            slots=s.slots,
            burst=s.burst,
            job_seconds=s.job_seconds,
            wake_latency_s=s.latency.wake.mean,
            worker_ids=self.worker_ids,
            keep_samples=True,
        )
        self.progress.rep_finished(self.title, rep, figures)
        return RepOutcome(figures, events)

    def stop(self) -> None:
        """Workers, client, then queue, each even if one before failed; a Ctrl-C or SIGTERM
        meanwhile waits for the end (the queue runs in its own session: nothing else stops it)."""
        with interrupts_deferred(), contextlib.ExitStack() as later:
            if self.queue is not None:
                later.callback(self.queue.stop)
            if self.client is not None:
                later.callback(self.client.close)
            stop_all(self.workers)


def stop_sessions(sessions: list[ScenarioSession]) -> None:
    """Stop every session, even if one fails; a Ctrl-C meanwhile waits until the last is done."""
    with interrupts_deferred(), contextlib.ExitStack() as later:
        for session in reversed(sessions):  # callbacks run last in, first out
            later.callback(session.stop)


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


def check_conservation(state: dict[str, Any], events: list[dict[str, Any]], burst: int) -> None:
    """No job lost or counted twice: the server's books and the event log must both agree."""
    counts = state["counts"]
    if state.get("conservation"):
        raise RunFailed(f"the queue's books do not balance: {state['conservation']}")
    terminal = sum(counts[k] for k in ("completed", "failed", "cancelled", "timed_out"))
    if (
        counts["submitted"] != burst
        or terminal + counts["in_queue"] + counts["in_progress"] != (counts["submitted"])
    ):
        raise RunFailed(f"jobs lost: submitted {counts['submitted']} of {burst}, counts {counts}")
    done = Counter(e["job"] for e in events if e["ev"] == "done")
    doubled = [job for job, n in done.items() if n > 1]
    if doubled:
        raise RunFailed(f"jobs counted twice: {doubled[:5]} ({len(doubled)} in all)")
    if len(done) != terminal:
        raise RunFailed(f"event log has {len(done)} finished jobs, the queue counts {terminal}")


def make_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="jobbench-"))
