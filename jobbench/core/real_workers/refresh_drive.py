"""The platform's side of refresh_worker (docs/workers.md, "refresh_worker"), carried out on the
fake target as RunPod does it: a job-done carrying `stopPod` (a handler that returned
`refresh_worker: True`, or a worker started with it in its config) has the queue log a `refresh` and
hand that worker no more jobs (fake_queue/queue/job_queue.py `refresh`); this runner then stops its
process once the jobs it holds are done (SIGTERM to its group, its long-polls answered; an SDK
started with the key exits by itself, rc 0, and that is no death either) and starts a fresh process
under the same id in the same place of its fleet, with a fresh folder, as a new container. The fresh
one is not watched until it polls.

Every process it starts replaces the old one in its owner's list (the session's, the `workers`
command's), so each is cleaned up on every way out, and its order (`--worker-fault ...:wN`,
the split's) stays.
"""

from __future__ import annotations

import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobbench.clients.bench_client import BenchClient
from jobbench.errors import RunFailed
from jobbench.procs import lane_stop
from jobbench.procs.worker_handle import Worker

# A stopped worker holds no job and only has to exit: past this it is killed. A fresh one has
# as long as a worker's first start (core/real_workers/fake_target.py READY_TIMEOUT_S) to poll.
GRACE_S = 10.0
READY_S = 90.0
POLL_S = 0.05

Spawn = Callable[[list[Worker], list[str]], None]  # start these ids, added to the list


@dataclass
class _Refresh:
    job: str  # the job whose job-done asked for it
    sigterm_at: float | None = None  # when the runner stopped it (monotonic s); None: not yet
    died: bool = False  # it died before it was stopped: not carried out (its owner says so)


