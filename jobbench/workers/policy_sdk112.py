"""`Sdk112Policy`: runpod 1.12.0's JobScaler loops, ported (docs/protocol.md section 2), and the
parts of them the fixes built on it share (policy_sdk_take_ahead, policy_job_cache): the count of
what a worker has, the local queue and its pickup, a slot held until the job-done POST returns.
Stdlib only, no clock but the running loop's."""

from __future__ import annotations

import asyncio

from jobbench.workers.policy_base import Job, Link, Policy, run_logged

FULL_RECHECK_S = 1.0  # 1.12.0 get_jobs: sleep(1) while no slot is free
PICKUP_S = 0.1  # 1.12.0 run_jobs: FIRST_COMPLETED timeout and idle sleep


class LoopTiming:
    """How the SDK's event loop keeps its timed waits. In a worker process these are the
    loop's own: a real loop is as late as it is, and the runner's tick stands wherever the
    worker's start put it. The simulator's loop is exact and starts every worker with the burst,
    so it passes its own (core/sim/sdk_costs.py) for what a real worker adds."""

    def late_s(self) -> float:
        """How much later than asked a timed wait ends."""
        return 0.0

    def first_tick_s(self) -> float:
        """How long the runner's first idle wait lasts: its tick's phase."""
        return PICKUP_S

    async def turn(self) -> None:
        """Until the loop runs a timed wait's continuation, once the wait is over: a real loop
        runs it after the work it had ready first, in its own order."""


AS_THE_LOOP_KEEPS_IT = LoopTiming()


class Sdk112Policy(Policy):
    """runpod 1.12.0 JobScaler: re-check every 1 s when full; 0.1 s pickup from a local queue."""

    error_pause_s = 0.0  # 1.12.0 re-takes at once after an error
    take_as_a_task = True  # 1.12.0 get_jobs: asyncio.wait_for(self.jobs_fetcher(...), ...)

    def __init__(self, link: Link, slots: int, timing: LoopTiming = AS_THE_LOOP_KEEPS_IT) -> None:
        super().__init__(link, slots)
        self.timing = timing
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.progress: set[str] = set()  # JobsProgress: from take until job-done returned
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def job_ids(self) -> list[str]:
        return sorted(self.progress)

    def waited(self, seconds: float) -> float:
        """A timed wait of the SDK's, as its loop keeps it."""
        return seconds + self.timing.late_s()

    async def pause(self, seconds: float) -> None:
        """A timed sleep of the SDK's, as its loop keeps it: over as late as the loop is, and
        gone on from once the loop has done what it had ready first."""
        await asyncio.sleep(self.waited(seconds))
        await self.timing.turn()

    async def answered(self) -> None:
        # Through wait_for the taker goes on from its answer a loop turn later, after the work
        # the loop had ready (a batch's job ends), as from a timed wait; the simulator's
        # timing keeps that turn (core/sim/sdk_costs.py), a real loop has it already.
        await self.timing.turn()

    def occupancy(self) -> int:
        """What 1.12.0 counts against the slots: taken jobs count twice (queue and progress)
        until run_jobs picks them up."""
        return self.queue.qsize() + len(self.progress)

    async def take_loop(self) -> None:
        while not self.stopping.is_set():
            need = self.slots - self.occupancy()
            if need <= 0:
                await self.pause(FULL_RECHECK_S)
                continue
            await self.fetch(need, bool(self.progress))
            await asyncio.sleep(0)

    def accept(self, jobs: list[Job]) -> None:
        for job in jobs:
            self.queue.put_nowait(job)
            self.progress.add(job["id"])

    def has_waiting(self) -> bool:
        """A job is waiting for a slot (in 1.12.0, in the local queue)."""
        return not self.queue.empty()

    def next_waiting(self) -> Job:
        """The job that gets the next free slot."""
        return self.queue.get_nowait()

    async def run_jobs(self) -> None:
        tasks: set[asyncio.Task[None]] = set()
        idle_s = self.waited(self.timing.first_tick_s())
        while not self.taker_done() or self.has_waiting():
            while len(tasks) < self.slots and self.has_waiting():
                tasks.add(self.start(self.next_waiting()))
            if tasks:
                done, _ = await asyncio.wait(
                    tasks, timeout=self.waited(PICKUP_S), return_when=asyncio.FIRST_COMPLETED
                )
                tasks.difference_update(done)
            else:
                await asyncio.sleep(idle_s)
                idle_s = self.waited(PICKUP_S)
        await asyncio.gather(*tasks, return_exceptions=True)

    def start(self, job: Job) -> asyncio.Task[None]:
        """Run `job` in a slot of its own; the slot frees once its job-done POST returned."""
        task = asyncio.create_task(self._handle(job))
        self.tasks[job["id"]] = task
        return task

    async def _handle(self, job: Job) -> None:
        try:
            await run_logged(self.link, job)
        finally:
            self.progress.discard(job["id"])
            self.tasks.pop(job["id"], None)

    def stop_job(self, job_id: str) -> None:
        # As in 1.12.0, only a started job can be stopped; one still queued locally runs later.
        task = self.tasks.get(job_id)
        if task is not None:
            task.cancel()
