"""Where the embedded queue and the workers run: the queue on a CPU of its own (Linux).

On a shared CPU a worker's burst of work (a batch's results, its next take) held the queue off
the CPU the kernel had woken it on, and a batch's answer waited for the worker: up to ~1 ms a
cycle, the largest part of the harness overhead on two cores (benchmarks/NOTES.md section 4).
With the queue alone on one CPU and the workers on the others, neither waits for the other.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CpuPlan:
    queue: frozenset[int]
    workers: frozenset[int]

    def to_json(self) -> dict[str, Any]:
        return {"queue": sorted(self.queue), "workers": sorted(self.workers)}


def plan_cpus() -> CpuPlan | None:
    """The last CPU this process may use for the queue, the rest for workers; None where
    that is impossible (no sched_setaffinity, or a single CPU)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return CpuPlan(queue=frozenset(cpus[-1:]), workers=frozenset(cpus[:-1]))


def pin(pid: int, cpus: frozenset[int]) -> None:
    """Restrict a process (and what it forks later) to `cpus`; a process already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.sched_setaffinity(pid, cpus)
