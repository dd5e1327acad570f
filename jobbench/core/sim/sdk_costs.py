"""What a real SDK worker has that the simulator's exact loop does not, added to the SDK-based
model policies (policies.SDK_BASED: sdk-1.12 and the two fixes on its loops) when they run in
virtual time (docs/simulation.md, "The SDK's own costs").

- **Its loop's timing.** The SDK runs on asyncio's stock loop, whose selector waits in whole
  milliseconds (`selectors.EpollSelector` rounds a timeout up to the next one), so each timed
  wait (the 0.1 s pickup, the 1 s re-check, the job cache's ticks and back-offs) ends 0-1 ms
  late. And the runner's 0.1 s tick stands anywhere against a burst, which reaches a real
  worker at a moment its start did not choose; in virtual time every worker starts with the
  rep. Both are drawn per worker from the rep's seed. Without them the job cache, whose take
  sizes follow who comes first to a 0.1 s tick, would always take one path of the several a
  real worker takes (docs/fixes.md, "Real branches").
- **Its CPU.** Reading a take's answer, starting each job and ending each job cost the
  worker's process CPU, and the workers share one core, as the fake target's CPU plan gives
  them on the 2-core machine the figures come from (procs/cpu_plan.py). So a batch's jobs
  begin one start apart and post their job-dones one end apart, and four workers' answers and
  batches queue behind each other.
- **Its loop's order.** A timed wait's continuation, a take's answer (1.12.0's wait_for runs
  the take as a task of its own, a loop turn more) and a job-done's reply wait for the work
  the worker's loop had queued, the wait first: a tick that comes due among a batch's ends
  finds none of their slots free yet, the next finds them all. The job cache's take sizes
  follow when its slots free against its 0.1 s tick, so when a batch's slots free matters to
  it as much as how long its jobs take.

The ideal policies (drain, take-ahead) get none of this: they are the lower bound the reference
table's exact figures describe.
"""

from __future__ import annotations

import asyncio
import random

from jobbench.workers.policy_sdk112 import PICKUP_S, LoopTiming

# asyncio's stock loop on Linux waits in whole milliseconds, so a timed wait ends up to this late.
LOOP_LATE_MAX_S = 0.001
# CPU the SDK worker's core spends on each job of a take's answer (read, decoded, queued), on
# each job's start and on each job's end (its handler's return to its job-done POST sent, and
# the POST's reply read), as timestamps inside the real job-cache branch put them (1 x 512 jobs
# of 0.5 s, 2026-12-06): a 50-job answer's first job started 0.7 ms after it arrived, and a
# batch's consecutive starts, handler returns and slot frees came a median 45, 196 and 60 us
# apart (docs/simulation.md, "The SDK's own costs"). An answer's cost grows with its jobs, so
# the one-job takes of a steady load cost little.
ANSWER_CPU_PER_JOB_S = 0.000014
JOB_START_CPU_S = 0.000045
JOB_END_CPU_S = 0.000256
# The fake target's steps between a rep's last job and the next one's load (the events read,
# the rep saved, every worker polling again, the queue reset): a few tenths of a second.
BETWEEN_REPS_S = 0.3


class DrawnTiming(LoopTiming):
    """One simulated SDK worker's loop: its waits late by a uniform 0-1 ms, its runner's tick at
    a uniform phase."""

    def __init__(self, draw: random.Random) -> None:
        self.draw = draw

    def late_s(self) -> float:
        return self.draw.uniform(0.0, LOOP_LATE_MAX_S)

    def first_tick_s(self) -> float:
        return self.draw.uniform(0.0, PICKUP_S)


class SharedCore:
    """The core the workers share, in virtual time: work queues for it first come, first
    served."""

    def __init__(self) -> None:
        self.free_at = 0.0

    def book(self, now: float, seconds: float) -> float:
        """`seconds` of this core's time, after what was queued before it: when they are done."""
        self.free_at = max(now, self.free_at) + seconds
        return self.free_at


class SdkWorker(DrawnTiming):
    """One simulated SDK worker: its loop's timing, and its CPU (workers/worker_cpu.py,
    WorkerCpu) on the core every worker shares. Its loop goes on from a timed wait, and reads a
    job-done's reply, only once the work it had queued is done, the wait first: a real
    worker's loop, busy with a batch's ends, gets to its tick after them and to their replies
    after its tick, so the tick finds none of their slots free yet (docs/simulation.md, "Its
    loop's order")."""

    def __init__(self, draw: random.Random, core: SharedCore) -> None:
        super().__init__(draw)
        self.core = core
        self.busy_until = 0.0  # when the CPU work this worker queued is done

    async def answer_read(self, jobs: int) -> None:
        await self._run(jobs * ANSWER_CPU_PER_JOB_S)

    async def job_started(self) -> None:
        await self._run(JOB_START_CPU_S)

    async def jobs_ended(self, jobs: int) -> None:
        await self._run(jobs * JOB_END_CPU_S)

    async def turn(self) -> None:
        await self._idle()

    async def reply_read(self) -> None:
        await self._idle()
        # A timed wait that came due with it goes first: a tick's continuation is one step of
        # its task, while a reply takes the SDK's job-done several (the response read, then
        # released) before the slot frees.
        await asyncio.sleep(0)

    async def _idle(self) -> None:
        loop = asyncio.get_running_loop()
        while (busy_s := self.busy_until - loop.time()) > 0:
            await asyncio.sleep(busy_s)

    async def _run(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        done_at = self.core.book(loop.time(), seconds)
        self.busy_until = max(self.busy_until, done_at)
        await asyncio.sleep(done_at - loop.time())


class SdkCosts:
    """The SDK's own costs for the workers of one simulated rep: `seed` (the rep's, None for a
    fresh draw) makes every worker's draws the same from run to run."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.core = SharedCore()

    def _draw(self, what: str) -> random.Random:
        return random.Random(f"{what}/{self.seed}") if self.seed is not None else random.Random()

    def worker(self, name: str) -> SdkWorker:
        return SdkWorker(self._draw(f"sdk-loop/{name}"), self.core)

    def between_reps_s(self) -> float:
        """The pause between a rep's last job and the next rep's load: the fake target's own
        steps between reps, and a drawn part of a tick, since in a real run (seconds, in a
        compare the other side's rep between) the runner's tick drifts to any phase."""
        return BETWEEN_REPS_S + self._draw("between-reps").uniform(0.0, PICKUP_S)
