"""One scenario end to end: queue up, workers polling, reps of atomic bursts, events, metrics."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobbench.clients.bench_client import BenchClient, split_server
from jobbench.core.real_workers.fleet_drive import FleetDrive
from jobbench.core.real_workers.local_pool import LocalPools
from jobbench.core.real_workers.refresh_drive import Refreshes
from jobbench.core.real_workers.rep_drive import RepDrive, RepEnd
from jobbench.core.run.queue_figures import measure_rep, scenario_entry
from jobbench.core.run.target_seam import Progress, RepOutcome
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.watch_bounds import watch_bounds
from jobbench.core.sdk.env import with_sdk_env
from jobbench.core.sim.predict import predict
from jobbench.errors import RunFailed
from jobbench.measure.concurrency import below_slots_text
from jobbench.measure.conservation import check_conservation
from jobbench.measure.disk_writes import DISK_KIND, disk_anomalies
from jobbench.procs import lane_stop
from jobbench.procs.cpu_plan import CpuPlan, pin, plan_cpus
from jobbench.procs.embedded_queue import EmbeddedQueue, start_embedded_queue
from jobbench.procs.signals import interrupts_deferred
from jobbench.procs.worker_handle import PoolFactory, Worker, WorkerPool
from jobbench.results.model import ScenarioResult, TargetBlock
from jobbench.workers.kinds import describe_sdk, probe_sdk, worker_process_spec
from jobbench.workers.spec import WorkerSpec

POLL_S = 0.05
READY_TIMEOUT_S = 90.0  # eight real SDK workers importing runpod on two cores take a while


def wait_until_polling(
    client: BenchClient,
    workers: list[Worker],
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
        lane_stop.pause(POLL_S)


@dataclass(frozen=True)
class ReadyWorker:
    """A worker spec as its processes run it (a runpod SDK checkout on its own environment's
    python) and the SDK they import (None: not a runpod worker)."""

    spec: WorkerSpec
    sdk: dict[str, Any] | None


def ready_worker(spec: WorkerSpec, say: Callable[[str], None]) -> ReadyWorker:
    """The step every fleet takes before any worker starts: an SDK checkout gets the environment
    of its own declared dependencies (built once per set, core/sdk/env.py), then the SDK is
    imported there once, so one that cannot be is a usage error naming the missing module."""
    ready = with_sdk_env(spec, say)
    return ReadyWorker(ready, probe_sdk(ready))


@dataclass
class FakeSession:
    """The fake target's session: the queue and the workers of one scenario, started once and
    reused across reps (jobbench locust also starts one alone)."""

    scenario: Scenario
    workdir: Path
    progress: Progress
    label: str = ""
    server_url: str | None = None
    api_key: str | None = None
    seed: int | None = None
    pin_queue: bool = True
    cpu_plan: CpuPlan | None = None
    ready: ReadyWorker | None = None  # the target's preflight passes it in
    # Where the workers run (procs/worker_handle.py): this machine, or a Ray cluster's nodes.
    pools: PoolFactory = field(default_factory=LocalPools)
    queue_host: str = "127.0.0.1"  # the embedded queue's bind address: one the workers reach
    # The row's lane is its name within one run; runs side by side (a trend's pairs on a
    # cluster) each add a scope of their own, so their rows never share a placement group.
    lane_scope: str = ""
    queue: EmbeddedQueue | None = None
    pool: WorkerPool | None = None
    client: BenchClient | None = None
    endpoint_url: str = ""
    workers: list[Worker] = field(default_factory=list)
    scaled: list[Worker] = field(default_factory=list)  # started by the fleet this rep
    # refresh_worker carried out (core/real_workers/refresh_drive.py)
    refreshes: Refreshes | None = None
    logs_kept: bool = False  # a failed scenario's logs stay for the error message to point at
    faults_in_force: tuple[str, ...] = ()  # the queue's rules: the scenario's or the server's
    _faults_before: list[str] | None = None  # another server's own rules, put back at the end
    _polled_before: bool = False  # True once every worker has polled (start waits for it)
    _fresh: set[str] = field(default_factory=set)  # restarted since the last wait: slow to poll

    @property
    def sdk(self) -> dict[str, Any] | None:
        return self.ready.sdk if self.ready is not None else None

    @property
    def title(self) -> str:
        return f"{self.label} {self.scenario.name}" if self.label else self.scenario.name

    @property
    def worker_ids(self) -> list[str]:
        return [w.worker_id for w in self.workers]

    @property
    def logs_folder(self) -> Path:
        return self.workdir

    @property
    def faulted(self) -> bool:
        """Faults asked for: lost and redelivered jobs are then the measurement, not a failure."""
        return bool(self.faults_in_force or self.scenario.worker_faults)

    def entry(self) -> ScenarioResult:
        entry = scenario_entry(self.scenario, self.sdk)
        if self.faults_in_force:
            entry.params.faults = list(self.faults_in_force)
        else:  # the simulator models no fault rule, so only a run without them is predicted
            # Before the first rep, once: the workers poll meanwhile, and a scenario's
            # simulation takes milliseconds to seconds (core/sim/predict.py's MAX_JOBS bounds it).
            predicted = predict(self.scenario, self.seed, self.progress.message)
            if predicted is not None:
                entry.predicted = predicted
        return entry

    def environment(self) -> dict[str, Any]:
        found = {
            "runpod": describe_sdk(self.sdk),
            "cpu_plan": self.cpu_plan and self.cpu_plan.to_json(),
        }
        cluster = self.pool.describe() if self.pool is not None else None
        return found if cluster is None else {**found, "cluster": cluster}

    def start(self) -> None:
        self.progress.message(
            f"{self.title}: starting {self.scenario.workers} x {self.scenario.worker.describe()}"
        )
        if self.ready is None:  # jobbench locust starts a session with no target's preflight
            self.ready = ready_worker(self.scenario.worker, self.progress.message)
        if self.server_url is None:
            self.queue = start_embedded_queue(
                self.workdir / "fake_queue.log", seed=self.seed, api_key=self.api_key,
                host=self.queue_host,
            )  # fmt: skip
            base, self.endpoint_url = self.queue.base_url, self.queue.endpoint_url
            self.cpu_plan = plan_cpus() if self.pin_queue else None
            if self.cpu_plan is not None:
                pin(self.queue.process.pid, self.cpu_plan.queue)
        else:
            base, self.endpoint_url = split_server(self.server_url)
        self.client = BenchClient(base, self.api_key)
        self.client.set_latency(self.scenario.latency.to_json(every=True))
        self._set_faults(self.client)
        if (fleet := self.scenario.fleet) is not None:
            self.client.set_fleet(fleet.to_json(), fleet.id_prefix, self.seed)
        cpus = self.cpu_plan.workers if self.cpu_plan is not None else None
        self.pool = self.pools.open(
            self.workdir, self.scenario.max_workers, cpus, lane=self.lane_scope + self.scenario.name
        )
        self.refreshes = Refreshes(self.client, [self.workers, self.scaled], self._spawn_workers)
        self._spawn_workers(self.workers, self._worker_ids())
        self.wait_all_polling()

    def _set_faults(self, client: BenchClient) -> None:
        if self.scenario.faults:
            self._faults_before = client.faults()
            client.set_faults(list(self.scenario.faults))
        self.faults_in_force = tuple(client.faults())

    def _worker_ids(self) -> list[str]:
        return self.scenario.worker_ids()

    def _spawn_workers(self, into: list[Worker], worker_ids: list[str]) -> None:
        assert self.ready is not None and self.pool is not None
        spec, endpoint, slots, key = (
            self.ready.spec, self.endpoint_url, self.scenario.slots, self.api_key
        )  # fmt: skip

        def make_spec(worker_id: str, folder: Path) -> tuple[list[str], dict[str, str]]:
            return worker_process_spec(spec, worker_id, endpoint, slots, key, folder)

        self.pool.spawn(into, worker_ids, make_spec)

    def check_workers(self) -> None:
        """Every worker alive (a refresh carried out first), and the queue."""
        if self.refreshes is not None and self.client is not None:
            for line in self.refreshes.look(self.client.workers(), time.monotonic()):
                self.progress.message(f"{self.title}: {line}")
            self.refreshes.check_alive(self.workers)
        else:
            for worker in self.workers:
                worker.check_alive()
        self.check_queue()

    def check_queue(self) -> None:
        if self.queue is not None and not self.queue.alive():
            raise RunFailed("the embedded fake queue died; see its log in " + str(self.workdir))

    def wait_all_polling(self) -> None:
        """A rep starts only when every worker has a take waiting at the queue. Workers that
        polled before (the last rep ran) are waited for up to the watchdog's give-up bound, not
        the start-up's 90 s. One still silent then, or dead, hung or died between reps: that is
        its behaviour, so the rep starts and its watchdog ends it at its first look, partial,
        naming the worker, as for a worker that hangs or dies during a rep (a comparison then
        judges a candidate's on it, docs/ci.md; it does not end the run unjudged)."""
        assert self.client is not None
        fresh = [w for w in self.workers if w.worker_id in self._fresh]
        if self._polled_before:
            give_up_s = watch_bounds(self.scenario).give_up_s
            waiting = [w for w in self.workers if w.worker_id not in self._fresh]
            try:
                wait_until_polling(self.client, waiting, self.workdir, give_up_s)
            except RunFailed as exc:
                self.progress.message(f"{self.title}: {exc}; the rep's watchdog judges them")
        wait_until_polling(
            self.client, fresh if self._polled_before else self.workers, self.workdir
        )
        self._polled_before, self._fresh = True, set()

    def run_rep(self, rep: int, reps: int) -> RepOutcome:
        assert self.client is not None
        s = self.scenario
        self._replace_killed()
        self._settle_refreshes()
        self.wait_all_polling()
        # Each rep starts from an idle fleet's takes, sent after the rep before, whatever the
        # pause between reps (in a compare, the other side's rep: about a hold's length).
        if self.client.renew_takes():
            self.wait_all_polling()
        cursor = self.client.reset()
        self.progress.rep_started(self.title, rep, reps, s.load.jobs)
        logs = f"; see the workers' logs in {self.workdir}"
        fleet = None
        if s.fleet is not None:
            fleet = FleetDrive(self.client, self._spawn_scaled, self.scaled)
            if self.refreshes is not None:
                fleet.expects_exit = self.refreshes.expects_exit
        queue_pid = self.queue.process.pid if self.queue is not None else None
        assert self.pool is not None
        drive = RepDrive(
            s,
            self.client,
            self.workers,
            self.progress,
            rep,
            self.check_queue,
            logs,
            queue_pid,
            fleet,
            self.refreshes,
            self.pool.cpu_seconds,
            self.pool.write_bytes,
        )
        ended = drive.run()
        # The queue's counts first, then the events up to that moment: a rep cut short (another
        # lane failed, a Ctrl-C) leaves workers finishing jobs meanwhile, and a log read before
        # the counts would lack the jobs they finished in between.
        state = self.client.state()
        events, _ = self.client.events(cursor)
        if "events_next" in state:  # a --server of an older fake_queue has no such mark
            del events[max(0, state["events_next"] - cursor) :]
        # A rep cut short may not have submitted every job: conservation then checks the jobs
        # against the queue's own count of those submitted.
        submitted = s.load.jobs if ended.partial is None else None
        check_conservation(state, events, submitted)
        scaled = fleet.started if fleet is not None else []
        measure = measure_rep(s, events, self.worker_ids + scaled)
        note_rep_end(measure.figures, ended)
        for found in measure.figures.get("anomalies", []):
            if found["kind"] == DISK_KIND:  # the others were said as they were found
                self.progress.message(f"{self.title} rep {rep}: {found['what']}")
        for found in measure.figures.get("below_slots", []):
            self.progress.message(f"{self.title} rep {rep}: {below_slots_text(found)}")
        # The fleet's workers that stopped during the rep are forgotten; the others stay.
        self.scaled[:] = [w for w in self.scaled if w.returncode() is None]
        self.progress.rep_finished(self.title, rep, measure.figures)
        return RepOutcome(measure, events, stopped=self._stopping_error(ended, rep))

    def _stopping_error(self, ended: RepEnd, rep: int) -> RunFailed | None:
        """What ends the run once this rep is saved: the rep's own failure, or jobs lost
        without any fault asked for (a harness or worker bug, never a figure)."""
        if ended.error is not None or not ended.lost or self.faulted:
            return ended.error
        shown = ", ".join(ended.lost[:5]) + (" ..." if len(ended.lost) > 5 else "")
        return RunFailed(
            f"rep {rep} of {self.scenario.name}: {len(ended.lost)} jobs lost by the workers "
            f"(delivered, never reported done, no longer in their heartbeat or overdue): "
            f"{shown}; the rep is saved with their ids; see the workers' logs in {self.workdir}"
        )

    def _spawn_scaled(self, worker_id: str) -> Worker:
        """One worker the fleet scaled up, started now."""
        self._spawn_workers(self.scaled, [worker_id])
        return self.scaled[-1]

    def _settle_refreshes(self) -> None:
        """Refreshes the last rep left in course carried out: a worker that asked on its last
        job is replaced before the next rep, which waits for the fresh one to poll."""
        if self.refreshes is None:
            return
        for line in self.refreshes.settle():
            self.progress.message(f"{self.title}: {line}")
        self._fresh |= self.refreshes.fresh
        self.refreshes.fresh.clear()

    def _replace_killed(self) -> None:
        """A worker a --worker-fault killed is replaced before the next rep, as the platform
        would start a new one."""
        for index, worker in enumerate(self.workers):
            if worker.returncode() is not None and self.scenario.worker_faults:
                worker.stop()
                fresh: list[Worker] = []
                self._spawn_workers(fresh, [worker.worker_id])
                self.workers[index] = fresh[0]
                self._fresh.add(worker.worker_id)

    def keep_logs(self) -> None:
        self.logs_kept = True

    def stop(self) -> None:
        """Stop the workers, then close the client, then stop the queue (or put another
        server's settings back), and last remove the logs unless they are kept. The workers go
        first because their long-polls are released through the client and the queue. Each
        step runs even if one before it failed, and a Ctrl-C or SIGTERM meanwhile waits until
        all are done: the queue runs in a session of its own, so nothing else would stop it."""
        with interrupts_deferred(), contextlib.ExitStack() as later:
            if not self.logs_kept:
                later.callback(shutil.rmtree, self.workdir, ignore_errors=True)
            if self.queue is not None:
                later.callback(self.queue.stop)
            elif self.client is not None:
                later.callback(self._restore_server)
            if self.client is not None:
                later.callback(self.client.close)
            if self.pool is not None:
                later.callback(self.pool.close)
                self.pool.stop_all(self.workers + self.scaled, self._release_long_polls)

    def _restore_server(self) -> None:
        """Another server's own fault rules back, and its fleet fixed again; best effort."""
        assert self.client is not None
        with contextlib.suppress(RunFailed):
            if self._faults_before is not None:
                self.client.set_faults(self._faults_before)
            if self.scenario.fleet is not None:
                self.client.set_fleet(None)

    def _release_long_polls(self) -> None:
        """Best effort: a queue that is gone holds no long-poll."""
        if self.client is not None:
            with contextlib.suppress(RunFailed):
                self.client.release()


def note_rep_end(figures: dict[str, Any], ended: RepEnd) -> None:
    """What the rep's end adds to its figures: lost jobs, stalls, worker faults, partial, the
    machine's load, the workers' disk writes (and their anomaly: measure/disk_writes.py)."""
    if ended.lost:
        figures["jobs"]["lost"] = len(ended.lost)
        figures["lost_jobs"] = ended.lost
    if ended.anomalies:
        figures["anomalies"] = ended.anomalies
    if ended.worker_faults:
        figures["faults"] = dict(
            sorted({**figures.get("faults", {}), **ended.worker_faults}.items())
        )
    if ended.partial is not None:
        figures["partial"] = ended.partial
    if ended.machine is not None:
        figures["machine"] = ended.machine
    if ended.harness is not None:
        figures["harness"] = ended.harness
    if ended.arrivals is not None:
        figures["arrivals"] = ended.arrivals
    if ended.worker_nodes is not None:
        figures["worker_nodes"] = dict(sorted(ended.worker_nodes.items()))
    if ended.worker_write_bytes is not None:
        figures["worker_write_bytes"] = ended.worker_write_bytes
    # Known once the jobs are counted: writes over the threshold a job are the workers' doing.
    disk = disk_anomalies(ended.worker_write_bytes, figures["jobs"]["completed"])
    if disk:
        figures["anomalies"] = [*figures.get("anomalies", []), *disk]


def make_workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="jobbench-"))


