"""Open-loop submission for an arrival profile (issue 16; wrk2 and k6 are the anchors): a
thread of its own sends each wave of the load at its intended time, whatever the workers and
the queue do, and records how late each went out. A slow driver shows as lateness, never as
a lower offered load."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from jobbench.clients.bench_client import BenchClient
from jobbench.core.load import Wave

LATE_S = 0.002  # a submission sent later than this after its intended time counts as late


class SubmitPacer(threading.Thread):
    """Sends `waves` (times from `began`, a time.monotonic() reading) through its own client;
    `stop()` ends it early (the rep ended), the waves not sent are counted."""

    def __init__(
        self, client: BenchClient, waves: Sequence[Wave], inputs: list[Any], began: float
    ) -> None:
        super().__init__(name="jobbench-submit-pacer", daemon=True)
        self.client = client.twin()
        self.waves = list(waves)
        self.inputs = inputs
        self.began = began
        self.lateness_s: list[float] = []  # per wave sent: sent - intended (its submission's)
        self.late_jobs = 0
        self.sent_jobs = 0
        self.requests = 0  # several overdue submissions go in one
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            next_wave = 0
            while next_wave < len(self.waves):
                due = self.began + self.waves[next_wave].at_s
                if (wait := due - time.monotonic()) > 0 and self._halt.wait(wait):
                    return
                if self._halt.is_set():
                    return
                # Every wave due by now goes in this one request: a driver that fell behind
                # (its last request was slow) catches up at once, each job marked as late as
                # it is, instead of falling further behind one request at a time.
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
            self.client.close()

    def _send(self, waves: list[Wave], sent: float) -> None:
        lates = [max(sent - (self.began + wave.at_s), 0.0) for wave in waves]
        jobs = sum(wave.jobs for wave in waves)
        per_job = [late for wave, late in zip(waves, lates, strict=True) for _ in range(wave.jobs)]
        self.client.burst(jobs, self._inputs(jobs), late_s=per_job if len(waves) > 1 else lates[0])
        self.requests += 1
        for wave, late in zip(waves, lates, strict=True):
            self.lateness_s.append(late)
            self.sent_jobs += wave.jobs
            if late > LATE_S:
                self.late_jobs += wave.jobs

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

    def figures(self, spec: str) -> dict[str, Any]:
        """The rep's `arrivals` block (results/model_result.py ArrivalPacing)."""
        late = np.array(self.lateness_s) if self.lateness_s else None
        total = sum(wave.jobs for wave in self.waves)

        def pick(q: float) -> float | None:
            return None if late is None else round(float(np.percentile(late, q)), 6)

        return {
            "spec": spec,
            "submissions": len(self.lateness_s),
            "requests": self.requests,
            "jobs": total,
            "lateness_p50_s": pick(50),
            "lateness_p99_s": pick(99),
            "lateness_max_s": None if late is None else round(float(late.max()), 6),
            "late_jobs": self.late_jobs,
            "late_bound_s": LATE_S,
            "not_sent": total - self.sent_jobs,
        }
