"""`Sdk112Policy`: runpod 1.12.0's JobScaler loops, ported (docs/protocol.md section 2). Stdlib
only, no clock but the running loop's."""

from __future__ import annotations

import asyncio

from jobbench.workers.policy_base import Job, Link, Policy, run_logged

FULL_RECHECK_S = 1.0  # 1.12.0 get_jobs: sleep(1) while no slot is free
PICKUP_S = 0.1  # 1.12.0 run_jobs: FIRST_COMPLETED timeout and idle sleep


class Sdk112Policy(Policy):
    """runpod 1.12.0 JobScaler: re-check every 1 s when full; 0.1 s pickup from a local queue."""

    error_pause_s = 0.0  # 1.12.0 re-takes at once after an error

    def __init__(self, link: Link, slots: int) -> None:
        super().__init__(link, slots)
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.progress: set[str] = set()  # JobsProgress: from take until job-done returned
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def job_ids(self) -> list[str]:
        return sorted(self.progress)

    async def take_loop(self) -> None:
        while not self.stopping.is_set():
            # Taken jobs count twice (queue and progress) until run_jobs picks them up.
            need = self.slots - (self.queue.qsize() + len(self.progress))
            if need <= 0:
                await asyncio.sleep(FULL_RECHECK_S)
                continue
            await self.fetch(need, bool(self.progress))
            await asyncio.sleep(0)

    def accept(self, jobs: list[Job]) -> None:
        for job in jobs:
            self.queue.put_nowait(job)
            self.progress.add(job["id"])

    async def run_jobs(self) -> None:
        tasks: set[asyncio.Task[None]] = set()
        while not self.taker_done() or not self.queue.empty():
            while len(tasks) < self.slots and not self.queue.empty():
                job = self.queue.get_nowait()
                task = asyncio.create_task(self._handle(job))
                tasks.add(task)
                self.tasks[job["id"]] = task
            if tasks:
                done, _ = await asyncio.wait(
                    tasks, timeout=PICKUP_S, return_when=asyncio.FIRST_COMPLETED
                )
                tasks.difference_update(done)
            else:
                await asyncio.sleep(PICKUP_S)
        await asyncio.gather(*tasks, return_exceptions=True)

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
