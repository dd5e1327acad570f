"""One fake-queue rep from its first submission to its end: the load's waves submitted on time, the
workers' faults (--worker-fault) applied on time, the watchdog (core/real_workers/watchdog.py)
looking on, until every job is terminal, or every one left is lost, or the rep has to stop: a worker
died or hung, or the rep ran past its timeout. Every way out returns a RepEnd: the rep is measured
and kept either way, and its `error` (if any) ends the run once the rep is saved."""

from __future__ import annotations

import math
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobbench.clients.bench_client import BenchClient
from jobbench.core.real_workers.fleet_drive import FleetDrive
from jobbench.core.real_workers.refresh_drive import Refreshes
from jobbench.core.real_workers.stuck import StuckWatch
from jobbench.core.real_workers.submit_pacer import SubmitPacer
from jobbench.core.real_workers.watchdog import Watchdog, lost_jobs, maybe_lost
from jobbench.core.run.target_seam import Progress
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.faults import WorkerFault
from jobbench.core.scenario.watch_bounds import watch_bounds
from jobbench.errors import RunFailed, WorkerError
from jobbench.measure.disk_writes import writes_over
from jobbench.procs import harness_cpu, lane_stop, machine
from jobbench.procs.worker_handle import Worker

POLL_S = 0.05
WATCH_S = 0.5  # the watchdog's look at the workers: a stall is seen within half a second
REFRESH_S = 10.0  # what a worker's refresh adds to the rep's timeout: a stop and a start-up


def rep_timeout_s(s: Scenario) -> float:
    """Generous bound from the slowest modelled policy (a 1 s re-check per batch), never tight;
    an autoscaled fleet's rep also waits out its workers' idle timeout and their stops."""
    batches = math.ceil(s.burst / (s.workers * s.slots))
    cycle = s.latency.take.mean + max(1.0, s.job_seconds) + 0.5
    bound = 30.0 + 3.0 * (s.latency.wake.mean + batches * cycle)
    if s.fleet is not None:  # a fleet may start empty and grow one worker at a time
        bound += 3.0 * (s.fleet.idle_timeout_s + s.fleet.cold_start.mean + s.fleet.period_s)
        bound += s.fleet.max_workers * s.fleet.period_s + 30.0
    return bound


@dataclass
class RepEnd:
    """How the rep ended: `partial` names why it was cut short (None: it ran to its end)."""

    lost: list[str] = field(default_factory=list)
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    worker_faults: Counter[str] = field(default_factory=Counter)  # "worker:kill": n
    partial: str | None = None
    error: RunFailed | None = None
    machine: dict[str, Any] | None = None  # the machine's load over the rep (procs/machine.py)
    harness: dict[str, Any] | None = None  # the harness's own CPU (procs/harness_cpu.py)
    # An arrival profile's pacing (core/real_workers/submit_pacer.py)
    arrivals: dict[str, Any] | None = None
    # On a cluster, each worker's node, a fleet's scaled-up workers included (none: here).
    worker_nodes: dict[str, str] | None = None
    # Each worker's bytes written to storage over the rep (measure/disk_writes.py; None: none
    # could be read).
    worker_write_bytes: dict[str, int] | None = None


