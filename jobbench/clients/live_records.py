"""What live mode records per job and per burst: raw client-side times, no figures."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fake_queue.protocol import TERMINAL  # the fake queue's statuses are RunPod's
from jobbench.errors import JobbenchError


@dataclass(slots=True)
class JobRecord:
    index: int
    input: Any
    outcome: str = "unsent"  # unsent | accepted | unknown | rejected
    id: str | None = None
    sent_ns: int | None = None  # when the accepted /run was sent
    status: str = ""
    last_pending_ns: int | None = None  # last /status answer that was not terminal yet
    done_ns: int | None = None  # client-observed terminal time
    delay_ms: float | None = None
    execution_ms: float | None = None
    worker: str | None = None
    misses: int = 0  # 404s in a row
    errors: int = 0  # /status refusals or failures in a row
    cancelled_by_us: bool = False
    lost: bool = False
    note: str = ""
    # An arrival profile's job (on sent_ns's clock; None in a burst): when its /run was due,
    # and when its first /run went out, the driver's lateness being the difference.
    intended_ns: int | None = None
    first_sent_ns: int | None = None

    @property
    def settled(self) -> bool:
        return self.outcome != "accepted" or self.lost or self.status in TERMINAL


@dataclass(frozen=True, slots=True)
class HealthSample:
    t_ns: int
    in_queue: int | None
    in_progress: int | None
    running: int | None
    idle: int | None


@dataclass
class BurstRecord:
    jobs: list[JobRecord]
    health: list[HealthSample] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    stopped: str | None = None  # None | interrupted | timeout | error
    error: JobbenchError | None = None


def job_fields(job: JobRecord, body: dict[str, Any]) -> None:
    job.status = str(body.get("status") or job.status)
    if isinstance(body.get("delayTime"), (int, float)):
        job.delay_ms = float(body["delayTime"])
    if isinstance(body.get("executionTime"), (int, float)):
        job.execution_ms = float(body["executionTime"])
    if body.get("workerId"):
        job.worker = str(body["workerId"])
