"""`SdkTakeAheadPolicy`: the take-ahead pull request to runpod-python, on 1.12.0's own loops
(policy_sdk112): the 0.1 s pickup, the 1 s re-check when full, a slot held until its job-done
POST returns. Stdlib only, no clock but the running loop's.

The pull request's rules, as its description states them (design.md section 5, "model"; the
reference table of section 2 is its benchmark):

- a take-ahead take is triggered when a take came back full and every slot is then busy: it asks
  for K (`take_ahead`) jobs and holds them in a buffer;
- one buffer at a time: no take-ahead while held jobs wait; a take that comes back short asks
  only for free slots after it (1.12.0's re-check, until a take comes back full again);
- held jobs move into slots as slots free, at the runner's pickup;
- a stop signal for a held job drops it (no job-done); on shutdown held jobs still run and post;
- with refresh_worker (the worker stops after its first job) take-ahead is off.

What the description leaves to the implementation, chosen here: the taker waits for the buffer
to empty rather than re-checking every 1 s (a 1 s re-check would put a second between batches,
and the branch measured within 0.7 % of the ideal take-ahead on the deep 1-worker row);
held jobs are the worker's jobs (the heartbeat's job_id, job_in_progress=1) but, like
1.12.0's progress, count against the slots only once.
"""

from __future__ import annotations

import asyncio
from collections import deque

from jobbench.workers.policy_base import Job, Link
from jobbench.workers.policy_sdk112 import (
    AS_THE_LOOP_KEEPS_IT,
    FULL_RECHECK_S,
    LoopTiming,
    Sdk112Policy,
)


class SdkTakeAheadPolicy(Sdk112Policy):
    """1.12.0's loops with the take-ahead pull request's buffer of K held jobs."""

    def __init__(
        self,
        link: Link,
        slots: int,
        take_ahead: int,
        *,
        refresh_worker: bool = False,
        timing: LoopTiming = AS_THE_LOOP_KEEPS_IT,
    ) -> None:
        super().__init__(link, slots, timing)
        # refresh_worker: the worker runs one job and is replaced; jobs held for it would wait
        # out its refresh, so the pull request turns take-ahead off.
        self.take_ahead = 0 if refresh_worker else take_ahead
        self.held: deque[Job] = deque()
        self._buffer_empty = asyncio.Event()
        self._buffer_empty.set()
        self._taking_ahead = False  # the take in flight is a take-ahead: its jobs are held

    def job_ids(self) -> list[str]:
        return sorted([*self.progress, *(str(job["id"]) for job in self.held)])

    def occupancy(self) -> int:
        return super().occupancy() + len(self.held)

    def in_progress(self) -> bool:
        return bool(self.progress or self.held)

    async def take_loop(self) -> None:
        last_full = False
        while not self.stopping.is_set():
            need = self.slots - self.occupancy()
            if need > 0:  # free slots: ask for exactly those, as 1.12.0 does
                jobs = await self.fetch(need, self.in_progress())
                last_full = len(jobs) >= need
            elif not (self.take_ahead and last_full):
                await self.pause(FULL_RECHECK_S)  # a short take: 1.12.0's re-check
                continue
            elif self.held:
                await self._buffer_empty.wait()  # one buffer at a time
                continue
            else:
                jobs = await self._take_ahead()
                last_full = len(jobs) >= self.take_ahead
            await asyncio.sleep(0)

    async def _take_ahead(self) -> list[Job]:
        self._taking_ahead = True
        try:
            return await self.fetch(self.take_ahead, True)
        finally:
            self._taking_ahead = False

    def accept(self, jobs: list[Job]) -> None:
        if not self._taking_ahead:
            super().accept(jobs)
        elif jobs:
            self.held.extend(jobs)
            self._buffer_empty.clear()

    def has_waiting(self) -> bool:
        return super().has_waiting() or bool(self.held)

    def next_waiting(self) -> Job:
        if super().has_waiting():
            return super().next_waiting()
        job = self.held.popleft()
        self.progress.add(job["id"])  # in a slot now: 1.12.0's progress until job-done returns
        if not self.held:
            self._buffer_empty.set()
        return job

    def stop_job(self, job_id: str) -> None:
        for job in self.held:
            if job["id"] == job_id:
                self.held.remove(job)  # dropped before it ran: no job-done
                if not self.held:
                    self._buffer_empty.set()
                return
        super().stop_job(job_id)