@dataclass
class _FaultClock:
    """The scenario's worker faults, applied at their times; a paused worker is resumed at its
    time and on every way out (a stopped process would make the clean-up wait)."""

    faults: tuple[WorkerFault, ...]
    workers: list[Worker]
    applied: Counter[str] = field(default_factory=Counter)
    killed: set[str] = field(default_factory=set)
    # Each paused worker's id -> when it resumes, in seconds into the rep.
    _paused: dict[str, float] = field(default_factory=dict)
    _pending: list[WorkerFault] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._pending = sorted(self.faults, key=lambda f: f.at_s)

    @property
    def paused(self) -> set[str]:
        return set(self._paused)

    def tick(self, elapsed: float) -> list[str]:
        lines = []
        while self._pending and self._pending[0].at_s <= elapsed:
            fault = self._pending.pop(0)
            worker = self.workers[fault.worker]
            if fault.action in ("kill", "term"):  # the fault ends it, so its exit is no death
                worker.signal(signal.SIGKILL if fault.action == "kill" else signal.SIGTERM)
                self.killed.add(worker.worker_id)
            else:
                worker.signal(signal.SIGSTOP)
                self._paused[worker.worker_id] = fault.at_s + fault.for_s
            self.applied[f"worker:{fault.action}"] += 1
            lines.append(f"worker fault {fault.describe()}: applied at {elapsed:.1f} s")
        for worker_id, until in list(self._paused.items()):
            if elapsed >= until:
                self._resume(worker_id)
        return lines

    def resume_all(self) -> None:
        for worker_id in list(self._paused):
            self._resume(worker_id)

    def _resume(self, worker_id: str) -> None:
        del self._paused[worker_id]
        worker = next(w for w in self.workers if w.worker_id == worker_id)
        worker.signal(signal.SIGCONT)


