"""Following accepted jobs through /status until each is terminal, within RunPod's /status limit.

One scheduler pops the job whose poll is due first and polls it on one of a bounded number of
tasks. The /status budget (190 a second) goes where a job can end soon: each job is polled again
after half the time it is expected to need to end, never sooner than 0.2 s nor later than 5 s. A
running job is expected to end one mean executionTime after it started (its delayTime); a queued
one after the jobs ahead of it have gone through the slots seen running. So polls close in on each
job's end instead of spreading evenly over a burst too large to poll every 0.2 s.
"""

from __future__ import annotations

import asyncio
import bisect
import heapq
import time
from collections import deque

from fake_queue.protocol import IN_PROGRESS, IN_QUEUE, TERMINAL
from jobbench.clients.live_http import LiveHttp, NotSent, OutcomeUnknown
from jobbench.clients.live_records import BurstRecord, JobRecord, job_fields
from jobbench.clients.pacing import RatePacer, backoff_s

STATUS_RATE = 190.0  # /status: 2000 per 10 s and 400 concurrent per endpoint, less 5 %
POLLERS = 64
POLL_INTERVAL_S = 0.2  # the finest resolution of a client-observed terminal time
MAX_POLL_INTERVAL_S = 5.0
LOST_AFTER_404S = 3  # a job the endpoint keeps not knowing (ttl expired) is lost
TICK_S = 0.02
HOT_S = 1.0  # a job expected to end within this is polled before the others
COLD_EVERY = 4
RECENT_EXECUTIONS = 50  # the mean executionTime that steers polling is over the last this many
SNAPSHOT_S = 0.1  # how often the queue picture (who is ahead, how many run) is refreshed


def poll_delay_s(until_end_s: float | None, longest_s: float = MAX_POLL_INTERVAL_S) -> float:
    """Seconds until the next /status of a job expected to end in `until_end_s` (None: unknown)."""
    if until_end_s is None:
        return POLL_INTERVAL_S
    return min(longest_s, max(POLL_INTERVAL_S, until_end_s / 2))


def until_end_s(
    job: JobRecord, now_ns: int, ahead: int, running: int, mean_execution_s: float | None
) -> float | None:
    """When a job should end, from its status and what is known of the queue (None: no idea)."""
    if mean_execution_s is None:
        return None
    if job.status == IN_PROGRESS and job.delay_ms is not None and job.sent_ns is not None:
        started_ns = job.sent_ns + job.delay_ms * 1e6
        return (started_ns - now_ns) / 1e9 + mean_execution_s
    if job.status == IN_QUEUE and running > 0:  # none running yet: no rate to go by
        return (ahead / running + 1) * mean_execution_s
    return None


