"""An in-process link: the model-worker policies served by a `JobQueue` in the same process,
with direct calls where the model worker makes HTTP requests (http_link.HttpLink). The
queue runs each take's whole life (`await_answer`), so a take or a job-done costs exactly what
the latency model says, and the worker's own steps nothing unless a `WorkerCpu` is given (the
simulator's model of an SDK worker's CPU). With a virtual-time loop
(fake_queue.queue.virtual_clock) as the queue's clock, queue and policies run in virtual time.
No HTTP, no aiohttp.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from fake_queue.api import JobError, JobQueue
from jobbench.workers.policy_base import Job, OnEnd, Run, log
from jobbench.workers.run_job import run_handler, start_bench_runs
from jobbench.workers.worker_cpu import WorkerCpu


def _never() -> bool:
    return False  # in-process, a take's client leaves only by being cancelled


class QueueLink:
    """policy_base.Link for worker `worker` of `queue`."""

    stop_enabled = True
    answer_arrived: float | None = None  # in process: the answer is read as it is given

    def __init__(
        self,
        queue: JobQueue,
        worker: str,
        cpu: WorkerCpu | None = None,
    ) -> None:
        self.queue = queue
        self.worker = worker
        self.cpu = cpu  # None: the worker's steps cost no time

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        take = self.queue.take(self.worker, count, in_progress)
        if on_sent is not None:
            on_sent()  # it has reached the queue
        jobs = await self.queue.await_answer(take, _never)
        if jobs and self.cpu is not None:
            await self.cpu.answer_read(len(jobs))
        return [job.payload() for job in jobs or ()]

    async def stops(self) -> list[str]:
        return await self.queue.next_stops(self.worker)

    async def process(self, job: Job) -> None:
        if self.cpu is not None:
            await self.cpu.job_started()
        await self.post_done(str(job["id"]), await self.handle(job))

    def handle(self, job: Job, started: float | None = None) -> Coroutine[Any, Any, dict[str, Any]]:
        return run_handler(job, self.worker, started)  # not awaited here: one frame less a job

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> Sequence[Run]:
        return start_bench_runs(batch, self.worker, on_end)

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        """job-done, answered after the done latency; refused (404), it is logged as lost."""
        await self.post_done_many([(job_id, result)])

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        """All in one call: the queue takes a batch as concurrent POSTs arriving together."""
        if self.cpu is not None:
            await self.cpu.jobs_ended(len(results))
        outcomes = await self.queue.job_done_many(self.worker, results)
        if self.cpu is not None:
            await self.cpu.reply_read()
        for (job_id, _), outcome in zip(results, outcomes):
            if isinstance(outcome, JobError):
                log(f"job-done for {job_id} answered {outcome.status}; result lost")
