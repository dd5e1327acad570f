"""A job in progress on its worker: stream chunks come in (`add_stream`), stop signals go out
(`next_stops`, the job-stop long-poll) when the job is cancelled or its execution timeout fires.
Pure asyncio; a layer of JobQueue (fake_queue.queue.job_queue) on fake_queue.queue.ledger.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fake_queue.protocol import IN_PROGRESS, TIMED_OUT
from fake_queue.queue.jobs import Job, JobError
from fake_queue.queue.ledger import QueueLedger


class RunningJobs(QueueLedger):
    async def job_stream(self, worker: str, job_id: str, chunk: Any) -> str:
        """`add_stream`, answered after the done latency."""
        outcome = self.add_stream(worker, job_id, chunk)
        await asyncio.sleep(self.sampler.done())
        return outcome

    def add_stream(self, worker: str, job_id: str, chunk: Any) -> str:
        self.worked(worker)
        job = self.jobs.get(job_id)
        if job is None or worker not in job.handed_to:
            raise JobError(404, f"job {job_id!r} was never handed to worker {worker!r}")
        if job.status != IN_PROGRESS or job.worker != worker:
            self.events.append(
                {
                    "t": self.clock.now_ns(),
                    "ev": "ignored",
                    "job": job_id,
                    "worker": worker,
                    "status": job.status,
                }
            )
            return "ignored"
        job.stream.append(chunk)
        return "stream"

    def _time_out(self, job: Job) -> None:
        """The execution timeout's timer (set at delivery): stop the job and end it."""
        if job.status != IN_PROGRESS:
            return
        job.timeout_handle = None
        self._signal_stop(job)
        self._finish(job, TIMED_OUT, self.clock.now_ns(), reason="executionTimeout")

    def _signal_stop(self, job: Job) -> None:
        record = self.workers.get(job.worker) if job.worker is not None else None
        if record is None:
            return
        record.stops.append(job.id)
        if record.stop_waiter is not None and not record.stop_waiter.done():
            record.stop_waiter.set_result(None)

    async def next_stops(self, worker: str, hold_s: float | None = None) -> list[str]:
        """Job-stop long-poll: the ids this worker must stop, or [] after the hold (default:
        the latency model's)."""
        if hold_s is None:
            hold_s = self.sampler.hold()
        record = self.seen(worker)
        if not record.stops and self.fleet is not None and self.fleet.refuses(worker):
            return []  # being stopped: an SDK worker exits only once its long-polls return
        if not record.stops:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            record.stop_waiter = waiter
            try:
                await asyncio.wait_for(waiter, hold_s)
            except TimeoutError:
                return []
            finally:
                if record.stop_waiter is waiter:
                    record.stop_waiter = None
        stops, record.stops = record.stops, []
        at = self.clock.now_ns()
        for job_id in stops:
            self.events.append({"t": at, "ev": "stop", "job": job_id, "worker": worker})
        return stops
