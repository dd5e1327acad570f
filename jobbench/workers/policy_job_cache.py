"""`JobCachePolicy`: runpod-python pull request #429 ("job caching and async optimizations to
RunPod scaler", open, unmerged; head 79126e6), its JobScaler on 1.12.0's own parts
(policy_sdk112: the local queue, the count of what a worker has, a slot held until its job-done
POST returns). Stdlib only, no clock but the running loop's.

Its rules, each from runpod/serverless/modules/rp_scale.py at the pull request's head:

- a cache of up to 100 jobs beside the local queue (JobCache, lines 49-72; size 100, line 102);
  cached jobs are not in JobsProgress (only `_put_job` adds, lines 300-306), so the heartbeat
  and job_in_progress do not count them;
- when slots are free (need = slots - (queue + progress), lines 221-229 and 238), the cache
  serves first (lines 246-254), and a take goes out only for what it could not: asking
  `min(3 x need, 50)` (line 257); the first `need` jobs it brings go to the queue, the rest to
  the cache (lines 276-283). So a take finds the cache empty and it never holds more than 49:
  the deque's bound of 100 never drops a job;
- full, it re-checks every 0.1 s (lines 240-242), not 1.12.0's 1 s;
- an empty take backs off 0.1 x 2^n s, at most 5 s, n counting empty takes in a row (lines
  266-273); an error or a timeout does not (lines 287-298);
- the runner waits up to 0.1 s on the queue for each job it starts (asyncio.wait_for, as
  #429 has it), then up to 0.1 s for a slot to free, and sleeps 0.01 s when it runs nothing
  (run_jobs and _get_job, lines 308-358);
- on shutdown the fetcher stops and the runner runs what is queued (line 328): cached jobs are
  not run, and go back to the server only when it times their claim out.

What the pull request does not have, taken from 1.12.0 as the branch would be rebased on it:
the job-stop poll (#510; a stop reaches only a started job, as in 1.12.0) and its error pause.
"""

from __future__ import annotations

import asyncio
from collections import deque

from jobbench.workers.policy_base import Job, Link, log
from jobbench.workers.policy_sdk112 import AS_THE_LOOP_KEEPS_IT, LoopTiming, Sdk112Policy

CACHE_MAX = 100  # rp_scale.py:52, 102
FETCH_FACTOR = 3  # rp_scale.py:257: fetch up to 3x needed...
FETCH_MAX = 50  # ...at most 50
FULL_TICK_S = 0.1  # rp_scale.py:241: the re-check when full
EMPTY_BACKOFF_S = 0.1  # rp_scale.py:269: 0.1 x 2^n after n empty takes in a row...
EMPTY_BACKOFF_MAX_S = 5.0  # ...at most 5 s
GET_WAIT_S = 0.1  # rp_scale.py:311: the runner's wait on the queue for a job
SLOT_WAIT_S = 0.1  # rp_scale.py:347: its wait for a slot to free
IDLE_S = 0.01  # rp_scale.py:354: its sleep with nothing running


def fetch_count(need: int) -> int:
    """How many jobs a take asks for when `need` slots are free and the cache is empty."""
    return min(need * FETCH_FACTOR, FETCH_MAX)


def empty_backoff_s(empty_in_a_row: int) -> float:
    """The pause after the `empty_in_a_row`-th empty take in a row (the first: 0.2 s)."""
    return min(EMPTY_BACKOFF_S * float(2**empty_in_a_row), EMPTY_BACKOFF_MAX_S)


class JobCachePolicy(Sdk112Policy):
    """#429's JobScaler: a cache of over-fetched jobs, a 0.1 s tick when full."""

    def __init__(self, link: Link, slots: int, timing: LoopTiming = AS_THE_LOOP_KEEPS_IT) -> None:
        super().__init__(link, slots, timing)
        self.cache: deque[Job] = deque(maxlen=CACHE_MAX)
        self._need = 0  # slots the take in flight is for; the rest of its jobs are cached

    async def take_loop(self) -> None:
        empty_in_a_row = 0
        while not self.stopping.is_set():
            need = self.slots - self.occupancy()
            if need <= 0:
                await self.pause(FULL_TICK_S)
                continue
            cached = [self.cache.popleft() for _ in range(min(need, len(self.cache)))]
            super().accept(cached)
            need -= len(cached)
            if need <= 0:
                continue
            self._need = need
            jobs = await self.try_fetch(fetch_count(need), bool(self.progress))
            if jobs == []:
                empty_in_a_row += 1
                await self.pause(empty_backoff_s(empty_in_a_row))
                continue
            if jobs:
                empty_in_a_row = 0
            await asyncio.sleep(0)

    def accept(self, jobs: list[Job]) -> None:
        super().accept(jobs[: self._need])
        self.cache.extend(jobs[self._need :])

    async def run_jobs(self) -> None:
        tasks: set[asyncio.Task[None]] = set()
        while not self.taker_done() or self.has_waiting():
            while len(tasks) < self.slots:
                job = await self._next_queued()
                if job is None:
                    break
                tasks.add(self.start(job))
            if tasks:
                _, tasks = await asyncio.wait(
                    tasks, timeout=self.waited(SLOT_WAIT_S), return_when=asyncio.FIRST_COMPLETED
                )
            else:
                await self.pause(IDLE_S)
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.cache:
            log(f"shutdown: {len(self.cache)} cached jobs not run (#429 drops its cache)")

    async def _next_queued(self) -> Job | None:
        # As #429 writes it: on Python 3.11 wait_for runs the get as a task of its own, so the
        # runner takes a loop turn a job, and the jobs it starts begin over several turns, the
        # ones started before taking their first steps in between (on 3.12 and later wait_for
        # gets inline, here as in the branch). A batch's jobs then end over a few milliseconds,
        # as the branch's do, and which take sizes follow depends on that (docs/fixes.md,
        # "Real branches").
        try:
            return await asyncio.wait_for(self.queue.get(), self.waited(GET_WAIT_S))
        except TimeoutError:
            return None
