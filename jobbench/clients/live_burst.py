"""One burst at a live endpoint: paced /run submits, /status follow-up, /health samples, and
/cancel of what is still pending when the burst is stopped. Orchestration only: records raw
client-side times; jobbench.measure.live_metrics turns them into figures.

Under an arrival profile (`BurstPlan.due_s`) the burst is open loop: each job's /run goes out
at its own time whatever earlier /runs are doing, within the same /run window and concurrency;
a profile beyond them sends late, and each job's intended time is kept beside its send time,
so the lateness is measured, never hidden as a lower offered load."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fake_queue.protocol import CANCELLED, IN_QUEUE
from jobbench.clients.live_follow import POLL_INTERVAL_S, Follower
from jobbench.clients.live_http import Answer, LiveHttp, NotSent, OutcomeUnknown
from jobbench.clients.live_records import BurstRecord, HealthSample, JobRecord, job_fields
from jobbench.clients.pacing import Pacer, RatePacer, WindowPacer, backoff_s
from jobbench.errors import JobbenchError

# RunPod's documented per-endpoint limits (docs/protocol.md 4), each less 5 % so that the edges of
# our window and the platform's never meet: /run 1000 per 10 s and 200 concurrent, /cancel 100
# per 10 s and 20 concurrent (/status: live_follow.py).
RUN_WINDOW = (950, 10.0)
RUN_CONCURRENCY = 190
CANCEL_WINDOW = (95, 10.0)
CANCEL_CONCURRENCY = 19
HEALTH_INTERVAL_S = 1.0
MAX_RUN_ATTEMPTS = 10
TICK_S = 0.05
NS_PER_S = 1_000_000_000
SUBMIT_DRAIN_S = 15.0  # on stop, in-flight /run calls get this long to answer


@dataclass(frozen=True)
class BurstPlan:
    inputs: tuple[Any, ...]  # one per job
    submit_rate: float | None  # None: RunPod's window; inf: unpaced
    timeout_s: float
    cancel_timeout_s: float = 30.0
    expected_execution_s: float | None = None  # bench jobs: their seconds; steers polling
    # An arrival profile: each job's /run is due this many seconds after the burst's start.
    # None: a burst, every job at once as fast as the pacing lets.
    due_s: tuple[float, ...] | None = None
    run_window: tuple[int, float] = RUN_WINDOW  # /run starts per seconds, without --submit-rate

    def __post_init__(self) -> None:
        if self.due_s is not None and len(self.due_s) != len(self.inputs):
            raise ValueError(f"{len(self.due_s)} due times for {len(self.inputs)} jobs")


def run_pacer(rate: float | None, window: tuple[int, float] = RUN_WINDOW) -> Pacer:
    return WindowPacer(*window) if rate is None else RatePacer(rate)


class LiveBurst:
    def __init__(
        self, http: LiveHttp, plan: BurstPlan, on_progress: Callable[[int, int], None]
    ) -> None:
        self.http = http
        self.plan = plan
        self.on_progress = on_progress
        self.record = BurstRecord([JobRecord(i, value) for i, value in enumerate(plan.inputs)])
        self._pending = iter(self.record.jobs)
        self._follower = Follower(http, self.record, plan.expected_execution_s)
        self._run_pacer = run_pacer(plan.submit_rate, plan.run_window)
        self._stopping = False
        self._halt = asyncio.Event()  # set with _stopping: wakes /runs waiting for their time
        self._bug: BaseException | None = None  # raised once the pending jobs are cancelled

    async def run(self, stop: asyncio.Event, hard_stop: asyncio.Event) -> BurstRecord:
        n = len(self.record.jobs)
        self._stamp_due_times(time.monotonic_ns())
        submitters = [
            asyncio.create_task(self._submitter()) for _ in range(min(RUN_CONCURRENCY, n))
        ]
        others = [
            asyncio.create_task(self._follower.run()),
            asyncio.create_task(self._sample_health()),
        ]
        try:
            self.record.stopped = await self._wait(submitters + others, stop)
            if self.record.stopped is not None:
                self._stop_submitting()  # in-flight /runs may still answer
                await asyncio.wait(submitters, timeout=SUBMIT_DRAIN_S)
        finally:
            for task in submitters + others:
                task.cancel()
            await asyncio.gather(*submitters, *others, return_exceptions=True)
        if self.record.stopped is not None:
            await self._cancel_unsettled(hard_stop)
        if self._bug is not None:
            raise self._bug
        return self.record

    def _done_count(self) -> int:
        return sum(1 for job in self.record.jobs if job.outcome != "unsent" and job.settled)

    async def _wait(self, tasks: list[asyncio.Task[None]], stop: asyncio.Event) -> str | None:
        deadline = time.monotonic() + self.plan.timeout_s
        total = len(self.record.jobs)
        while True:
            failed = (t.exception() for t in tasks if t.done() and not t.cancelled())
            exc = next((e for e in failed if e is not None), None) or self._follower.error
            if exc is not None:
                if isinstance(exc, JobbenchError):
                    self.record.error = exc
                else:  # a bug, not the endpoint: surfaces as is, once paid jobs are cancelled
                    self._bug = exc
                return "error"
            done = self._done_count()
            self.on_progress(done, total)
            if done >= total:
                return None
            if stop.is_set():
                return "interrupted"
            if time.monotonic() > deadline:
                return "timeout"
            await asyncio.sleep(TICK_S)

    def _stamp_due_times(self, began_ns: int) -> None:
        """A profile's intended /run times, on the clock of every other record."""
        if self.plan.due_s is None:
            return
        for job, due_s in zip(self.record.jobs, self.plan.due_s, strict=True):
            job.intended_ns = began_ns + round(due_s * NS_PER_S)

    def _stop_submitting(self) -> None:
        self._stopping = True
        self._halt.set()

    def _next_job(self) -> JobRecord | None:
        return None if self._stopping else next(self._pending, None)

    async def _submitter(self) -> None:
        while (job := self._next_job()) is not None:
            if job.intended_ns is not None and not await self._until_due(job.intended_ns):
                return
            await self._submit(job)

    async def _until_due(self, due_ns: int) -> bool:
        """Wait for a profile job's time, not for any earlier /run's answer (the open model);
        False: the burst stopped meanwhile, the job stays unsent."""
        wait_s = (due_ns - time.monotonic_ns()) / NS_PER_S
        if wait_s > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._halt.wait(), wait_s)
        return not self._stopping

    async def _submit(self, job: JobRecord) -> None:
        counts = self.record.counts
        for attempt in range(MAX_RUN_ATTEMPTS):
            if self._stopping:
                return
            await self._run_pacer.acquire()
            if self._stopping:
                return
            counts["run_requests"] += 1
            if job.first_sent_ns is None:  # a profile's lateness is the first attempt's
                job.first_sent_ns = time.monotonic_ns()
            try:
                answer = await self.http.request("POST", "/run", json={"input": job.input})
            except NotSent as exc:
                counts["run_not_sent"] += 1
                job.note = str(exc)
                await asyncio.sleep(backoff_s(attempt))
                continue
            except OutcomeUnknown as exc:  # it may exist now: never send it again
                job.outcome, job.note = "unknown", str(exc)
                return
            if answer.status == 200 and isinstance(answer.body, dict) and answer.body.get("id"):
                self._accept(job, answer)
                return
            if not answer.retryable:
                raise self.http.fatal(answer, "/run")
            counts["run_throttled" if answer.status == 429 else "run_server_errors"] += 1
            await asyncio.sleep(backoff_s(attempt, answer.retry_after_s))
        job.outcome = "rejected"

    def _accept(self, job: JobRecord, answer: Answer) -> None:
        job.outcome, job.id = "accepted", str(answer.body["id"])
        job.sent_ns = answer.sent_ns
        job.last_pending_ns = answer.received_ns
        job_fields(job, answer.body)
        self._follower.add(job, answer.received_ns + int(POLL_INTERVAL_S * 1e9))

    async def _sample_health(self) -> None:
        while True:
            started = time.monotonic()
            self.record.counts["health_requests"] += 1
            try:
                answer = await self.http.request("GET", "/health")
            except (NotSent, OutcomeUnknown):
                answer = None
            if answer is not None and answer.status == 200 and isinstance(answer.body, dict):
                sample = _health_sample(answer)
                self.record.health.append(sample)
                self._follower.observe_health(sample.in_queue, sample.in_progress)
            else:
                self.record.counts["health_errors"] += 1
            await asyncio.sleep(max(0.0, HEALTH_INTERVAL_S - (time.monotonic() - started)))

    async def _cancel_unsettled(self, hard_stop: asyncio.Event) -> None:
        """Cancel what this burst left queued or running (queued first), within RunPod's
        /cancel limits and a time bound; a second Ctrl-C gives up at once."""
        todo = [job for job in self.record.jobs if not job.settled]
        todo.sort(key=lambda job: job.status != IN_QUEUE)
        queue: asyncio.Queue[JobRecord] = asyncio.Queue()
        for job in todo:
            queue.put_nowait(job)
        pacer = WindowPacer(*CANCEL_WINDOW)
        workers = [
            asyncio.create_task(self._canceller(queue, pacer))
            for _ in range(min(CANCEL_CONCURRENCY, len(todo)))
        ]
        if not workers:
            return
        everything: asyncio.Future[Any] = asyncio.gather(*workers, return_exceptions=True)
        stop_task: asyncio.Future[Any] = asyncio.create_task(hard_stop.wait())
        await asyncio.wait(
            [everything, stop_task],
            timeout=self.plan.cancel_timeout_s,
            return_when=asyncio.FIRST_COMPLETED,
        )
        for task in [*workers, stop_task]:
            task.cancel()
        await asyncio.gather(everything, stop_task, return_exceptions=True)

    async def _canceller(self, queue: asyncio.Queue[JobRecord], pacer: Pacer) -> None:
        while not queue.empty():
            job = queue.get_nowait()
            for attempt in range(MAX_RUN_ATTEMPTS):
                await pacer.acquire()
                self.record.counts["cancel_requests"] += 1
                try:
                    answer = await self.http.request("POST", f"/cancel/{job.id}")
                except (NotSent, OutcomeUnknown):  # cancelling twice is harmless
                    await asyncio.sleep(backoff_s(attempt))
                    continue
                if answer.retryable:
                    await asyncio.sleep(backoff_s(attempt, answer.retry_after_s))
                    continue
                if answer.status == 200 and isinstance(answer.body, dict):
                    job.status = str(answer.body.get("status") or CANCELLED)
                    job.cancelled_by_us = job.status == CANCELLED
                    self.record.counts["cancelled"] += int(job.cancelled_by_us)
                break


def _health_sample(answer: Answer) -> HealthSample:
    jobs = answer.body.get("jobs") or {}
    workers = answer.body.get("workers") or {}

    def number(mapping: Any, key: str) -> int | None:
        value = mapping.get(key) if isinstance(mapping, dict) else None
        return int(value) if isinstance(value, (int, float)) else None

    return HealthSample(
        answer.received_ns,
        number(jobs, "inQueue"),
        number(jobs, "inProgress"),
        number(workers, "running"),
        number(workers, "idle"),
    )
