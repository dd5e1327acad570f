"""Open-loop submission for an arrival profile (wrk2 and k6 are the anchors): a
thread of its own sends each wave of the load at its intended time, whatever the workers and
the queue do, and records how late each went out. A slow driver shows as lateness, never as
a lower offered load.

Each submission goes out on a pipelined connection (clients/pipelined_post.py): it is written
when due, never after an earlier one's answer, so a queue slow to answer delays no later
submission. Its jobs carry their intended time on the queue's own clock (`intended_ns`, from
the offset GET /_bench/clock gave before the rep, within half its round trip), so a queue slow
to read a submission hides none of that delay either: latencies run from the intended time."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from jobbench.clients.bench_client import BenchClient, burst_body
from jobbench.core.scenario.load import Wave
from jobbench.errors import RunFailed
from jobbench.measure.arrival_pacing import pacing_figures

NS_PER_S = 1_000_000_000
SWITCH_INTERVAL_S = 0.0002
PACER_NICE = -10
PACER_FIFO_PRIORITY = 10  # the lowest real-time band's, above every normal thread
HALT_LOOK_S = 0.05  # a wait for the next wave looks for stop() this often


class SubmitPacer(threading.Thread):
    """Sends `waves` (times from `begin(began)`, a time.monotonic() reading) on a connection of
    its own; `stop()` ends it early (the rep ended), the waves not sent are counted. Made
    before the rep begins: reading the queue's clock is not its first wave's lateness."""

    def __init__(self, client: BenchClient, waves: Sequence[Wave], inputs: list[Any]) -> None:
        super().__init__(name="jobbench-submit-pacer", daemon=True)
        own = client.twin()
        try:
            self.offset_ns, self.clock_error_ns = own.clock_offset_ns()
            self.poster = own.pipelined("/burst")
        finally:
            own.close()
        self.waves = list(waves)
        self.inputs = inputs
        self.began = 0.0
        self.lateness_s: list[float] = []  # per wave sent: sent - intended (its submission's)
        self.sent_jobs = 0
        self.requests = 0  # several overdue submissions go in one
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self._switch_interval = sys.getswitchinterval()
        self.priority = "normal"  # what _raise_priority got the thread

    def begin(self, began: float) -> None:
        # A due wave's thread waits for the GIL up to the switch interval (5 ms by default)
        # when another thread of this process is busy; a shorter one for the rep bounds that.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._switch_interval, SWITCH_INTERVAL_S))
        self.began = began
        self.start()

    def run(self) -> None:
        self.priority = _raise_priority()
        try:
            next_wave = 0
            while next_wave < len(self.waves):
                due = self.began + self.waves[next_wave].at_s
                while not self._halt.is_set() and time.monotonic() < due:
                    self.poster.wait_until(min(due, time.monotonic() + HALT_LOOK_S))
                if self._halt.is_set():
                    break
                # Every wave due by now goes in this one request: a driver that fell behind
                # (the machine did not run this thread in time) catches up at once, each job
                # marked with its own intended time.
                sent = time.monotonic()
                due_now = []
                while (
                    next_wave < len(self.waves) and self.began + self.waves[next_wave].at_s <= sent
                ):
                    due_now.append(self.waves[next_wave])
                    next_wave += 1
                self._send(due_now, sent)
        except BaseException as exc:  # the rep reads it: a failed submission ends the run
            self.error = exc
        finally:
            self.poster.close()
            if self.error is None and self.poster.error is not None:
                self.error = RunFailed(self.poster.error)

    def _send(self, waves: list[Wave], sent: float) -> None:
        jobs = sum(wave.jobs for wave in waves)
        began_ns = round(self.began * NS_PER_S) + self.offset_ns  # on the queue's clock
        intended = [began_ns + round(wave.at_s * NS_PER_S) for wave in waves]
        body = burst_body(jobs, self._inputs(jobs))
        body["intended_ns"] = (
            intended[0]
            if len(waves) == 1
            else [t for wave, t in zip(waves, intended, strict=True) for _ in range(wave.jobs)]
        )
        self.poster.post(body)
        self.requests += 1
        for wave in waves:
            self.lateness_s.append(max(sent - (self.began + wave.at_s), 0.0))
            self.sent_jobs += wave.jobs

    def _inputs(self, count: int) -> list[Any]:
        """The rep's inputs cycled across the whole rep, as a burst cycles them."""
        start, size = self.sent_jobs, len(self.inputs)
        if size == 1:
            return self.inputs
        return [self.inputs[(start + i) % size] for i in range(min(count, size))]

    def all_sent(self) -> bool:
        return (
            not self.is_alive() and self.error is None and len(self.lateness_s) == len(self.waves)
        )

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=35.0)
        sys.setswitchinterval(self._switch_interval)

    def figures(self, spec: str) -> dict[str, Any]:
        """The rep's `arrivals` block (results/model_result.py ArrivalPacing)."""
        figures = pacing_figures(
            spec,
            self.lateness_s,
            [wave.jobs for wave in self.waves],
            self.requests,
            sum(wave.jobs for wave in self.waves),
        )
        figures["clock_error_s"] = round(self.clock_error_ns / NS_PER_S, 6)
        figures["priority"] = self.priority
        return figures


def _raise_priority() -> str:
    """Ask the scheduler to run this thread the moment a wave is due: on a machine the queue
    and the workers keep busy, it otherwise waits its turn behind them (p99 2-3.4 ms late at
    500 jobs/s on 2 cores, 0.4-1.7 ms as a real-time thread: docs/load-profiles.md). This
    thread alone, and only where allowed (CAP_SYS_NICE, or an RLIMIT_RTPRIO): "fifo"
    (SCHED_FIFO; it sleeps between waves, and the kernel keeps 5 % of each CPU for the
    others), else "nice" (PACER_NICE), else "normal"."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(PACER_FIFO_PRIORITY))
        return "fifo"
    except (OSError, AttributeError):
        pass
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), PACER_NICE)
        return "nice"
    except (OSError, AttributeError):
        return "normal"
