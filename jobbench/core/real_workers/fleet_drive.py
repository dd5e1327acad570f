"""The fake target's executor of an autoscaled fleet's orders (fake_queue/queue/autoscaled_fleet.py
decides, the runner acts, as RunPod's platform starts and stops containers): a start order's worker
process is spawned when its cold start's modelled part is over (its real start-up follows), a stop
order's gets SIGTERM (its SDK's own shutdown finishes and posts the jobs it holds) and is
reported stopped once its process has exited. Every process it starts is in `processes`, the
session's list, so each is cleaned up on every way out (core/real_workers/fake_target.py)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jobbench.clients.bench_client import BenchClient
from jobbench.errors import RunFailed
from jobbench.procs.worker_handle import Worker

# A stopped worker finishes the jobs it holds before it exits; past this it is killed, its
# jobs lost, and the rep flagged (the SDK bounds its own shutdown by its 90 s long-polls).
STOP_GRACE_S = 120.0


@dataclass
class FleetDrive:
    client: BenchClient
    spawn: Callable[[str], Worker]  # starts one worker process (added to `processes`)
    processes: list[Worker]  # every process this rep started (the session's list)
    cursor: int = 0  # the next order's seq
    at_rest: bool = False
    started: list[str] = field(default_factory=list)  # ids, in order
    stopped: set[str] = field(default_factory=set)  # exited after the fleet stopped them
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)  # the fleet's, last look
    # An exit that is a refresh's (core/real_workers/refresh_drive.py): its replacement is started
    # there.
    expects_exit: Callable[[str, int], bool] = lambda _worker, _code: False
    _due: list[tuple[float, str]] = field(default_factory=list)  # (runner's monotonic s, worker)
    _stopping: dict[str, float] = field(default_factory=dict)  # worker: SIGTERM sent at

    def tick(self, began: float) -> list[str]:
        """One look at the fleet: new orders taken in, due starts spawned, stopped processes
        reported; returns what to say. A fleet worker that exits unasked raises RunFailed."""
        view = self.client.fleet(self.cursor)
        # The runner's clock is read once the view is here, never before: the queue's `now_ns`
        # was read before it answered, so a start is never due before its modelled cold start
        # is over (a clock read before the request ran early by the request's time).
        now = time.monotonic()
        self.states = view.get("workers", {})
        lines = []
        for order in view.get("orders", []):
            self.cursor = int(order["seq"]) + 1
            worker = str(order["worker"])
            if order["action"] == "start":
                wait_s = max(int(order["at"]) - int(view["now_ns"]), 0) / 1e9
                self._due.append((now + wait_s, worker))
            else:
                self._sigterm(worker, now)
                lines.append(f"fleet: stopping {worker} at {now - began:.1f} s")
        for due, worker in [d for d in self._due if d[0] <= now]:
            self._due.remove((due, worker))
            self.spawn(worker)
            self.started.append(worker)
            self.client.fleet_report(worker, "started")
            lines.append(f"fleet: started {worker} at {now - began:.1f} s")
        self._reap(now, began)
        self.at_rest = bool(view.get("at_rest")) and not self._due and not self._stopping
        return lines

    def polling(self) -> list[str]:
        """Workers it started that poll now (booting ones are not watched: an SDK takes ~2 s
        to import, and its id's record at the queue may be an earlier rep's)."""
        return [w for w in self.started if self.states.get(w, {}).get("state") == "polling"]

    @property
    def stopping(self) -> set[str]:
        """Workers the fleet stops for good: sent SIGTERM, or stopped already."""
        return set(self._stopping) | self.stopped

    def _process(self, worker: str) -> Worker:
        return next(p for p in reversed(self.processes) if p.worker_id == worker)

    def _sigterm(self, worker: str, now: float) -> None:
        self._process(worker).signal(signal.SIGTERM)
        self._stopping[worker] = now

    def _reap(self, now: float, began: float) -> None:
        for process in self.processes:
            worker, code = process.worker_id, process.returncode()
            if worker in self.stopped:
                continue
            if worker in self._stopping:
                if code is None and now - self._stopping[worker] > STOP_GRACE_S:
                    process.stop(grace_s=0)  # SIGKILL: what it held is lost, and said so
                    code = process.returncode()
                    self.anomalies.append(
                        {
                            "kind": "stop timeout",
                            "worker": worker,
                            "at_s": round(now - began, 3),
                            "for_s": round(now - self._stopping[worker], 3),
                        }
                    )
                if code is not None:
                    del self._stopping[worker]
                    self.stopped.add(worker)
                    process.stop(grace_s=0)  # ends what is left of its group, closes its log
                    self.client.fleet_report(worker, "exited", code)
            elif code is not None and not self.expects_exit(worker, code):
                self.client.fleet_report(worker, "exited", code)
                raise RunFailed(
                    f"fleet worker {worker} exited (code {code}) without being stopped:\n"
                    f"{process.stderr_tail()}"
                )
