"""Job records, takes and what the queue knows of each worker (statuses: fake_queue.protocol).
Times in them are nanoseconds on the queue's clock (fake_queue.queue.clock)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from fake_queue.protocol import IN_QUEUE

DEFAULT_TTL_S = 86_400.0
WORKER_SEEN_GRACE_S = 10.0

Event = dict[str, Any]


@dataclass(slots=True, eq=False)
class Job:
    id: str
    input: Any
    submitted_ns: int
    extra: dict[str, Any] = field(default_factory=dict)
    status: str = IN_QUEUE
    worker: str | None = None
    take: Take | None = None
    handed_to: tuple[str, ...] = ()  # every worker it was delivered to (a set: 216 bytes a job)
    delivered_ns: int | None = None
    done_ns: int | None = None
    output: Any = None
    error: Any = None
    progress: Any = None
    stream: list[Any] = field(default_factory=list)
    execution_timeout_s: float | None = None
    ttl_s: float = DEFAULT_TTL_S
    missed_pings: int = 0  # heartbeats since delivery that did not list it (fake_queue.queue.watch)
    timeout_handle: asyncio.TimerHandle | None = None
    watchers: list[asyncio.Future[None]] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """What a worker receives for this job."""
        return {"id": self.id, "input": self.input, **self.extra}

    def expired(self, at_ns: int) -> bool:
        return at_ns - self.submitted_ns > self.ttl_s * 1e9


@dataclass(slots=True, eq=False)
class Take:
    id: int
    worker: str
    asked: int
    job_in_progress: bool
    arrived_ns: int
    claimed: asyncio.Future[None]
    jobs: list[Job] = field(default_factory=list)
    kind: str = "empty"  # queued | woken | empty
    answer_at_ns: int = 0
    gone: bool = False
    settled: bool = False
    counted: bool = False  # its claim was told to the fleet (fake_queue.queue.autoscaled_fleet)


@dataclass(slots=True)
class WorkerSeen:
    last_seen_ns: int  # any request, a heartbeat or a stop poll included
    last_work_ns: int = 0  # a take arrived or was answered, a job-done or stream arrived
    waiting_takes: int = 0
    reports_jobs: bool = False  # its heartbeats have listed job ids (the SDK's do)
    held: set[str] = field(default_factory=set)
    stops: list[str] = field(default_factory=list)
    stop_waiter: asyncio.Future[None] | None = None
    # The job whose job-done asked for a refresh (`stopPod`, the SDK's refresh_worker): the
    # platform stops this worker and starts a fresh one, and hands it no job meanwhile: its
    # takes wait `parked`, claiming nothing, until the runner stops it (fake_queue.queue.job_queue).
    refresh_job: str | None = None
    parked: list[Take] = field(default_factory=list)


class JobError(Exception):
    """A request the queue cannot honour (a job it does not know, a body or a query it cannot
    read): `status` is the HTTP answer, `message` says what is wrong and the fix."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
