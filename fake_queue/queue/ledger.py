"""The queue's records: its jobs, the FIFO of unclaimed ones, what it knows of each worker, the
status tally and the event log; and the one way a job ends (`_finish`). Pure asyncio.

The bottom layer of JobQueue (fake_queue.queue.job_queue): the stop and stream signals
(fake_queue.queue.running), a take's life (fake_queue.queue.takes) and the job operations
(fake_queue.queue.job_queue) are layers on top of it, each using only those below, so they share one
object and one state.
"""

from __future__ import annotations

import itertools
from collections import Counter, deque
from collections.abc import Callable

from fake_queue.protocol import TIMED_OUT
from fake_queue.queue.autoscaled_fleet import Fleet
from fake_queue.queue.clock import MONOTONIC, Clock
from fake_queue.queue.event_log import EventLog
from fake_queue.queue.jobs import Event, Job, Take, WorkerSeen
from fake_queue.queue.latency import LatencySampler

# A job delivered this shortly before a heartbeat may not be in it yet (the answer in flight).
PING_SLACK_NS = 1_000_000_000


class QueueLedger:
    def __init__(self, sampler: LatencySampler, clock: Clock = MONOTONIC) -> None:
        self.sampler = sampler
        self.clock = clock
        self.jobs: dict[str, Job] = {}
        self.queued: deque[Job] = deque()
        self.waiting: deque[Take] = deque()
        self.workers: dict[str, WorkerSeen] = {}
        self.events: EventLog = []  # the simulator's is compact (fake_queue.queue.event_log)
        self.events_base = 0
        self.retried = 0
        # jobs per status, kept as they move: /_bench/counts must not walk 100k jobs per poll
        self.tally: Counter[str] = Counter()
        # Called as each job ends (after its `done` event): how an in-process reader learns
        # the instant a rep is over without a watcher per job.
        self.on_job_end: Callable[[], None] | None = None
        # An autoscaled endpoint's platform (fake_queue.queue.autoscaled_fleet), told of each
        # worker's work; None: a fixed fleet, which the queue knows only by the requests it makes.
        self.fleet: Fleet | None = None
        self._job_ids = itertools.count(1)
        self._take_ids = itertools.count(1)

    def events_since(self, cursor: int, limit: int = 50_000) -> tuple[list[Event], int]:
        """Events from absolute index `cursor`; returns them and the next cursor."""
        start = max(cursor - self.events_base, 0)
        chunk = self.events[start : start + limit]
        return chunk, self.events_base + start + len(chunk)

    def seen(self, worker: str) -> WorkerSeen:
        at = self.clock.now_ns()
        record = self.workers.get(worker)
        if record is None:
            record = self.workers[worker] = WorkerSeen(at)
        record.last_seen_ns = at
        return record

    def worked(self, worker: str, at: int | None = None) -> WorkerSeen:
        """`seen`, for a request that is the worker's work (a take, a job-done, a stream): what
        the runner's watchdog watches. A heartbeat is not work: the SDK's runs in a process of
        its own and keeps pinging while the handler is stuck."""
        record = self.seen(worker)
        record.last_work_ns = max(record.last_work_ns, record.last_seen_ns if at is None else at)
        return record

    def heartbeat(self, worker: str, job_ids: set[str]) -> None:
        """A ping listing the jobs the worker has in progress: a job it holds that is missing
        from it (delivered at least PING_SLACK_NS before) misses a ping. Only for workers whose
        pings list jobs at all: a ping without ids from one that never lists any says nothing."""
        record = self.seen(worker)
        record.reports_jobs = record.reports_jobs or bool(job_ids)
        if not record.reports_jobs:
            return
        horizon = record.last_seen_ns - PING_SLACK_NS
        for job_id in record.held:
            job = self.jobs[job_id]
            if job.delivered_ns is not None and job.delivered_ns <= horizon:
                job.missed_pings = 0 if job_id in job_ids else job.missed_pings + 1

    def note_fault(self, route: str, kind: str, worker: str | None, job: str | None) -> None:
        """An injected fault is an event like any other: a faulted run must not look clean."""
        event: Event = {"t": self.clock.now_ns(), "ev": "fault", "route": route, "kind": kind}
        if worker is not None:
            event["worker"] = worker
        if job is not None:
            event["job"] = job
        self.events.append(event)

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

    def _finish(self, job: Job, status: str, at: int, reason: str | None = None) -> None:
        if job.timeout_handle is not None:
            job.timeout_handle.cancel()
            job.timeout_handle = None
        if job.worker is not None and job.worker in self.workers:
            held = self.workers[job.worker].held
            if self.fleet is not None and job.id in held:
                self.fleet.ended(job.worker, at)
            held.discard(job.id)
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
        self.events.append(event)
        for waiter in job.watchers:
            if not waiter.done():
                waiter.set_result(None)
        if self.on_job_end is not None:
            self.on_job_end()

    def _expire(self, job: Job) -> None:
        """The job's ttl ran out before its answer went out: wherever it waits, it ends."""
        if not self._unclaim(job) and job in self.queued:
            self.queued.remove(job)
        self._finish(job, TIMED_OUT, self.clock.now_ns(), reason="ttl")
