"""Why a fake-queue rep could not finish, from what the runner saw of its workers while it ran: the
queue's view of each worker at every watch look (fake_queue.queue.watch: the jobs it held, whether a
take of it was waiting) and how many jobs were queued then. Read when the rep runs past its timeout
(core/real_workers/rep_drive.py), so that the error names a likely cause, not only the count of
jobs left:

- jobs held by a stalled worker (the watchdog's, core/real_workers/watchdog.py);
- workers below their declared slots: jobs were queued, yet none held as many jobs as its
  slots at any look (a runpod handler started without a `concurrency_modifier` runs one job
  at a time);
- workers idle with jobs queued: holding nothing, no take waiting, at the last looks in a row
  (the SDK's own 1 s re-check idles a worker for a look at times) or at every look;
- every worker full at every look with jobs queued: the jobs take longer than `--job-seconds`,
  which the timeout is sized from.

Pure: it is given views, so the rules are tested without processes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

# Looks in a row (0.5 s apart) a worker must be seen idle with jobs queued to be called idle: more
# than the runpod SDK's 1 s re-check, which idles a worker running below its slots for a look.
IDLE_LOOKS = 4


@dataclass
class StuckWatch:
    slots: int
    worker_ids: list[str]
    # Per worker, the most jobs it held at any look that found jobs queued.
    most_held: dict[str, int] = field(default_factory=dict)
    queued_looks: int = 0  # how many looks found jobs queued
    # Per worker, how many of those looks found it holding all its slots.
    full_looks: dict[str, int] = field(default_factory=dict)
    # Per worker, the looks in a row that found it holding nothing and making no take.
    idle: dict[str, int] = field(default_factory=dict)
    queued: int = 0  # jobs queued at the last look
    held: dict[str, int] = field(default_factory=dict)  # jobs each worker held at the last look

    def observe(self, view: Mapping[str, Mapping[str, Any]], queued: int) -> None:
        """One watch look: the queue's view of the workers and the jobs queued."""
        self.queued = queued
        seen = {w: view[w] for w in self.worker_ids if w in view}
        self.held = {w: int(s["held"]) for w, s in seen.items()}
        for worker, view_of in seen.items():
            idle = queued > 0 and view_of["held"] == 0 and view_of["polling"] == 0
            self.idle[worker] = self.idle.get(worker, 0) + 1 if idle else 0
        if queued == 0:
            return
        self.queued_looks += 1
        for worker, held in self.held.items():
            self.most_held[worker] = max(self.most_held.get(worker, 0), held)
            if held >= self.slots:
                self.full_looks[worker] = self.full_looks.get(worker, 0) + 1

    def causes(self, job_seconds: float, stalled: Collection[str] = ()) -> list[str]:
        """The likely causes seen, most telling first; one line saying none was seen when
        nothing stands out."""
        found = []
        stuck = {w: self.held.get(w, 0) for w in sorted(stalled) if self.held.get(w, 0)}
        if stuck:
            found.append(
                "jobs held by a stalled worker ("
                + ", ".join(f"{w} holds {n}" for w, n in stuck.items())
                + "): it made no take and no job-done for the stall bound"
            )
        below = {w: n for w, n in sorted(self.most_held.items()) if 0 < n < self.slots}
        if below and self.queued_looks:
            most = max(below.values())
            found.append(
                f"workers below their declared concurrency: {', '.join(below)} held at most "
                f"{most} {'job' if most == 1 else 'jobs'} at once though --slots is "
                f"{self.slots}, while jobs were queued (a runpod handler without a "
                "concurrency_modifier runs 1 at a time); give --slots as the worker's "
                "concurrency or raise it"
            )
        never = {w for w, n in self.most_held.items() if n == 0}
        idle = sorted(never | {w for w, n in self.idle.items() if n >= IDLE_LOOKS})
        if idle:
            found.append(
                f"workers idle with jobs queued: {', '.join(idle)} held no job and had no take "
                "waiting while jobs were queued"
            )
        everyone = [self.full_looks.get(w, 0) for w in self.worker_ids]
        if self.queued_looks and everyone and min(everyone) == self.queued_looks:
            found.append(
                f"every worker ran its {self.slots} slots full while jobs were queued: the jobs "
                f"take longer than --job-seconds {job_seconds:g}, which the timeout is sized from"
            )
        if not found:
            found.append(
                f"none seen ({self.queued} jobs queued, "
                f"{sum(self.held.values())} held by the workers at the last look)"
            )
        return found
