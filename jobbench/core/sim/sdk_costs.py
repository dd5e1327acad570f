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
  begin one start apart, a held job starts in a freed slot an end and a start after the one
  before, and four workers' answers and batches queue behind each other. The job cache's take
  sizes follow when its slots free against its 0.1 s tick, so when a batch's slots free
  matters to it as much as how long its jobs take.

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
# each job's start and on each job's end (its job-done round trip included): calibrated so the
# simulated branches of both fixes match the real ones on the seed rows, beside the SDK's own
# CPU per job as the harness measures it, 0.62 ms (docs/simulation.md, "The SDK's own costs").
# An answer's cost grows with its jobs: a fixed 3.5 ms an answer, which fits a burst's full
# takes as well, makes the one-job takes of a steady load cost 4 ms a job.
ANSWER_CPU_PER_JOB_S = 0.00011
JOB_START_CPU_S = 0.0003
JOB_END_CPU_S = 0.00045
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

    async def run(self, seconds: float) -> None:
        """Until `seconds` of this core's time, after what was queued before it, are done."""
        now = asyncio.get_running_loop().time()
        self.free_at = max(now, self.free_at) + seconds
        await asyncio.sleep(self.free_at - now)


class SdkCosts:
    """The SDK's own costs for the workers of one simulated rep: `seed` (the rep's, None for a
    fresh draw) makes every worker's draws the same from run to run."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.core = SharedCore()

    def _draw(self, what: str) -> random.Random:
        return random.Random(f"{what}/{self.seed}") if self.seed is not None else random.Random()

    def timing(self, worker: str) -> DrawnTiming:
        return DrawnTiming(self._draw(f"sdk-loop/{worker}"))

    def between_reps_s(self) -> float:
        """The pause between a rep's last job and the next rep's load: the fake target's own
        steps between reps, and a drawn part of a tick, since in a real run (seconds, in a
        compare the other side's rep between) the runner's tick drifts to any phase."""
        return BETWEEN_REPS_S + self._draw("between-reps").uniform(0.0, PICKUP_S)

    # The worker's CPU (workers/queue_link.py, WorkerCpu), on the core every worker shares.

    async def answer_read(self, jobs: int) -> None:
        await self.core.run(jobs * ANSWER_CPU_PER_JOB_S)

    async def job_started(self) -> None:
        await self.core.run(JOB_START_CPU_S)

    async def jobs_ended(self, jobs: int) -> None:
        await self.core.run(jobs * JOB_END_CPU_S)
