"""JobQueue: the fake RunPod queue in-process, pure asyncio, no HTTP. This module is its job
operations (submit, status, cancel, retry, purge, job done) and the bench's views (counts,
health, the conservation check, reset between reps).

Every take claims its jobs at one instant (FIFO) and is answered after a latency
(docs/latency-model.md). JobQueue is one object built in layers, each using only those below:
fake_queue.queue.ledger (the records, the event log, how a job ends), fake_queue.queue.running
(stream chunks in, stop signals out), fake_queue.queue.takes (a take's life), then this module.
Every time read goes through the injected clock (fake_queue.queue.clock; real time by default), and
every timer is a delay on the running loop, so on a virtual-time loop
(fake_queue.queue.virtual_clock) the same queue runs in virtual time.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable
from typing import Any

from fake_queue.protocol import (
    CANCELLED,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    IN_QUEUE,
    TERMINAL,
    TIMED_OUT,
)
from fake_queue.queue.jobs import (
    DEFAULT_TTL_S,
    WORKER_SEEN_GRACE_S,
    Job,
    JobError,
    Take,
)
from fake_queue.queue.takes import TakeLife

__all__ = [
    "Job",
    "JobError",
    "JobQueue",
    "Take",
]


class JobQueue(TakeLife):
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
        late_ns: int = 0,
        intended_ns: int | None = None,
    ) -> list[Job]:
        """Enqueue jobs at one instant, then wake waiting takes oldest first. An open-loop
        driver says when it meant to submit them: `late_ns` (the submission is that late, by
        its own reckoning) or `intended_ns` (on this clock; one not before now is now). Each
        `submit` event then also says when it was intended, which latencies are measured from
        (docs/events.md)."""
        at = self.clock.now_ns()
        if intended_ns is None and late_ns > 0:
            intended_ns = at - late_ns
        intended = intended_ns if intended_ns is not None and intended_ns < at else None
        jobs = []
        for payload in payloads:
            job = Job(
                id=f"job-{next(self._job_ids)}",
                input=payload,
                submitted_ns=at,
                extra=dict(extra) if extra else {},
                execution_timeout_s=execution_timeout_s,
                ttl_s=DEFAULT_TTL_S if ttl_s is None else ttl_s,
            )
            self.jobs[job.id] = job
            self.queued.append(job)
            # Each event is a dict literal, with no helper call: a million-job burst runs this
            # loop a million times within one call.
            if intended is None:
                self.events.append({"t": at, "ev": "submit", "job": job.id})
            else:
                self.events.append({"t": at, "ev": "submit", "job": job.id, "intended": intended})
            jobs.append(job)
        self.tally[IN_QUEUE] += len(jobs)
        self._wake_waiting(at)
        if self.fleet is not None and not self.fleet.running:
            self.fleet.begin(at)  # the scaler starts with the rep's first submission
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
        self.retried += 1
        self.queued.append(job)
        self.events.append({"t": at, "ev": "retry", "job": job.id})
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
        except TimeoutError:
            pass
        finally:
            if future in job.watchers:
                job.watchers.remove(future)

    # ---- worker side -----------------------------------------------------------------------
    def finish(
        self, worker: str, job_id: str, body: dict[str, Any], arrived_ns: int | None = None
    ) -> str:
        """A job-done POST (arrived at `arrived_ns`, default now). Returns what it was: done,
        progress or ignored (404 raises)."""
        at = self.clock.now_ns() if arrived_ns is None else arrived_ns
        self.worked(worker, at)
        return self._job_done_at(worker, job_id, body, at)

    def _job_done_at(self, worker: str, job_id: str, body: dict[str, Any], at: int) -> str:
        """`finish` of a worker already seen at `at`."""
        job = self.jobs.get(job_id)
        if job is None or worker not in job.handed_to:
            raise JobError(404, f"job {job_id!r} was never handed to worker {worker!r}")
        if job.status != IN_PROGRESS or job.worker != worker:
            late: dict[str, Any] = {
                "t": at, "ev": "ignored", "job": job_id, "worker": worker, "status": job.status
            }  # fmt: skip
            if body.get("status") == IN_PROGRESS:  # a late progress update, not a second answer
                late["progress"] = True
            self.events.append(late)
            outcome = "ignored"
        elif body.get("status") == IN_PROGRESS:
            job.progress = body.get("output")
            self.events.append({"t": at, "ev": "progress", "job": job_id, "worker": worker})
            return "progress"
        else:
            job.output = body.get("output")
            job.error = body.get("error")
            self._finish(job, FAILED if "error" in body else COMPLETED, at)
            outcome = "done"
        if body.get("stopPod") is True:
            self.refresh(worker, job_id, at)
        return outcome

    def refresh(self, worker: str, job_id: str, at: int) -> None:
        """A job-done carrying `stopPod` (the SDK's refresh_worker, docs/protocol.md): as
        RunPod's platform does, the worker is to be stopped and a fresh one started in its
        place. From now on it gets no job: its waiting takes and job-stop poll are answered now
        (an SDK told to exit waits for them), and its later takes wait, claiming nothing, until
        the runner stops it (jobbench/core/real_workers/refresh_drive.py) and reports the fresh one
        (`refreshed`). Logged once a worker's life: its later job-dones with `stopPod` ask for
        the same stop."""
        record = self.workers[worker]  # a job-done's worker was seen (`worked`)
        if record.refresh_job is not None:
            return
        record.refresh_job = job_id
        self.events.append({"t": at, "ev": "refresh", "worker": worker, "job": job_id})
        self.release_long_polls(worker)

    def refreshed(self, worker: str, returncode: int | None) -> None:
        """The runner's report: the refreshed worker's process ended (with `returncode`) and
        a fresh one starts under its id, which gets jobs once it polls."""
        record = self.workers.get(worker)
        if record is not None and record.refresh_job is not None:
            self.release_long_polls(worker)  # whatever the old process left waiting
            record.refresh_job = None
        self.events.append(
            {"t": self.clock.now_ns(), "ev": "refreshed", "worker": worker, "rc": returncode}
        )

    async def job_done(
        self, worker: str, job_id: str, body: dict[str, Any], arrived_ns: int | None = None
    ) -> str:
        """`finish`, answered after the done latency (the job counts as done on arrival)."""
        (outcome,) = await self.job_done_many(worker, [(job_id, body)], arrived_ns)
        if isinstance(outcome, JobError):
            raise outcome
        return outcome

    async def job_done_many(
        self,
        worker: str,
        results: list[tuple[str, dict[str, Any]]],
        arrived_ns: int | None = None,
    ) -> list[str | JobError]:
        """Job-done POSTs of one worker arriving together (at `arrived_ns`, default now; an
        in-process worker's batch): each `finish`ed on arrival, all answered once the longest
        of their done latencies is over, as concurrent POSTs are; with no done latency, at once,
        without a loop turn (a million, simulated). Each outcome, or the JobError its POST
        would have answered."""
        outcomes, delay = self.finish_many(worker, results, arrived_ns)
        if delay > 0:
            await asyncio.sleep(delay)
        return outcomes

    def finish_many(
        self,
        worker: str,
        results: list[tuple[str, dict[str, Any]]],
        arrived_ns: int | None = None,
    ) -> tuple[list[str | JobError], float]:
        """`job_done_many` up to its answer: the outcomes, and the seconds to answer them
        after (the longest of their done latencies; 0: now)."""
        outcomes: list[str | JobError] = []
        at = self.clock.now_ns() if arrived_ns is None else arrived_ns
        self.worked(worker, at)
        for job_id, body in results:
            try:
                outcomes.append(self._job_done_at(worker, job_id, body, at))
            except JobError as exc:
                outcomes.append(exc)
        answered = sum(1 for outcome in outcomes if not isinstance(outcome, JobError))
        return outcomes, self.sampler.longest_done(answered)

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

    def release_long_polls(self, worker: str | None = None) -> int:
        """Answer every waiting take (204) and job-stop poll now, or only `worker`'s (the
        platform stopping it): the runner is stopping its workers, and an SDK worker exits
        only once its long-polls return (up to the hold). Returns how many were released.
        Stopping them all ends every refresh in course: no fresh worker follows."""
        takes = [take for take in self.waiting if worker is None or take.worker == worker]
        records = self.workers.values() if worker is None else [self.workers.get(worker)]
        for record in records:
            if record is not None:
                takes += record.parked
                record.parked = []
                if worker is None:
                    record.refresh_job = None
        self._answer_empty_now(takes)
        if worker is None:
            self.waiting.clear()
        else:
            for take in takes:
                if take in self.waiting:
                    self.waiting.remove(take)
        stops = [r.stop_waiter for r in records if r is not None and r.stop_waiter is not None]
        for waiter in stops:
            if not waiter.done():
                waiter.set_result(None)
        return len(takes) + len(stops)

    def renew_takes(self) -> int:
        """Answer every waiting take now, with no job, as the hold would in time. Between reps:
        a rep then starts with takes its workers sent after the rep before, as an idle worker's
        are, not with one sent while that rep was ending, which asked for the slots free then
        and which a hold longer than the pause between reps keeps (a job cache's take, asking
        3 x its need, then starts the rep short). Job-stop polls, parked takes and refreshes
        stay. Returns how many were answered; their workers count as not polling from now."""
        takes = list(self.waiting)
        self.waiting.clear()
        at = self._answer_empty_now(takes)
        for take in takes:
            self._settle(take, at)
        return len(takes)

    def _answer_empty_now(self, takes: list[Take]) -> int:
        """Answer `takes` now, with no job: their await_answer goes on at once. Returns now."""
        at = self.clock.now_ns()
        for take in takes:
            take.answer_at_ns = at
            if not take.claimed.done():
                take.claimed.set_result(None)
        return at

    def reset(self) -> None:
        """Forget jobs and events between reps; waiting takes (live long-polls) stay. A
        refresh not carried out by now is void (its process was replaced another way, or
        died): its worker's parked takes are answered, and its id gets jobs again."""
        for worker, record in self.workers.items():
            if record.refresh_job is not None:
                self.release_long_polls(worker)
                record.refresh_job = None
        if self.fleet is not None:
            self.fleet.reset()
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
