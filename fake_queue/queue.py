"""Job state machine, waiting takes and the event log. Pure asyncio: no HTTP in here.

Every take claims its jobs at one instant (FIFO) and is answered after a latency
(docs/latency-model.md). The queue owns a take's whole life: `take` claims on arrival,
`await_answer` (fake_queue.takes) holds it, sleeps until `take.answer_at_ns`, then delivers,
or abandons it when its client went away; claimed jobs then go back to the front of the
queue. Every time read goes through the injected clock (fake_queue.clock; real time by
default), and every timer is a delay on the running loop, so on a virtual-time loop
(fake_queue.virtual_clock) the same queue runs in virtual time.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter, deque
from collections.abc import Callable, Iterable
from typing import Any

from fake_queue import takes
from fake_queue.clock import MONOTONIC, Clock
from fake_queue.jobs import (
    DEFAULT_TTL_S,
    WORKER_SEEN_GRACE_S,
    Event,
    Job,
    JobError,
    Take,
    WorkerSeen,
)
from fake_queue.latency import LatencySampler
from fake_queue.protocol import (
    CANCELLED,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    IN_QUEUE,
    TERMINAL,
    TIMED_OUT,
)

__all__ = [
    "Job",
    "JobError",
    "JobQueue",
    "Take",
    "WorkerSeen",
]


class JobQueue:
    def __init__(self, sampler: LatencySampler, clock: Clock = MONOTONIC) -> None:
        self.sampler = sampler
        self.clock = clock
        self.jobs: dict[str, Job] = {}
        self.queued: deque[Job] = deque()
        self.waiting: deque[Take] = deque()
        self.workers: dict[str, WorkerSeen] = {}
        self.events: list[Event] = []
        self.events_base = 0
        self.retried = 0
        # jobs per status, kept as they move: /_bench/counts must not walk 100k jobs per poll
        self.tally: Counter[str] = Counter()
        self._job_ids = itertools.count(1)
        self._take_ids = itertools.count(1)

    # ---- event log -------------------------------------------------------------------------
    def _log(self, event: Event) -> None:
        self.events.append(event)

    def events_since(self, cursor: int, limit: int = 50_000) -> tuple[list[Event], int]:
        """Events from absolute index `cursor`; returns them and the next cursor."""
        start = max(cursor - self.events_base, 0)
        chunk = self.events[start : start + limit]
        return chunk, self.events_base + start + len(chunk)

    # ---- client side -----------------------------------------------------------------------
    def submit(
        self,
        payload: Any,
        *,
        extra: dict[str, Any] | None = None,
        execution_timeout_s: float | None = None,
        ttl_s: float | None = None,
    ) -> Job:
        return self.submit_many(
            [payload], extra=extra, execution_timeout_s=execution_timeout_s, ttl_s=ttl_s
        )[0]

    def submit_many(
        self,
        payloads: Iterable[Any],
        *,
        extra: dict[str, Any] | None = None,
        execution_timeout_s: float | None = None,
        ttl_s: float | None = None,
    ) -> list[Job]:
        """Enqueue jobs at one instant, then wake waiting takes oldest first."""
        at = self.clock.now_ns()
        jobs = []
        for payload in payloads:
            job = Job(
                id=f"job-{next(self._job_ids)}",
                input=payload,
                submitted_ns=at,
                extra=dict(extra or {}),
                execution_timeout_s=execution_timeout_s,
                ttl_s=DEFAULT_TTL_S if ttl_s is None else ttl_s,
            )
            self.jobs[job.id] = job
            self.tally[IN_QUEUE] += 1
            self.queued.append(job)
            self._log({"t": at, "ev": "submit", "job": job.id})
            jobs.append(job)
        self._wake_waiting(at)
        return jobs

    def get(self, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or (job.status in TERMINAL and job.expired(self.clock.now_ns())):
            raise JobError(404, f"no job with id {job_id!r} (unknown, or its ttl expired)")
        if job.status == IN_QUEUE and job.expired(self.clock.now_ns()):
            self._expire(job)
            raise JobError(404, f"job {job_id!r} expired (ttl) before a worker took it")
        return job

    def cancel(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.status in TERMINAL:
            return job
        at = self.clock.now_ns()
        if job.status == IN_QUEUE:
            if not self._unclaim(job):
                self.queued.remove(job)
        else:
            self._signal_stop(job)
        self._finish(job, CANCELLED, at, reason="cancel")
        return job

    def retry(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.status not in (FAILED, TIMED_OUT):
            raise JobError(
                400, f"job {job_id!r} is {job.status}; only FAILED or TIMED_OUT jobs can be retried"
            )
        at = self.clock.now_ns()
        self._move(job, IN_QUEUE)
        job.worker, job.output, job.error = None, None, None
        job.delivered_ns = job.done_ns = None
        job.retries += 1
        self.retried += 1
        self.queued.append(job)
        self._log({"t": at, "ev": "retry", "job": job.id})
        self._wake_waiting(at)
        return job

    def purge(self) -> int:
        """Remove every queued job no take has claimed yet; they end CANCELLED."""
        at = self.clock.now_ns()
        removed = list(self.queued)
        self.queued.clear()
        for job in removed:
            self._finish(job, CANCELLED, at, reason="purge")
        return len(removed)

    async def wait_terminal(self, job: Job, timeout_s: float) -> None:
        if job.status in TERMINAL:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        job.watchers.append(future)
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except asyncio.TimeoutError:
            pass
        finally:
            if future in job.watchers:
                job.watchers.remove(future)

    # ---- worker side -----------------------------------------------------------------------
    def seen(self, worker: str) -> WorkerSeen:
        at = self.clock.now_ns()
        record = self.workers.get(worker)
        if record is None:
            record = self.workers[worker] = WorkerSeen(at)
        record.last_seen_ns = at
        return record

    def take(
        self, worker: str, asked: int, job_in_progress: bool = False, arrived_ns: int | None = None
    ) -> Take:
        """A take arrives (at `arrived_ns`, default now): claim queued jobs now, or wait for
        the next arrival."""
        at = self.clock.now_ns() if arrived_ns is None else arrived_ns
        take = Take(
            id=next(self._take_ids),
            worker=worker,
            asked=asked,
            job_in_progress=job_in_progress,
            arrived_ns=at,
            claimed=asyncio.get_running_loop().create_future(),
        )
        self.seen(worker).waiting_takes += 1
        if self._claim(take, at):
            take.kind = "queued"
            take.answer_at_ns = at + int(self.sampler.take() * 1e9)
        else:
            self.waiting.append(take)
        return take

    def _claim(self, take: Take, at: int) -> bool:
        while self.queued and len(take.jobs) < take.asked:
            job = self.queued.popleft()
            if job.expired(at):
                self._expire(job)
                continue
            job.take = take
            take.jobs.append(job)
            self._log(
                {"t": at, "ev": "claim", "job": job.id, "take": take.id, "worker": take.worker}
            )
        if take.jobs and not take.claimed.done():
            take.claimed.set_result(None)
        return bool(take.jobs)

    def _wake_waiting(self, at: int) -> None:
        while self.queued and self.waiting:
            take = self.waiting.popleft()
            if take.gone:
                continue
            if not self._claim(take, at):  # every queued job had expired
                self.waiting.appendleft(take)
                return
            take.kind = "woken"
            take.answer_at_ns = at + int(self.sampler.wake() * 1e9)

    async def await_answer(
        self,
        take: Take,
        client_gone: Callable[[], bool],
        on_claimed: Callable[[list[Job]], None] | None = None,
    ) -> list[Job] | None:
        """The rest of a take's life (fake_queue.takes.await_answer): the jobs delivered, [] if
        every claimed one was cancelled meanwhile, None if answered without (hold ran out,
        client gone). Cancelled, it abandons the take and re-raises."""
        return await takes.await_answer(self, take, client_gone, on_claimed)

    def give_up_waiting(self, take: Take) -> None:
        """The hold ran out with nothing claimed: the take will be answered 204."""
        if take in self.waiting:
            self.waiting.remove(take)
        take.answer_at_ns = self.clock.now_ns()
        self._settle(take)

    def deliver(self, take: Take) -> list[Job]:
        """The answer is about to go out: its jobs are now IN_PROGRESS on that worker."""
        at = self.clock.now_ns()
        record = self.seen(take.worker)
        delivered = list(take.jobs)
        for job in delivered:
            job.take = None
            self._move(job, IN_PROGRESS)
            job.worker = take.worker
            job.delivered_ns = at
            job.handed_to.add(take.worker)
            record.held.add(job.id)
            self._log(
                {"t": at, "ev": "deliver", "job": job.id, "take": take.id, "worker": take.worker}
            )
            if job.execution_timeout_s is not None:
                job.timeout_handle = asyncio.get_running_loop().call_later(
                    job.execution_timeout_s, self._time_out, job
                )
        self._settle(take)
        return delivered

    def abandon(self, take: Take) -> None:
        """The take's client went away: it keeps nothing; claimed jobs return to the front."""
        take.gone = True
        if take.settled:
            return
        if take in self.waiting:
            self.waiting.remove(take)
        at = self.clock.now_ns()
        for job in reversed(take.jobs):
            job.take = None
            self.queued.appendleft(job)
            self._log(
                {"t": at, "ev": "requeue", "job": job.id, "take": take.id, "worker": take.worker}
            )
        take.jobs = []
        take.kind = "gone"
        take.answer_at_ns = at
        self._settle(take)
        self._wake_waiting(at)

    def undeliver(self, take: Take, jobs: list[Job]) -> None:
        """The answer could not be written: the delivered jobs go back to the front."""
        at = self.clock.now_ns()
        record = self.seen(take.worker)
        for job in reversed(jobs):
            if job.status != IN_PROGRESS or job.worker != take.worker:
                continue
            if job.timeout_handle is not None:
                job.timeout_handle.cancel()
            self._move(job, IN_QUEUE)
            job.worker, job.delivered_ns = None, None
            record.held.discard(job.id)
            self.queued.appendleft(job)
            self._log(
                {"t": at, "ev": "requeue", "job": job.id, "take": take.id, "worker": take.worker}
            )
        self._wake_waiting(at)

    def _settle(self, take: Take) -> None:
        if take.settled:
            return
        take.settled = True
        record = self.workers.get(take.worker)
        if record is not None:
            record.waiting_takes -= 1
        # t: when the answer went out; due: when the latency model meant it to (timer fidelity).
        self._log(
            {
                "t": self.clock.now_ns(),
                "ev": "take",
                "take": take.id,
                "worker": take.worker,
                "asked": take.asked,
                "got": len(take.jobs),
                "arrived": take.arrived_ns,
                "due": take.answer_at_ns,
                "kind": take.kind,
                "in_progress": take.job_in_progress,
            }
        )

    def finish(
        self, worker: str, job_id: str, body: dict[str, Any], arrived_ns: int | None = None
    ) -> str:
        """A job-done POST (arrived at `arrived_ns`, default now). Returns what it was: done,
        progress or ignored (404 raises)."""
        at = self.clock.now_ns() if arrived_ns is None else arrived_ns
        self.seen(worker)
        job = self.jobs.get(job_id)
        if job is None or worker not in job.handed_to:
            raise JobError(404, f"job {job_id!r} was never handed to worker {worker!r}")
        if job.status != IN_PROGRESS or job.worker != worker:
            self._log(
                {"t": at, "ev": "ignored", "job": job_id, "worker": worker, "status": job.status}
            )
            return "ignored"
        if body.get("status") == IN_PROGRESS:
            job.progress = body.get("output")
            self._log({"t": at, "ev": "progress", "job": job_id, "worker": worker})
            return "progress"
        job.output = body.get("output")
        job.error = body.get("error")
        self._finish(job, FAILED if "error" in body else COMPLETED, at)
        return "done"

    async def job_done(
        self, worker: str, job_id: str, body: dict[str, Any], arrived_ns: int | None = None
    ) -> str:
        """`finish`, answered after the done latency (the job counts as done on arrival)."""
        outcome = self.finish(worker, job_id, body, arrived_ns)
        await asyncio.sleep(self.sampler.done())
        return outcome

    async def job_stream(self, worker: str, job_id: str, chunk: Any) -> str:
        """`add_stream`, answered after the done latency."""
        outcome = self.add_stream(worker, job_id, chunk)
        await asyncio.sleep(self.sampler.done())
        return outcome

    def add_stream(self, worker: str, job_id: str, chunk: Any) -> str:
        job = self.jobs.get(job_id)
        if job is None or worker not in job.handed_to:
            raise JobError(404, f"job {job_id!r} was never handed to worker {worker!r}")
        if job.status != IN_PROGRESS or job.worker != worker:
            self._log(
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

    def _finish(self, job: Job, status: str, at: int, reason: str | None = None) -> None:
        if job.timeout_handle is not None:
            job.timeout_handle.cancel()
            job.timeout_handle = None
        if job.worker is not None and job.worker in self.workers:
            self.workers[job.worker].held.discard(job.id)
        self._move(job, status)
        job.done_ns = at
        event: Event = {
            "t": at,
            "ev": "done",
            "job": job.id,
            "status": status,
            "worker": job.worker,
        }
        if reason:
            event["reason"] = reason
        self._log(event)
        for waiter in job.watchers:
            if not waiter.done():
                waiter.set_result(None)

    def _move(self, job: Job, status: str) -> None:
        self.tally[job.status] -= 1
        self.tally[status] += 1
        job.status = status

    def _unclaim(self, job: Job) -> bool:
        """Take a claimed job off its take, whose answer is not out yet (False: not claimed)."""
        if job.take is None:
            return False
        job.take.jobs.remove(job)
        job.take = None
        return True

    def _expire(self, job: Job) -> None:
        if not self._unclaim(job) and job in self.queued:
            self.queued.remove(job)
        self._finish(job, TIMED_OUT, self.clock.now_ns(), reason="ttl")

    def _time_out(self, job: Job) -> None:
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
        if not record.stops:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            record.stop_waiter = waiter
            try:
                await asyncio.wait_for(waiter, hold_s)
            except asyncio.TimeoutError:
                return []
            finally:
                if record.stop_waiter is waiter:
                    record.stop_waiter = None
        stops, record.stops = record.stops, []
        at = self.clock.now_ns()
        for job_id in stops:
            self._log({"t": at, "ev": "stop", "job": job_id, "worker": worker})
        return stops

    # ---- bench control ---------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        return {
            "submitted": len(self.jobs),
            "completed": self.tally[COMPLETED],
            "failed": self.tally[FAILED],
            "cancelled": self.tally[CANCELLED],
            "timed_out": self.tally[TIMED_OUT],
            "in_queue": self.tally[IN_QUEUE],
            "in_progress": self.tally[IN_PROGRESS],
        }

    def conservation_error(self) -> str | None:
        """None when every job is in exactly one place, else what is wrong. Walks every job."""
        actual = Counter(job.status for job in self.jobs.values())
        if +actual != +self.tally:
            return f"status tally {dict(+self.tally)} disagrees with the jobs {dict(actual)}"
        claimed = [job for take in self.waiting for job in take.jobs]
        in_queue = [job for job in self.jobs.values() if job.status == IN_QUEUE]
        held = sum(len(r.held) for r in self.workers.values())
        in_progress = sum(1 for job in self.jobs.values() if job.status == IN_PROGRESS)
        if claimed:
            return f"{len(claimed)} jobs claimed by takes still waiting"
        if held != in_progress:
            return f"workers hold {held} jobs but {in_progress} are IN_PROGRESS"
        queued_ids = [job.id for job in self.queued]
        if len(set(queued_ids)) != len(queued_ids):
            return "a job is queued twice"
        pending_claims = sum(1 for job in in_queue if job.take is not None)
        if len(self.queued) + pending_claims != len(in_queue):
            return (
                f"{len(in_queue)} jobs IN_QUEUE but {len(self.queued)} queued and "
                f"{pending_claims} claimed"
            )
        return None

    def reset(self) -> None:
        """Forget jobs and events between reps; waiting takes (live long-polls) stay."""
        for job in self.jobs.values():
            if job.timeout_handle is not None:
                job.timeout_handle.cancel()
            self._unclaim(job)  # a take mid-answer must not hand out a forgotten job
        self.jobs.clear()
        self.queued.clear()
        for record in self.workers.values():
            record.held.clear()
            record.stops.clear()
        self.events_base += len(self.events)
        self.events = []
        self.retried = 0
        self.tally.clear()

    def health(self, hold_s: float) -> dict[str, Any]:
        counts = self.counts()
        horizon = self.clock.now_ns() - int((hold_s + WORKER_SEEN_GRACE_S) * 1e9)
        alive = [r for r in self.workers.values() if r.last_seen_ns >= horizon]
        running = sum(1 for r in alive if r.held)
        return {
            "jobs": {
                "completed": counts["completed"],
                "failed": counts["failed"],
                "inProgress": counts["in_progress"],
                "inQueue": counts["in_queue"],
                "retried": self.retried,
            },
            "workers": {"idle": len(alive) - running, "running": running},
        }
