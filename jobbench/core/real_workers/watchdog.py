"""The watchdog over a fake-queue rep (docs/reliability.md, "The watchdog"): from the queue's
view of each worker (fake_queue.queue.watch, polled while the rep runs) it finds

- a **stall**: a worker that did no work (no take, no job-done; a heartbeat is not work) for
  `stall_s` while it should: it has no take waiting at the queue, and it holds jobs or jobs
  are queued. (A worker with a take waiting is waiting on the queue: a hung one's take is
  answered in time, by jobs or by the hold running out, and then it is seen.)
  Reported when seen, kept as the rep's anomaly (when, how long, how many jobs it held);
- a worker that **never comes back**: stalled for `give_up_s`; the rep ends there, failed;
- **lost jobs**: delivered, never done, and missing from two of the worker's heartbeats, or held
  longer than `overdue_s`, or held by a worker process that is gone.

The bounds come from the scenario (core/scenario/watch_bounds.py), which the simulator reads too.

Pure: it is given times and views, so the rules are tested without processes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from jobbench.core.scenario.watch_bounds import WatchBounds


@dataclass
class Stall:
    worker: str
    began: float  # the runner's monotonic seconds: the worker's last work
    held: int
    work_ns: int  # the queue's stamp of that last work: another one means it worked again
    ended: float | None = None
    expected: bool = False  # inside a pause the scenario asked for (--worker-fault)

    def anomaly(self, rep_began: float, now: float) -> dict[str, Any]:
        end = self.ended if self.ended is not None else now
        return {
            "kind": "stall",
            "worker": self.worker,
            "at_s": round(self.began - rep_began, 3),
            "for_s": round(end - self.began, 3),
            "held": self.held,
            "resumed": self.ended is not None,
        }


@dataclass
class Watchdog:
    bounds: WatchBounds
    worker_ids: list[str]
    began: float
    stalls: list[Stall] = field(default_factory=list)
    _open: dict[str, Stall] = field(default_factory=dict)

    def observe(
        self,
        now: float,
        view: Mapping[str, Mapping[str, Any]],
        queued: int,
        paused: Collection[str] = (),
        gone: Collection[str] = (),
    ) -> list[str]:
        """One look at the workers; returns a line for each stall seen begin or end. `paused`:
        workers inside a pause the scenario asked for; `gone`: worker processes that ended."""
        lines = []
        for worker in self.worker_ids:
            seen = view.get(worker)
            if seen is None or worker in gone or seen.get("idle_s") is None:
                continue
            last_work = now - float(seen["idle_s"])
            should_work = seen["polling"] == 0 and (seen["held"] > 0 or queued > 0)
            stall = self._open.get(worker)
            if stall is not None and seen["last_work_ns"] != stall.work_ns:
                stall.ended = max(last_work, stall.began)
                del self._open[worker]
                lines.append(f"worker {worker} resumed after {stall.ended - stall.began:.1f} s")
            elif stall is None and should_work and now - last_work >= self.bounds.stall_s:
                held, work_ns = int(seen["held"]), int(seen["last_work_ns"])
                stall = Stall(worker, last_work, held, work_ns, expected=worker in paused)
                self.stalls.append(stall)
                self._open[worker] = stall
                if not stall.expected:
                    lines.append(
                        f"worker {worker} stalled: no take and no job-done for "
                        f"{now - last_work:.1f} s while holding {stall.held} jobs"
                    )
        return lines

    @property
    def stalled(self) -> set[str]:
        """Workers stalled now."""
        return set(self._open)

    def hung(self, now: float, paused: Collection[str] = ()) -> Stall | None:
        """A stall past `give_up_s` outside a requested pause: that worker is not coming back."""
        for stall in self._open.values():
            if stall.worker not in paused and now - stall.began >= self.bounds.give_up_s:
                return stall
        return None

    def anomalies(self, now: float) -> list[dict[str, Any]]:
        """The rep's unrequested stalls, as the result keeps them."""
        return [s.anomaly(self.began, now) for s in self.stalls if not s.expected]


def lost_jobs(
    view: Mapping[str, Mapping[str, Any]],
    gone: Collection[str] = (),
    stalled: Collection[str] = (),
) -> set[str]:
    """Jobs the workers lost, from a view fetched with ids (fake_queue.queue.watch): unlisted by the
    heartbeat, overdue, or held by a worker whose process is gone. A stalled worker's jobs are
    not lost: it may come back, and if it does not the rep fails on the stall."""
    lost: set[str] = set()
    for worker, seen in view.items():
        if worker in stalled and worker not in gone:
            continue
        lost.update(seen.get("held_ids", ()) if worker in gone else ())
        lost.update(seen.get("unlisted", ()))
        lost.update(seen.get("overdue", ()))
    return lost


def maybe_lost(
    view: Mapping[str, Mapping[str, Any]],
    gone: Collection[str] = (),
    stalled: Collection[str] = (),
) -> int:
    """How many jobs look lost in a view fetched without ids (counts only): cheap to poll."""
    return sum(
        int(seen["held"]) if worker in gone else int(seen["unlisted"]) + int(seen["overdue"])
        for worker, seen in view.items()
        if worker in gone or worker not in stalled
    )