@dataclass
class Refreshes:
    client: BenchClient
    fleets: Sequence[list[Worker]]  # the owner's lists of worker processes
    spawn: Spawn
    pending: dict[str, _Refresh] = field(default_factory=dict)
    booting: dict[str, tuple[float, int]] = field(default_factory=dict)  # since, last_work_ns
    restarts: int = 0  # carried out, all told
    fresh: set[str] = field(default_factory=set)  # restarted since the owner last looked
    lives: Counter[str] = field(default_factory=Counter)  # processes each worker id ended

    @property
    def unwatched(self) -> set[str]:
        """Workers between their old process's stop and the fresh one's first take: no stall
        or hang of theirs is one."""
        stopped = {w for w, r in self.pending.items() if r.sigterm_at is not None and not r.died}
        return stopped | set(self.booting)

    def look(
        self,
        view: Mapping[str, Mapping[str, Any]],
        now: float,
        yields: Collection[str] = (),
        rep_over: bool = False,
    ) -> list[str]:
        """One look at the queue's view of the workers (GET /_bench/workers): refreshes asked
        for are taken in, carried out as far as they can be, and a fresh worker that polls is
        watched again; returns what to say. `yields`: workers the platform stops for good (an
        autoscaled fleet's scale-down), which are not restarted; `rep_over`: stop a worker
        whatever it holds (`settle`)."""
        for worker, seen in view.items():
            job = seen.get("refresh")
            if job is not None and worker not in self.pending and self._find(worker) is not None:
                self.pending[worker] = _Refresh(str(job))
        lines = []
        for worker, refresh in list(self.pending.items()):
            if worker in yields or (refresh.died and "refresh" not in view.get(worker, {})):
                # The fleet stopped it, or it died and the queue no longer asks for it.
                del self.pending[worker]
            elif not refresh.died:
                lines += self._advance(worker, view.get(worker, {}), now, rep_over)
        for worker, (since, work_ns) in list(self.booting.items()):
            seen = view.get(worker, {})
            if since == now:  # started during this look: the view shows the old process
                continue
            if seen.get("polling", 0) >= 1 or seen.get("last_work_ns", work_ns) != work_ns:
                del self.booting[worker]
            elif now - since > READY_S:
                raise RunFailed(
                    f"worker {worker} did not poll the queue within {READY_S:.0f} s of its "
                    f"refresh; see its log {self._current(worker).log_path}"
                )
        return lines

    def expects_exit(self, worker: str, code: int) -> bool:
        """Whether a worker process's exit is its refresh's: after the runner stopped it, or
        rc 0 once it asked (an SDK started with refresh_worker exits by itself). The queue is
        asked again when this runner has not seen the request yet: the exit may follow the
        job-done within milliseconds."""
        refresh = self.pending.get(worker)
        if refresh is None and code == 0:
            job = self.client.workers().get(worker, {}).get("refresh")
            if job is not None:
                refresh = self.pending[worker] = _Refresh(str(job))
        if refresh is None or refresh.died:
            return False
        return refresh.sigterm_at is not None or code == 0

    def check_alive(self, processes: Sequence[Worker]) -> None:
        """Every process running, or ended by its refresh; else WorkerError naming it."""
        for process in processes:
            code = process.returncode()
            if code is not None and not self.expects_exit(process.worker_id, code):
                process.check_alive()

    def settle(self) -> list[str]:
        """Between reps: every refresh in course carried out, whatever its worker still holds
        (the rep is over and measured; a job it lost is counted there). The fresh ones are left
        to the owner's wait for every worker to poll."""
        lines = self.look(self.client.workers(), time.monotonic(), rep_over=True)
        while any(not r.died for r in self.pending.values()):
            lane_stop.pause(POLL_S)
            lines += self.look(self.client.workers(), time.monotonic(), rep_over=True)
        self.booting.clear()
        return lines

    def _advance(
        self, worker: str, seen: Mapping[str, Any], now: float, rep_over: bool
    ) -> list[str]:
        """Stop the worker once it holds no job; once it has exited, a fresh one."""
        refresh, process = self.pending[worker], self._find(worker)
        if process is None:  # its owner let it go (a fleet's stopped worker, after its rep)
            del self.pending[worker]
            return []
        code = process.returncode()
        idle = rep_over or int(seen.get("held", 0)) == 0
        if code is None and refresh.sigterm_at is None and idle:
            process.signal(signal.SIGTERM)
            process.signal(signal.SIGCONT)  # a paused one acts on it too
            refresh.sigterm_at = now
            self.client.release(worker)  # an SDK exits once its long-polls return
            return []
        overdue = refresh.sigterm_at is not None and now > refresh.sigterm_at + GRACE_S
        killed = code is None and overdue
        if killed:
            process.stop(grace_s=0)  # SIGKILL
            code = process.returncode()
        if code is None:
            return []
        if refresh.sigterm_at is None and code != 0:
            refresh.died = True  # it exited before it was stopped: its owner reports a death
            return []
        del self.pending[worker]
        process.stop(grace_s=0)  # ends its group (the SDK's heartbeat child) and closes its log
        self.client.refreshed(worker, code)
        self._respawn(process)
        self.restarts += 1
        self.fresh.add(worker)
        self.booting[worker] = (now, int(seen.get("last_work_ns", 0)))
        how = f"killed {GRACE_S:g} s after SIGTERM" if killed else f"exit code {code}"
        return [
            f"worker {worker} refreshed (its job {refresh.job} asked: refresh_worker): "
            f"{how}, a fresh process started"
        ]

    def _respawn(self, old: Worker) -> None:
        """A fresh process in the old one's place: its log kept beside (`<id>.<n>.log`), its
        folder new."""
        fleet = next(f for f in self.fleets if old in f)
        index = fleet.index(old)
        self.lives[old.worker_id] += 1
        kept = old.log_path.with_name(f"{old.worker_id}.{self.lives[old.worker_id]}.log")
        if old.log_path.exists():
            old.log_path.replace(kept)
        if old.cwd is not None:
            shutil.rmtree(old.cwd, ignore_errors=True)
        self.spawn(fleet, [old.worker_id])  # appended, so every way out stops it
        fleet[index] = fleet.pop()

    def _find(self, worker: str) -> Worker | None:
        for fleet in self.fleets:
            for process in reversed(fleet):
                if process.worker_id == worker:
                    return process
        return None

    def _current(self, worker: str) -> Worker:
        process = self._find(worker)
        assert process is not None, worker
        return process