@dataclass
class RepDrive:
    scenario: Scenario
    client: BenchClient
    workers: list[Worker]
    progress: Progress
    rep: int
    check_queue: Callable[[], None]  # raises RunFailed when the embedded queue died
    logs: str = ""
    queue_pid: int | None = None  # the embedded queue's (None: --server's, not ours to read)
    fleet: FleetDrive | None = None  # an autoscaled fleet's orders, executed (None: fixed)
    # refresh_worker carried out (core/real_workers/refresh_drive.py)
    refreshes: Refreshes | None = None
    # Each running worker's process group's CPU seconds, wherever it runs (its pool's).
    cpu_seconds: Callable[[list[Worker]], dict[str, float]] = lambda _workers: {}
    # Each running worker's process group's bytes written to storage, where they can be read.
    write_bytes: Callable[[list[Worker]], dict[str, int]] = lambda _workers: {}
    _reported: set[str] = field(default_factory=set)  # ended fleet workers told to the queue

    def run(self) -> RepEnd:
        s = self.scenario
        waves = list(s.load.waves())
        inputs = s.job_inputs()
        # A profile's waves go out from a thread of their own, each on time whatever this loop
        # is doing (the open model); the burst, at once from here. The pacer reads the queue's
        # clock first, before the rep's time starts.
        pacer = None if s.is_burst else SubmitPacer(self.client, waves, inputs)
        began = time.monotonic()
        load_at_start = machine.sample()
        cpu_at_start = harness_cpu.sample(self.queue_pid, self._worker_cpu())
        writes_at_start = self.write_bytes(self._all_workers())
        timeout_s = rep_timeout_s(s) + waves[-1].at_s
        faults = _FaultClock(s.worker_faults, self.workers)
        dog = Watchdog(watch_bounds(s), [w.worker_id for w in self.workers], began)
        stuck = StuckWatch(s.slots, dog.worker_ids)
        end = RepEnd()
        restarts_before = self._restarts()
        next_watch = began + WATCH_S
        if pacer is not None:
            waves = []
            pacer.begin(began)
        try:
            while True:
                now = time.monotonic()
                while waves and now - began >= waves[0].at_s:
                    self.client.burst(waves.pop(0).jobs, inputs)
                if pacer is not None and pacer.error is not None:
                    raise RunFailed(f"submitting {s.load_spec}: {pacer.error}")
                self._say(faults.tick(now - began))
                if self.fleet is not None and self._fleet_tick(began, end):
                    break
                lane_stop.pause(POLL_S)
                self.check_queue()
                counts = self.client.counts()
                done = counts["submitted"] - counts["in_queue"] - counts["in_progress"]
                self.progress.rep_progress(done, s.load.jobs)
                if done >= s.load.jobs and (self.fleet is None or self.fleet.at_rest):
                    break
                now = time.monotonic()
                if now >= next_watch:
                    next_watch = now + WATCH_S
                    all_sent = not waves and (pacer is None or pacer.all_sent())
                    if self._watch(dog, stuck, faults, counts, end, now, all_sent=all_sent):
                        break
                # Each refresh carried out stops a worker and starts one: it gets longer.
                limit_s = timeout_s + REFRESH_S * (self._restarts() - restarts_before)
                if now - began > limit_s:
                    end.partial = "timeout"
                    causes = "; ".join(stuck.causes(s.job_seconds, dog.stalled))
                    end.error = RunFailed(
                        f"rep {self.rep} of {s.name} did not finish within "
                        f"{limit_s:.0f} s: {s.load.jobs - done} jobs unfinished; likely "
                        f"cause: {causes}"
                    )
                    break
        finally:
            faults.resume_all()
            if pacer is not None:
                pacer.stop()
                end.arrivals = pacer.figures(str(s.load_spec))
        # One more look: a stalled worker may have resumed just before the rep ended.
        if dog.stalled and end.partial is None:
            dog.observe(time.monotonic(), self.client.workers(), 0, faults.paused)
        end.anomalies = dog.anomalies(time.monotonic())
        if self.fleet is not None:
            end.anomalies += self.fleet.anomalies
        end.worker_faults = faults.applied
        end.machine = machine.machine_load(load_at_start, machine.sample())
        end.harness = harness_cpu.harness_cpu(
            cpu_at_start,
            harness_cpu.sample(self.queue_pid, self._worker_cpu()),
            (end.machine or {}).get("cpu_busy"),
            os.cpu_count(),
            self._nodes(),
        )
        end.worker_nodes = self._nodes() or None
        end.worker_write_bytes = writes_over(writes_at_start, self.write_bytes(self._all_workers()))
        for busy in harness_cpu.saturation(end.harness):
            end.anomalies.append(busy)
            said = "the harness was saturated" if busy["kind"] == "saturated" else "worker CPU"
            self._say([f"{said}: {busy['what']}"])
        return end

    def _all_workers(self) -> list[Worker]:
        return [*self.workers, *(self.fleet.processes if self.fleet is not None else [])]

    def _worker_cpu(self) -> dict[str, float]:
        """Each worker process group's CPU seconds, the fleet's included (one that has exited
        is left out: its CPU since the last look is not read)."""
        return self.cpu_seconds(self._all_workers())

    def _nodes(self) -> dict[str, str]:
        """Each worker's node, on a cluster (none here: the block then has no per-node sums)."""
        return {w.worker_id: w.node for w in self._all_workers() if w.node is not None}

    def _fleet_tick(self, began: float, end: RepEnd) -> bool:
        """The fleet's orders executed; True when a fleet worker died (the rep ends there)."""
        assert self.fleet is not None
        try:
            self._say(self.fleet.tick(began))
        except RunFailed as exc:
            end.partial, end.error = "worker died", RunFailed(f"{exc}{self.logs}")
            return True
        return False

    def _watched(self) -> list[str]:
        """The workers the watchdog looks at: the fixed fleet (or the active workers) and every
        fleet worker polling (not booting, not stopping)."""
        ids = [w.worker_id for w in self.workers]
        if self.fleet is not None:
            ids += self.fleet.polling()
        return ids

    def _watch(
        self,
        dog: Watchdog,
        stuck: StuckWatch,
        faults: _FaultClock,
        counts: dict[str, int],
        end: RepEnd,
        now: float,
        all_sent: bool,
    ) -> bool:
        """One look; True when the rep must end now: its reason set on `end`, or every job
        left is lost (once every wave is in)."""
        gone = self._gone(faults.killed, end)
        if end.partial is not None:
            self._name_lost_on_nodes(gone, end)
            return True
        if self.fleet is not None:
            gone |= self.fleet.stopped
        bounds = dog.bounds
        view = self.client.workers(overdue_s=bounds.overdue_s)
        unwatched = self._refresh(view, now, end)
        if end.partial is not None:
            return True
        dog.worker_ids = [w for w in self._watched() if w not in unwatched]
        self._say(dog.observe(now, view, counts["in_queue"], faults.paused, gone))
        stuck.worker_ids = dog.worker_ids
        stuck.observe(view, counts["in_queue"])
        hung = dog.hung(now, faults.paused | unwatched)
        if hung is not None:
            end.partial = "stalled"
            end.error = RunFailed(
                f"worker {hung.worker}{self._where(hung.worker)} made no take and no job-done "
                f"for {now - hung.began:.0f} s "
                f"while holding {hung.held} jobs: it hung or was stopped (the rep's figures so far "
                f"are kept, marked partial){self.logs}"
            )
            return True
        left = counts["in_progress"]
        stalled = dog.stalled
        if all_sent and counts["in_queue"] == 0 and 0 < left <= maybe_lost(view, gone, stalled):
            view = self.client.workers(overdue_s=bounds.overdue_s, ids=True)
            named = lost_jobs(view, gone, stalled)
            if len(named) >= left:
                end.lost = sorted(named)
                return True
        return False

    def _restarts(self) -> int:
        return self.refreshes.restarts if self.refreshes is not None else 0

    def _refresh(self, view: dict[str, Any], now: float, end: RepEnd) -> set[str]:
        """Refreshes carried out as far as they can be (core/real_workers/refresh_drive.py); returns
        the workers not to watch meanwhile. A fresh worker that never polls ends the rep."""
        if self.refreshes is None:
            return set()
        fleet_stops = self.fleet.stopping if self.fleet is not None else set()
        try:
            self._say(self.refreshes.look(view, now, fleet_stops))
        except RunFailed as exc:
            end.partial, end.error = "stalled", RunFailed(f"{exc}{self.logs}")
        return self.refreshes.unwatched

    def _gone(self, killed: set[str], end: RepEnd) -> set[str]:
        """Workers whose process ended: those a fault killed or a refresh stopped (a fresh one
        follows), or the first that died, which ends the rep (`end.partial`)."""
        gone = set()
        for worker in self.workers:
            code = worker.returncode()
            if code is None:
                continue
            if self.refreshes is not None and self.refreshes.expects_exit(worker.worker_id, code):
                gone.add(worker.worker_id)
                continue
            if self.fleet is not None and worker.worker_id not in self._reported:
                self._reported.add(worker.worker_id)  # the platform no longer counts it
                self.client.fleet_report(worker.worker_id, "exited", worker.returncode())
            gone.add(worker.worker_id)
            if worker.worker_id not in killed and end.partial is None:
                self._say([
                    f"worker {worker.worker_id}{self._where(worker.worker_id)} died "
                    f"(exit code {worker.returncode()})"
                ])  # fmt: skip
                try:
                    worker.check_alive()
                except WorkerError as exc:
                    end.partial, end.error = "worker died", RunFailed(f"{exc}{self.logs}")
        return gone

    def _where(self, worker_id: str) -> str:
        """ " on node ID (IP)" for a worker on a cluster; nothing for one here."""
        node = self._nodes().get(worker_id)
        return f" on {node}" if node is not None else ""

    def _name_lost_on_nodes(self, gone: set[str], end: RepEnd) -> None:
        """The jobs a cluster's dead workers held (a node lost takes them with it) are named
        lost in the rep, which is saved partial; the queue redelivers none of them (RunPod's
        does not either: a job taken is the worker's until it reports or times out)."""
        on_nodes = {w for w in gone if w in self._nodes()}
        if not on_nodes:
            return
        view = self.client.workers(overdue_s=watch_bounds(self.scenario).overdue_s, ids=True)
        held = {w: seen for w, seen in view.items() if w in on_nodes}
        end.lost = sorted(lost_jobs(held, on_nodes))

    def _say(self, lines: list[str]) -> None:
        for line in lines:
            self.progress.message(f"{self.scenario.name} rep {self.rep}: {line}")