@dataclass
class FakeTarget:
    """The fake Target (`--target fake`): the embedded fake queue (started per scenario) or
    `server_url`'s, with a fleet of real worker processes per scenario."""

    server_url: str | None = None
    api_key: str | None = None
    seed: int | None = None
    pin_queue: bool = True
    ready: dict[WorkerSpec, ReadyWorker] = field(default_factory=dict)
    pools: PoolFactory = field(default_factory=LocalPools)  # where the workers run
    queue_host: str = "127.0.0.1"  # the embedded queue's bind address
    # Where the workers run, in the header's words (a Ray cluster's address); None: here.
    placed_on: str | None = None
    lane_scope: str = ""  # FakeSession.lane_scope of every session

    def describe(self) -> TargetBlock:
        return TargetBlock(kind="fake", endpoint=self.server_url or "embedded")

    def lanes_room(self, scenarios: Sequence[Scenario]) -> int:
        """Each session has an embedded queue of its own (one --server has one queue), and
        its workers go where its pools have room (a cluster's CPUs)."""
        if self.server_url is not None:
            return 1
        return self.pools.room([s.max_workers for s in scenarios])

    def preflight(self, scenarios: Sequence[Scenario], progress: Progress) -> None:
        """Ready every runpod SDK the workers will import (its environment built, the import
        tried) before anything starts or is written: a usage error must leave no processes
        and no half-written result."""
        for scenario in scenarios:
            if scenario.worker not in self.ready:  # once per variant, not per scenario
                self.ready[scenario.worker] = ready_worker(scenario.worker, progress.message)

    def header(self, scenarios: Sequence[Scenario], reps: int) -> str:
        """One line: target and model, workers, burst, reps (docs/metrics.md, "The run table")."""
        s = scenarios[0]
        where = f"fake queue at {self.server_url}" if self.server_url else "embedded fake queue"
        more = f" (+{len(scenarios) - 1} more scenarios)" if len(scenarios) > 1 else ""
        if self.placed_on is not None:
            where += f", workers on the Ray cluster at {self.placed_on}"
        return (
            f"{where}, take {s.latency.take.describe()} s, wake {s.latency.wake.describe()} s; "
            f"{s.workers} x {s.worker.describe()} x {s.slots} slots; "
            f"{s.describe_jobs()}; {reps} reps{more}"
        )

    def session(self, scenario: Scenario, label: str, progress: Progress) -> FakeSession:
        return FakeSession(
            scenario,
            make_workdir(),
            progress,
            label=label,
            server_url=self.server_url,
            api_key=self.api_key,
            seed=self.seed,
            pin_queue=self.pin_queue,
            ready=self.ready.get(scenario.worker),
            pools=self.pools,
            queue_host=self.queue_host,
            lane_scope=self.lane_scope,
        )
