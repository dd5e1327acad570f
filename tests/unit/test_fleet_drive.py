"""The fake target's executor of fleet orders (core/real_workers/fleet_drive.py): a started worker's
process is spawned no earlier than the queue's modelled cold start allows, however long the
queue took to answer. A fresh-clone run once read a start 12 ms before its cold start was over:
the runner's clock had been read before a burst was submitted and the fleet asked."""

from __future__ import annotations

import time
from typing import Any, cast

from jobbench.clients.bench_client import BenchClient
from jobbench.core.real_workers.fleet_drive import FleetDrive
from jobbench.procs.spawn import WorkerProcess

COLD_NS = 40_000_000
ANSWER_S = 0.03  # the queue reads its clock, then takes this long to answer


class SlowFleetQueue:
    """A queue whose clock is the machine's monotonic clock (as the fake queue's is) and whose
    answers arrive ANSWER_S after it read that clock; one start order, due COLD_NS after the
    first look."""

    def __init__(self) -> None:
        self.order_at: int | None = None
        self.reports: list[tuple[str, str]] = []

    def fleet(self, since: int = 0) -> dict[str, Any]:
        now = time.monotonic_ns()
        orders = []
        if self.order_at is None:
            self.order_at = now + COLD_NS
            orders = [{"seq": 0, "action": "start", "worker": "w-9", "at": self.order_at}]
        time.sleep(ANSWER_S)
        return {"orders": orders[since:], "workers": {}, "at_rest": False, "now_ns": now}

    def fleet_report(self, worker: str, what: str, rc: int | None = None) -> None:
        self.reports.append((worker, what))


def test_a_start_is_spawned_once_its_cold_start_is_over_on_the_queues_clock() -> None:
    queue = SlowFleetQueue()
    spawned_at: list[int] = []

    def spawn(worker: str) -> WorkerProcess:
        spawned_at.append(time.monotonic_ns())
        return cast(WorkerProcess, object())

    drive = FleetDrive(cast(BenchClient, queue), spawn, processes=[])
    began = time.monotonic()
    while not spawned_at and time.monotonic() - began < 2.0:
        drive.tick(began)
    assert queue.order_at is not None and spawned_at
    assert spawned_at[0] >= queue.order_at
    assert drive.started == ["w-9"] and queue.reports == [("w-9", "started")]
