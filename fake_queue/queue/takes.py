"""A take's life (docs/latency-model.md, "A take's life"): it claims queued jobs FIFO at the
instant it arrives, or waits until a submit wakes it, then holds until its answer time (a
latency after the claim) and delivers; or it is answered empty once the hold ran out, or
abandoned when its client went away, its claimed jobs going back to the front of the queue.

Pure asyncio, a layer of JobQueue (fake_queue.queue.job_queue) on fake_queue.queue.running: the HTTP
route (worker_routes) and the in-process link alike run a take through `take` then `await_answer`.
Every timer is set on the running loop at an instant of the queue's clock (fake_queue.queue.clock);
the takes due at one instant share one, and are answered together (`_answer_due`).
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable

from fake_queue.protocol import IN_PROGRESS, IN_QUEUE
from fake_queue.queue.clock import MONOTONIC, Clock, call_at_ns
from fake_queue.queue.jobs import Job, Take
from fake_queue.queue.latency import LatencySampler
from fake_queue.queue.running import RunningJobs


class _Due:
    """A take waiting for its answer time, how to tell its client is gone, how to send its
    answer (None: its awaiter writes it), and the future that resolves to its jobs."""

    __slots__ = ("answered", "client_gone", "send", "take")

    def __init__(
        self,
        take: Take,
        client_gone: Callable[[], bool],
        send: Callable[[list[Job]], None] | None,
        answered: asyncio.Future[list[Job] | None],
    ) -> None:
        self.take = take
        self.client_gone = client_gone
        self.send = send
        self.answered = answered


class TakeLife(RunningJobs):
    def __init__(self, sampler: LatencySampler, clock: Clock = MONOTONIC) -> None:
        super().__init__(sampler, clock)
        # Takes answered at each instant: one timer an instant (`_answer_due`), and the
        # instants waiting, soonest first (`_answer_group` answers every one already past).
        self._due_at: dict[int, list[_Due]] = {}
        self._instants: list[int] = []

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
        record = self.worked(worker, at)
        record.waiting_takes += 1
        fleet = self.fleet
        if fleet is not None:
            fleet.polled(worker, at)
            if fleet.refuses(worker):  # a worker being stopped is answered at once, empty
                take.answer_at_ns = at
                take.claimed.set_result(None)
                return take
        if record.refresh_job is not None:  # a worker due for a refresh waits, claiming nothing
            record.parked.append(take)
            return take
        if self._claim(take, at):
            take.kind = "queued"
            take.answer_at_ns = at + int(self.sampler.take() * 1e9)
        else:
            self.waiting.append(take)
        return take

    def _claim(self, take: Take, at: int) -> bool:
        # A server-side fix may hand a take more than it asked for (LatencyModel.take_extra).
        most = take.asked + self.sampler.model.take_extra
        while self.queued and len(take.jobs) < most:
            job = self.queued.popleft()
            if job.expired(at):
                self._expire(job)
                continue
            job.take = take
            take.jobs.append(job)
            self.events.append(
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
        send: Callable[[list[Job]], None] | None = None,
    ) -> list[Job] | None:
        """Run `take` to its answer: the jobs delivered ([] when every claimed job was cancelled
        meanwhile), or None when it is answered without any: the hold ran out, or `client_gone()`
        said so at the answer time. `on_claimed(jobs)` runs once it has claimed, before the
        answer's wait (to render the answer early); `send(jobs)`, if given, writes the answer at
        its answer time, before any take due at that instant is booked (`_answer_due`).
        Cancelled (the client went away), it abandons the take, whose claimed jobs go back to
        the front of the queue, and re-raises."""
        try:
            if not take.claimed.done():
                try:
                    await asyncio.wait_for(asyncio.shield(take.claimed), self.sampler.hold())
                except TimeoutError:
                    if not take.claimed.done():
                        self.give_up_waiting(take)
                        return None
            if on_claimed is not None:
                on_claimed(take.jobs)
            # Answered with every take due at its answer time (one timer for all of them; one
            # whose time has passed, in the next loop turn, with the others resumed in this one).
            due = _Due(take, client_gone, send, asyncio.get_running_loop().create_future())
            group = self._due_at.get(take.answer_at_ns)
            if group is None:
                group = self._due_at[take.answer_at_ns] = []
                heapq.heappush(self._instants, take.answer_at_ns)
                call_at_ns(self.clock, take.answer_at_ns, self._answer_group, take.answer_at_ns)
            group.append(due)
            return await due.answered
        except BaseException:
            self.abandon(take)  # a settled (answered) take only notes that its client is gone
            raise

    def _answer_group(self, at_ns: int) -> None:
        """The takes due at `at_ns`, and with them those of every instant already past whose
        timer has not run yet: takes falling due a few us apart (63 clients' takes read one
        after another, due 0.5 s later) pile up behind each other's bookings (~25 us each)
        when each instant is answered on its own; answered together, every answer of the
        backlog goes out before any of them is booked. In virtual time no instant is past."""
        until = max(at_ns, self.clock.now_ns())
        instants, groups = self._instants, self._due_at
        due: list[_Due] = []
        while instants and instants[0] <= until:
            due += groups.pop(heapq.heappop(instants))
        self._answer_due(due)

    def _answer_due(self, due: list[_Due]) -> None:
        """Answer the takes due (at one instant, or a backlog of them), in one go: first every
        answer goes out, then each is booked (`deliver`, at the time its answer went out).
        Answers due together (a burst waking 63 takes) then leave back to back, not each behind
        the bookkeeping of the ones before it (benchmarks/NOTES.md, timer fidelity)."""
        sent: list[tuple[_Due, int]] = []
        for entry in due:
            if entry.answered.done():  # its wait was cancelled: the take is abandoned
                continue
            if entry.client_gone():
                self.abandon(entry.take)
                entry.answered.set_result(None)
                continue
            at = self.clock.now_ns()
            if entry.send is not None and entry.take.jobs:
                entry.send(entry.take.jobs)
            sent.append((entry, at))
        for entry, at in sent:
            entry.answered.set_result(self.deliver(entry.take, at))

    def give_up_waiting(self, take: Take) -> None:
        """The hold ran out with nothing claimed: the take will be answered 204."""
        if take in self.waiting:
            self.waiting.remove(take)
        else:
            self._unpark(take)
        take.answer_at_ns = self.clock.now_ns()
        self._settle(take)

    def _unpark(self, take: Take) -> None:
        """A parked take (its worker is to be refreshed) no longer waits."""
        record = self.workers.get(take.worker)
        if record is not None and take in record.parked:
            record.parked.remove(take)

    def deliver(self, take: Take, at: int | None = None) -> list[Job]:
        """The answer goes out (went out at `at`, default now): its jobs are now IN_PROGRESS
        on that worker."""
        if at is None:
            at = self.clock.now_ns()
        record = self.seen(take.worker)
        delivered = list(take.jobs)
        worker, take_id, log, tally = take.worker, take.id, self.events.append, self.tally
        # The hottest loop at a woken group's answer time, so it is kept lean: each job's old
        # status count drops as ledger._move would drop it, and IN_PROGRESS's rises once, after.
        for job in delivered:
            job.take = None
            tally[job.status] -= 1
            job.status = IN_PROGRESS
            job.worker = worker
            job.delivered_ns = at
            if worker not in job.handed_to:
                job.handed_to += (worker,)
            log({"t": at, "ev": "deliver", "job": job.id, "take": take_id, "worker": worker})
            if job.execution_timeout_s is not None:
                job.timeout_handle = asyncio.get_running_loop().call_later(
                    job.execution_timeout_s, self._time_out, job
                )
        tally[IN_PROGRESS] += len(delivered)
        record.held.update(job.id for job in delivered)
        self._settle(take, at)
        return delivered

    def abandon(self, take: Take) -> None:
        """The take's client went away: it keeps nothing; claimed jobs return to the front."""
        take.gone = True
        if take.settled:
            return
        if take in self.waiting:
            self.waiting.remove(take)
        else:
            self._unpark(take)
        at = self.clock.now_ns()
        for job in reversed(take.jobs):
            job.take = None
            self.queued.appendleft(job)
            self.events.append(
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
            self.events.append(
                {"t": at, "ev": "requeue", "job": job.id, "take": take.id, "worker": take.worker}
            )
        self._wake_waiting(at)

    def _settle(self, take: Take, at: int | None = None) -> None:
        """The take is answered (its answer went out at `at`, default now)."""
        if take.settled:
            return
        take.settled = True
        if at is None:
            at = self.clock.now_ns()
        if take.counted and self.fleet is not None:
            self.fleet.settled(take.worker, len(take.jobs), at)
        record = self.workers.get(take.worker)
        if record is not None:
            record.waiting_takes -= 1
            record.last_work_ns = at  # answered: the worker has work to do
        # t: when the answer went out; due: when the latency model meant it to (timer fidelity).
        self.events.append(
            {
                "t": at,
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