class Follower:
    def __init__(
        self, http: LiveHttp, record: BurstRecord, expected_execution_s: float | None = None
    ) -> None:
        self.http = http
        self.record = record
        self.expected_execution_s = expected_execution_s  # a prior until jobs have ended
        # Jobs that may end within a second wait in `hot`, the rest in `cold`; when both have
        # polls due, cold gets every COLD_EVERY-th, so a queued job is never starved of polls.
        self._hot: list[tuple[int, int, JobRecord]] = []
        self._cold: list[tuple[int, int, JobRecord]] = []
        self._picks = 0
        self._pacer = RatePacer(STATUS_RATE)
        self._slots = asyncio.Semaphore(POLLERS)
        self._tasks: set[asyncio.Task[None]] = set()
        self._snapshot_ns = 0
        self._queued: list[int] = []  # indexes of jobs last seen IN_QUEUE, sorted
        self._peak_running = 0
        self._server_in_queue: int | None = None
        self._longest_s = MAX_POLL_INTERVAL_S
        self._executions: deque[float] = deque(maxlen=RECENT_EXECUTIONS)
        self.error: BaseException | None = None

    def add(self, job: JobRecord, at_ns: int, hot: bool = False) -> None:
        heapq.heappush(self._hot if hot else self._cold, (at_ns, job.index, job))

    def _next_due(self, now_ns: int) -> JobRecord | None:
        hot = bool(self._hot) and self._hot[0][0] <= now_ns
        cold = bool(self._cold) and self._cold[0][0] <= now_ns
        if not (hot or cold):
            return None
        self._picks += 1
        take_cold = cold and (not hot or self._picks % COLD_EVERY == 0)
        return heapq.heappop(self._cold if take_cold else self._hot)[2]

    async def run(self) -> None:
        """Poll until cancelled; a poll that fails for good is kept in `error` for the caller."""
        try:
            while self.error is None:
                now = time.monotonic_ns()
                job = self._next_due(now)
                if job is None:
                    tops = [heap[0][0] - now for heap in (self._hot, self._cold) if heap]
                    await asyncio.sleep(min([TICK_S, *(t / 1e9 for t in tops)]))
                    continue
                await self._pacer.acquire()
                await self._slots.acquire()
                task = asyncio.create_task(self._poll(job))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        finally:
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _poll(self, job: JobRecord) -> None:
        try:
            delay_s = await self._ask(job)
        except Exception as exc:  # handed to the burst, which decides what it means
            self.error = exc
            return
        finally:
            self._slots.release()
        if not job.settled:
            hot = job.status == IN_PROGRESS or delay_s <= HOT_S
            self.add(job, time.monotonic_ns() + int(delay_s * 1e9), hot)

    async def _ask(self, job: JobRecord) -> float:
        """One /status; returns seconds until the next one."""
        counts = self.record.counts
        counts["status_requests"] += 1
        try:
            answer = await self.http.request("GET", f"/status/{job.id}")
        except (NotSent, OutcomeUnknown):
            counts["status_errors"] += 1
            job.errors += 1
            return backoff_s(job.errors)
        if answer.status == 404:
            job.misses += 1
            job.lost = job.misses >= LOST_AFTER_404S
            return 1.0
        if answer.retryable:  # backoff grows with this job's run of refusals
            counts["status_errors"] += 1
            job.errors += 1
            return backoff_s(job.errors, answer.retry_after_s)
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise self.http.fatal(answer, "/status")
        job.misses = job.errors = 0
        job_fields(job, answer.body)
        if job.status in TERMINAL:
            job.done_ns = answer.received_ns
            if job.execution_ms is not None:
                self._executions.append(job.execution_ms / 1000)
            return 0.0
        job.last_pending_ns = answer.received_ns
        return self._delay(job)

    def observe_health(self, in_queue: int | None, in_progress: int | None) -> None:
        """The endpoint's own counts bound our stale picture (polled jobs show their status
        late: a job that started unseen still looks queued)."""
        self._server_in_queue = in_queue
        self._peak_running = max(self._peak_running, in_progress or 0)

    def _delay(self, job: JobRecord) -> float:
        now = time.monotonic_ns()
        if now - self._snapshot_ns > SNAPSHOT_S * 1e9:
            self._snapshot_ns = now
            live = [j for j in self.record.jobs if j.outcome == "accepted" and not j.settled]
            self._queued = sorted(j.index for j in live if j.status == IN_QUEUE)
            running = sum(1 for j in live if j.status == IN_PROGRESS)
            self._peak_running = max(self._peak_running, running)
            # Far-off jobs may take at most half the budget, however many there are.
            self._longest_s = max(MAX_POLL_INTERVAL_S, len(live) / (STATUS_RATE / 2))
        ahead = bisect.bisect_left(self._queued, job.index)
        if self._server_in_queue is not None:
            ahead = min(ahead, self._server_in_queue)
        recent = self._executions
        mean = sum(recent) / len(recent) if recent else self.expected_execution_s
        # The most jobs ever seen running at once stands for the endpoint's capacity: the
        # running count we see at a moment lags, as starts show only when a job is polled.
        until = until_end_s(job, now, ahead, self._peak_running, mean)
        return poll_delay_s(until, self._longest_s)
