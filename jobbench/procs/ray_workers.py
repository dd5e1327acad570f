"""Worker processes on a Ray cluster (`--cluster`): each is supervised by a small actor on its node
(`NodeWorker`), the actors placed by one placement group per scenario (one bundle per worker at
most at once, SPREAD over the nodes). The driver holds a `ClusterWorker` per worker, with the
face of a local `WorkerProcess` (procs/worker_handle.py), and a `ClusterPool` per scenario.

A worker process never outlives its actor: a guard process beside it (not in its group, so a
paused group does not pause it) watches the actor's pid and SIGKILLs the worker's whole group
(the SDK's heartbeat child included) once the actor is gone, however it went (its node's raylet
killed, `ray.kill`, the driver gone: Ray kills the actors a driver owns)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorDiedError, GetTimeoutError, RayActorError
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from jobbench.errors import RunFailed, UsageError, WorkerError
from jobbench.procs.disk_writes import group_write_bytes
from jobbench.procs.harness_cpu import group_cpu
from jobbench.procs.ray_cluster import ClusterInfo, live_nodes
from jobbench.procs.signals import interrupts_deferred
from jobbench.procs.spawn import KILL_WAIT_S, STDERR_TAIL_BYTES, STOP_GRACE_S, WorkerProcess
from jobbench.procs.worker_handle import MakeSpec, Worker, WorkerPool

PLACE_TIMEOUT_S = 60.0  # the placement group's bundles reserved on the nodes
START_TIMEOUT_S = 120.0  # an actor's process started on its node (a busy two-core box is slow)
CALL_TIMEOUT_S = 10.0  # one question to a live actor; past it the answer is "not known yet"
# A worker whose actor is gone (its node lost) died as if SIGKILLed: its guard killed its group.
NODE_LOST_CODE = -signal.SIGKILL
GUARD_POLL_S = 0.2

# The guard: argv [actor pid, raylet pid, worker group]. It kills the group once the actor is
# gone (its own parent changed) or the node's raylet is (gone, or a zombie its parent has not
# reaped yet): a raylet SIGKILLed leaves its actors running, orphaned, and Ray never ends them,
# so the guard ends that actor too. It ends itself once the group is gone. Standard library
# only, run by the node's python with -c: nothing of jobbench has to import for a worker to be
# safe.
_GUARD = """
import os, signal, sys, time
actor, raylet, group = (int(arg) for arg in sys.argv[1:4])
signal.signal(signal.SIGTERM, signal.SIG_DFL)


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def kill(how, pid):
    try:
        how(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


while True:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        sys.exit(0)
    raylet_gone = not running(raylet)
    if os.getppid() != actor or raylet_gone:
        kill(os.killpg, group)
        if raylet_gone:
            kill(os.kill, actor)
        sys.exit(0)
    time.sleep(POLL)
""".replace("POLL", str(GUARD_POLL_S))


class NodeWorker:
    """On a node: one worker process, run from its own folder in the node's temp folder, its log
    beside it, and its guard. Methods are called from a few threads at once (max_concurrency):
    a stop under way must not hold back a question about the exit code."""

    def __init__(self, worker_id: str, run_folder: str) -> None:
        self.worker_id = worker_id
        self.root = Path(tempfile.gettempdir()) / run_folder
        self.folder = self.root / worker_id
        self.raylet = os.getppid()  # Ray starts an actor's process from its node's raylet
        self.process: WorkerProcess | None = None
        self.guard: subprocess.Popen[bytes] | None = None

    def where(self) -> tuple[str, str]:
        ip = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        return ray.get_runtime_context().get_node_id(), str(ip)

    def make_folder(self, subdirs: Sequence[str]) -> str:
        for sub in subdirs:
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        return str(self.folder)

    def start(
        self, argv: list[str], env: dict[str, str], unset: list[str], driver_python: str
    ) -> None:
        """The worker as the driver would start it: the node's environment with the driver's
        differences applied, and the node's python where the driver named its own."""
        full = {k: v for k, v in os.environ.items() if k not in set(unset)}
        full.update(env)
        if argv and argv[0] == driver_python:
            argv = [sys.executable, *argv[1:]]
        log = self.root / f"{self.worker_id}.log"
        self.process = WorkerProcess(self.worker_id, argv, full, log, cwd=self.folder)
        self.process.start()
        assert self.process.popen is not None
        pid = self.process.popen.pid
        self.guard = subprocess.Popen(
            [sys.executable, "-c", _GUARD, *map(str, (os.getpid(), self.raylet, pid))],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def returncode(self) -> int | None:
        return self.process.returncode() if self.process is not None else None

    def tail(self) -> str:
        return self.process.stderr_tail() if self.process is not None else ""

    def signal(self, sig: int) -> None:
        if self.process is not None:
            self.process.signal(sig)

    def stop(self, grace_s: float) -> int | None:
        """SIGTERM the group, `grace_s`, SIGKILL; then the guard, whose work is done."""
        if self.process is not None:
            self.process.stop(grace_s)
        if self.guard is not None:
            self.guard.kill()
            self.guard.wait()
        return self.returncode()

    def cpu_seconds(self) -> float | None:
        if self.process is None or self.process.popen is None or self.returncode() is not None:
            return None
        return group_cpu({self.worker_id: self.process.popen.pid})[self.worker_id]

    def write_bytes(self) -> int | None:
        """Its group's bytes written to storage, read on its node as the CPU is (None: it
        ended, or its node's /proc/<pid>/io cannot be read)."""
        if self.process is None or self.process.popen is None or self.returncode() is not None:
            return None
        return group_write_bytes({self.worker_id: self.process.popen.pid}).get(self.worker_id)

    def collect(self) -> bytes:
        """The worker's folder and log as a gzipped tar, then removed from the node."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path in (self.folder, self.root / f"{self.worker_id}.log"):
                if path.exists():
                    tar.add(path, arcname=path.name)
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            (self.root / f"{self.worker_id}.log").unlink()
            self.root.rmdir()  # the last of the run's workers on this node
        return buffer.getvalue()


NodeWorkerActor = ray.remote(NodeWorker)


@dataclass
class ClusterWorker:
    """The driver's side of one worker on the cluster: the face of procs/spawn.py's
    `WorkerProcess` (procs/worker_handle.py `Worker`), each call a question to its actor."""

    worker_id: str
    actor: Any
    log_path: Path  # here, once collected
    cwd: Path | None  # here, once collected
    node_id: str = ""
    node_ip: str = ""
    _code: int | None = None  # its exit code once known (it never changes after)
    _lost: bool = False  # its actor is gone: its node was lost, or the actor died
    _collected: bool = False

    @property
    def node(self) -> str:
        return f"node {self.node_id[:12]} ({self.node_ip})"

    def _ask(self, method: str, *args: Any, timeout_s: float = CALL_TIMEOUT_S) -> Any:
        """The actor's answer; None when it is slow to give one (it is asked again later), and
        the worker counted dead once its actor is gone for good."""
        if self._lost:
            return None
        try:
            return ray.get(getattr(self.actor, method).remote(*args), timeout=timeout_s)
        except GetTimeoutError:
            return None
        except ActorDiedError:
            self._lost, self._code = True, self._code if self._code is not None else NODE_LOST_CODE
            return None
        except RayActorError:  # unavailable for now (its node may be going): not known yet
            return None

    def returncode(self) -> int | None:
        if self._code is None:
            code = self._ask("returncode")
            if self._code is None and code is not None:
                self._code = int(code)
        return self._code

    def stderr_tail(self) -> str:
        tail = self._ask("tail")
        if tail is not None:
            return str(tail)
        if self._lost and not self.log_path.exists():
            return f"(its actor is gone: {self.node} was lost, with the worker's log)"
        with contextlib.suppress(OSError):
            return self.log_path.read_bytes()[-STDERR_TAIL_BYTES:].decode(errors="replace")
        return ""

    def check_alive(self, what: str = "died") -> None:
        code = self.returncode()
        if code is not None:
            said = "was lost with its node" if self._lost else what
            said = f"on {self.node} {said}"
            raise WorkerError(self.worker_id, code, self.stderr_tail(), said)

    def signal(self, sig: int) -> None:
        if not self._lost:
            with contextlib.suppress(RayActorError):
                self.actor.signal.remote(int(sig))

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop its group on its node, bring its folder and log here, end its actor."""
        code = self._ask("stop", grace_s, timeout_s=grace_s + KILL_WAIT_S + CALL_TIMEOUT_S)
        if code is not None and self._code is None:
            self._code = int(code)
        self.collect()
        self.end_actor()

    def collect(self) -> None:
        if self._collected:
            return
        data = self._ask("collect", timeout_s=60.0)
        if data is None:
            return
        self._collected = True
        assert self.cwd is not None
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(self.cwd.parent, filter="data")

    def end_actor(self) -> None:
        with contextlib.suppress(Exception):  # gone already, or the connection is
            ray.kill(self.actor, no_restart=True)


@dataclass
class LaneGroup:
    """A lane's placement group (a row's: its two sides share it): `bundles` bundles of
    `worker_cpus` CPUs each, SPREAD over the nodes (STRICT_SPREAD cannot hold more workers than
    nodes). Each side's N-th worker goes to bundle N, so the baseline's and the candidate's
    N-th workers run on one node, taking turns on the CPUs reserved for one (the sides'
    reps alternate)."""

    group: Any
    bundles: int
    worker_cpus: float
    users: int = 0


# The lanes whose pools are open, by name: the second side of a row finds the first's group.
_LANES: dict[str, LaneGroup] = {}
_LANES_LOCK = threading.Lock()


def _reserve(cluster: ClusterInfo, bundles: int, worker_cpus: float) -> Any:
    group = placement_group([{"CPU": worker_cpus}] * bundles, strategy="SPREAD")
    try:
        ray.get(group.ready(), timeout=PLACE_TIMEOUT_S)
    except GetTimeoutError:
        with contextlib.suppress(Exception):
            remove_placement_group(group)
        total = sum(node.cpus for node in live_nodes(ray))
        raise UsageError(
            f"--cluster {cluster.address}: cannot place {bundles} workers of --worker-cpus "
            f"{worker_cpus:g} on the cluster's {total:g} CPUs within {PLACE_TIMEOUT_S:.0f} s; "
            "run fewer workers, a smaller --worker-cpus, fewer --lanes, or add nodes"
        ) from None
    return group


def join_lane(cluster: ClusterInfo, lane: str, bundles: int, worker_cpus: float) -> LaneGroup:
    """The lane's group, reserved by its first pool (a pool needing more bundles than the
    group holds is a scenario of another shape: it gets a group of its own)."""
    with _LANES_LOCK:
        shared = _LANES.get(lane)
        if shared is None or shared.bundles < bundles:
            shared = LaneGroup(_reserve(cluster, bundles, worker_cpus), bundles, worker_cpus)
            _LANES[lane] = shared
        shared.users += 1
        return shared


def leave_lane(lane: str, shared: LaneGroup) -> None:
    """One pool of the lane closed; the group removed with the last one."""
    with _LANES_LOCK:
        shared.users -= 1
        if shared.users > 0:
            return
        if _LANES.get(lane) is shared:
            del _LANES[lane]
    with contextlib.suppress(Exception):
        remove_placement_group(shared.group)


@dataclass
class ClusterPool:
    """One scenario's workers on the cluster, in its lane's placement group (LaneGroup), and
    where each worker ran."""

    cluster: ClusterInfo
    workdir: Path
    lane: str
    shared: LaneGroup
    subdirs: tuple[str, ...]
    run_folder: str = field(default_factory=lambda: f"jobbench-node-{uuid.uuid4().hex[:12]}")
    placed: dict[str, list[str]] = field(default_factory=dict)  # node id: worker ids, in order
    bundle_of: dict[str, int] = field(default_factory=dict)  # worker id: its bundle, for good
    _actors: list[Any] = field(default_factory=list)  # every actor started: close() ends all
    _left: bool = False

    def _bundle(self, worker_id: str) -> int:
        """The worker's bundle: the N-th worker id this pool met, N-th; the same on a restart."""
        if worker_id not in self.bundle_of:
            self.bundle_of[worker_id] = len(self.bundle_of) % self.shared.bundles
        return self.bundle_of[worker_id]

    def spawn(self, into: list[Worker], worker_ids: Sequence[str], make_spec: MakeSpec) -> None:
        """Every actor asked for at once (Ray starts their processes in parallel), then each
        worker started on its node. An actor takes no CPU of its own: its bundle holds them."""
        started: list[ClusterWorker] = []
        for worker_id in worker_ids:
            strategy = PlacementGroupSchedulingStrategy(
                self.shared.group, placement_group_bundle_index=self._bundle(worker_id)
            )
            actor = NodeWorkerActor.options(
                num_cpus=0, scheduling_strategy=strategy, max_concurrency=4
            ).remote(worker_id, self.run_folder)
            self._actors.append(actor)
            here = self.workdir / worker_id
            worker = ClusterWorker(worker_id, actor, self.workdir / f"{worker_id}.log", here)
            into.append(worker)
            started.append(worker)
        for worker in started:
            self._start(worker, make_spec)

    def _start(self, worker: ClusterWorker, make_spec: MakeSpec) -> None:
        try:
            node_id, node_ip = ray.get(worker.actor.where.remote(), timeout=START_TIMEOUT_S)
            worker.node_id, worker.node_ip = str(node_id), str(node_ip)
            self.placed.setdefault(worker.node_id, []).append(worker.worker_id)
            folder = ray.get(worker.actor.make_folder.remote(self.subdirs), timeout=CALL_TIMEOUT_S)
            argv, env = make_spec(worker.worker_id, Path(folder))
            unset = [key for key in os.environ if key not in env]
            changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
            ray.get(
                worker.actor.start.remote(argv, changed, unset, sys.executable),
                timeout=START_TIMEOUT_S,
            )
        except GetTimeoutError:
            raise RunFailed(
                f"worker {worker.worker_id}: its Ray actor did not start within "
                f"{START_TIMEOUT_S:.0f} s on the cluster at {self.cluster.address}"
            ) from None
        except RayActorError as exc:
            raise RunFailed(
                f"worker {worker.worker_id}: its Ray actor died while starting: "
                f"{str(exc).strip().splitlines()[0]}"
            ) from None
        except ray.exceptions.RayTaskError as exc:  # the start itself failed on the node
            cause = exc.cause if isinstance(exc.cause, WorkerError) else None
            if cause is not None:
                raise cause from None
            raise RunFailed(f"worker {worker.worker_id}: {exc}") from None

    def stop_all(
        self, workers: Sequence[Worker], after_sigterm: Callable[[], None] | None = None
    ) -> None:
        """As procs/spawn.py `stop_all`, every node at once: SIGTERM to every group,
        `after_sigterm()`, then each actor's stop (its grace, SIGKILL) in parallel, the logs
        collected, the actors ended. A Ctrl-C meanwhile waits for it."""
        mine = [w for w in workers if isinstance(w, ClusterWorker)]
        with interrupts_deferred():
            for worker in mine:
                worker.signal(signal.SIGTERM)
                worker.signal(signal.SIGCONT)  # a paused one acts on it too
            if mine and after_sigterm is not None:
                after_sigterm()
            live = [w for w in mine if not w._lost]
            stops = [w.actor.stop.remote(STOP_GRACE_S) for w in live]
            for worker, ref in zip(live, stops):
                with contextlib.suppress(Exception):  # its node is gone: its guard killed it
                    code = ray.get(ref, timeout=STOP_GRACE_S + KILL_WAIT_S + CALL_TIMEOUT_S)
                    if code is not None and worker._code is None:
                        worker._code = int(code)
            for worker in mine:
                worker.collect()
                worker.end_actor()

    def cpu_seconds(self, workers: Sequence[Worker]) -> dict[str, float]:
        return {w: float(v) for w, v in _ask_live(workers, "cpu_seconds").items()}

    def write_bytes(self, workers: Sequence[Worker]) -> dict[str, int]:
        """Each live worker's bytes written, asked of its actor as the CPU is."""
        return {w: int(v) for w, v in _ask_live(workers, "write_bytes").items()}

    def describe(self) -> dict[str, Any]:
        nodes = {node.node_id: node for node in self.cluster.nodes}
        return {
            "address": self.cluster.address,
            "queue_host": self.cluster.driver_ip,
            "worker_cpus": self.shared.worker_cpus,
            "nodes": [
                {**node.to_json(), "workers": self.placed.get(node_id, [])}
                for node_id, node in nodes.items()
            ],
        }

    def close(self) -> None:
        """Every actor ended, then the lane's placement group left (removed by its last
        pool); idempotent."""
        with interrupts_deferred():
            for actor in self._actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor, no_restart=True)
            if not self._left:
                self._left = True
                leave_lane(self.lane, self.shared)


@dataclass(frozen=True)
class ClusterPools:
    """The `PoolFactory` of a run with --cluster: a pool per scenario on the one cluster, the
    pools of one lane (a row's two sides) in one placement group."""

    cluster: ClusterInfo
    worker_cpus: float
    subdirs: tuple[str, ...]

    def room(self, bundles: Sequence[int]) -> int:
        """As many of the largest as the cluster's CPUs hold at once, at least one."""
        held, total = 0, 0.0
        for size in sorted(bundles, reverse=True):
            total += size * self.worker_cpus
            if total > self.cluster.cpus:
                break
            held += 1
        return max(1, held)

    def open(
        self, workdir: Path, bundles: int, cpus: frozenset[int] | None, lane: str
    ) -> WorkerPool:
        shared = join_lane(self.cluster, lane, bundles, self.worker_cpus)
        return ClusterPool(self.cluster, workdir, lane, shared, self.subdirs)


def _ask_live(workers: Sequence[Worker], method: str) -> dict[str, Any]:
    """Each live worker's answer to its actor's `method`, asked of all at once; one slow, gone
    or answering None is left out, as an ended one."""
    live = [w for w in workers if isinstance(w, ClusterWorker) and not w._lost]
    asked = [(w, getattr(w.actor, method).remote()) for w in live]
    found: dict[str, Any] = {}
    for worker, ref in asked:
        with contextlib.suppress(Exception):
            answer = ray.get(ref, timeout=CALL_TIMEOUT_S)
            if answer is not None:
                found[worker.worker_id] = answer
    return found
