"""A take's life (docs/latency-model.md, "A take's life"): it claims queued jobs FIFO at the
instant it arrives, or waits until a submit wakes it, then holds until its answer time (a
latency after the claim) and delivers; or it is answered empty once the hold ran out, or
abandoned when its client went away, its claimed jobs going back to the front of the queue.

Pure asyncio, a layer of JobQueue (fake_queue.queue) on fake_queue.running: the HTTP route
(worker_routes) and the in-process link alike run a take through `take` then `await_answer`.
Every timer is a delay on the running loop from the queue's clock (fake_queue.clock).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fake_queue.clock import sleep_until
from fake_queue.jobs import Job, Take
from fake_queue.protocol import IN_PROGRESS, IN_QUEUE
from fake_queue.running import RunningJobs


class TakeLife(RunningJobs):
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
        self.worked(worker, at).waiting_takes += 1
        fleet = self.fleet
        if fleet is not None:
            fleet.polled(worker, at)
            if fleet.refuses(worker):  # being stopped: answered at once, empty
                take.answer_at_ns = at
                take.claimed.set_result(None)
                return take
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
            if self.fleet is not None:
                take.counted = True
                self.fleet.claimed(take.worker)
        return bool(take.jobs)

    def _wake_waiting(self, at: int) -> None:
        """Jobs arrived (or came back): waiting takes claim them, oldest first."""
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
        """Run `take` to its answer: the jobs delivered ([] when every claimed job was cancelled
        meanwhile), or None when it is answered without any: the hold ran out, or `client_gone()`
        said so at the answer time. `on_claimed(jobs)` runs once it has claimed, before the
        answer's wait (to render the answer early). Cancelled (the client went away), it abandons
        the take, whose claimed jobs go back to the front of the queue, and re-raises."""
        try:
            if not take.claimed.done():
                try:
                    await asyncio.wait_for(asyncio.shield(take.claimed), self.sampler.hold())
                except asyncio.TimeoutError:
                    if not take.claimed.done():
                        self.give_up_waiting(take)
                        return None
            if on_claimed is not None:
                on_claimed(take.jobs)
            await sleep_until(self.clock, take.answer_at_ns)
            if client_gone():
                self.abandon(take)
                return None
            return self.deliver(take)
        except BaseException:
            self.abandon(take)  # a settled (answered) take only notes that its client is gone
            raise

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
            if take.worker not in job.handed_to:
                job.handed_to += (take.worker,)
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
            if self.fleet is not None:
                self.fleet.ended(take.worker, at)
            self.queued.appendleft(job)
            self._log(
                {"t": at, "ev": "requeue", "job": job.id, "take": take.id, "worker": take.worker}
            )
        self._wake_waiting(at)

    def _settle(self, take: Take) -> None:
        if take.settled:
            return
        take.settled = True
        if take.counted and self.fleet is not None:
            self.fleet.settled(take.worker, len(take.jobs), self.clock.now_ns())
        record = self.workers.get(take.worker)
        if record is not None:
            record.waiting_takes -= 1
            record.last_work_ns = self.clock.now_ns()  # answered: the worker has work to do
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
