"""How busy the machine was during a rep: the all-CPU busy fraction from /proc/stat and the
1-minute load average, sampled at the rep's start and end (Linux; None elsewhere).

The figure covers every process on the machine, the harness's own workers and queue included:
it says how loaded the box was, not what disturbed the rep (procs/harness_cpu.py tells those apart).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuTimes:
    """Clock ticks of all CPUs since boot: `busy` (user, nice, system, irq, softirq, steal) of
    `total` (busy plus idle and iowait). Guest time is inside user already."""

    busy: int
    total: int


@dataclass(frozen=True)
class MachineSample:
    cpu: CpuTimes | None
    load1: float | None


def cpu_times(stat: Path = PROC_STAT) -> CpuTimes | None:
    """The first (all-CPU) line of /proc/stat; None where there is none (not Linux)."""
    try:
        with stat.open(encoding="ascii") as handle:
            fields = handle.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
    busy = user + nice + system + irq + softirq + steal
    return CpuTimes(busy=busy, total=busy + idle + iowait)


def load1() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average on this platform
        return None


def sample() -> MachineSample:
    return MachineSample(cpu_times(), load1())


def busy_fraction(start: CpuTimes | None, end: CpuTimes | None) -> float | None:
    """Busy ticks over all ticks between two samples, 0.0 to 1.0 (None: no ticks between)."""
    if start is None or end is None or end.total <= start.total:
        return None
    busy = (end.busy - start.busy) / (end.total - start.total)
    return round(min(max(busy, 0.0), 1.0), 3)


def machine_load(start: MachineSample, end: MachineSample) -> dict[str, Any] | None:
    """The rep's `machine` block (reports/README.md), or None where nothing could be read."""
    if start.cpu is None and start.load1 is None:
        return None
    return {
        "cpu_busy": busy_fraction(start.cpu, end.cpu),
        "load1_start": _rounded(start.load1),
        "load1_end": _rounded(end.load1),
        "cpus": os.cpu_count(),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
