"""The harness's own CPU over a rep: the queue's process, each worker's process group
(the SDK's heartbeat child included) and this driver process (its threads included), from
/proc (Linux; None elsewhere), as cores used on average between the rep's start and end; the
machine's other processes are what /proc/stat's busy time leaves over.

A rep in which the queue or the driver used nearly a whole core, or the machine had no CPU left
for it because of other work, measured the harness, not the worker: `saturation` names it, with
what to change, and the run keeps it as an anomaly (a gate sets such reps aside). A worker that
used nearly a core is the candidate's own behaviour, kept as a `worker_cpu` anomaly that counts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC = Path("/proc")
TICKS_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
SATURATED_CORE = 0.8  # a process this busy on average is CPU-bound: its own scheduling shows
SATURATED_MACHINE = 0.85  # the CPUs this busy on average: processes queued for a core
# Processes outside the run using this many cores while the machine was full disturbed it; less,
# and the run's own processes filled it.
BUSY_OTHERS_CORES = 0.5


@dataclass(frozen=True)
class CpuSample:
    at_s: float  # monotonic
    driver_s: float  # this process's user + system CPU seconds, every thread's
    queue_s: float | None  # the queue process's (None: not ours, --server)
    groups_s: dict[str, float]  # worker id: its process group's CPU seconds (live members)


def _proc_cpu(stat_line: str) -> tuple[int, float]:
    """(process group, user + system CPU seconds) from a /proc/<pid>/stat line: whole clock
    ticks (10 ms at the usual 100 Hz), dead threads included."""
    rest = stat_line[stat_line.rindex(")") + 2 :].split()  # the command may hold spaces
    pgrp = int(rest[2])
    return pgrp, (int(rest[11]) + int(rest[12])) / TICKS_S


def _process_clock(pid: int) -> int:
    """The clock id of a process's CPU-time clock (Linux's MAKE_PROCESS_CPUCLOCK(pid,
    CPUCLOCK_SCHED), what clock_getcpuclockid(3) returns; Python has no binding for it)."""
    return ((~pid) << 3) | 2


def _pid_cpu(pid: int, ticked: float) -> float:
    """One process's CPU seconds, every thread's, ended ones included, to the nanosecond from
    its CPU-time clock. A short rep's worker runs for a tick or two, so stat's whole 10 ms
    ticks (`ticked`) would make its CPU per job jump by half from one rep to the next (a gate
    once judged a comment-only change on that). The ticks stand where the clock cannot be
    read (the process ended meanwhile)."""
    try:
        return time.clock_gettime(_process_clock(pid))
    except OSError:
        return ticked


def group_cpu(pgids: Mapping[str, int]) -> dict[str, float]:
    """Each named process group's CPU seconds, its live members summed (one pass over /proc)."""
    wanted = {pgid: name for name, pgid in pgids.items()}
    out = dict.fromkeys(pgids, 0.0)
    for entry in PROC.iterdir() if wanted else ():
        if not entry.name.isdigit():
            continue
        try:
            pgrp, ticked = _proc_cpu((entry / "stat").read_text())
        except (OSError, ValueError, IndexError):  # gone meanwhile, or not a process entry
            continue
        if pgrp in wanted:
            out[wanted[pgrp]] += _pid_cpu(int(entry.name), ticked)
    return out


def process_cpu(pid: int) -> float | None:
    try:
        return _pid_cpu(pid, _proc_cpu((PROC / str(pid) / "stat").read_text())[1])
    except (OSError, ValueError, IndexError):
        return None


def sample(queue_pid: int | None, worker_cpu: Mapping[str, float]) -> CpuSample | None:
    """Now, with each worker's process group's CPU seconds as its pool read them (group_cpu
    here); None where /proc is not there (not Linux)."""
    if not PROC.is_dir():
        return None
    return CpuSample(
        at_s=time.monotonic(),
        driver_s=time.process_time(),
        queue_s=None if queue_pid is None else process_cpu(queue_pid),
        groups_s=dict(worker_cpu),
    )


def harness_cpu(
    start: CpuSample | None,
    end: CpuSample | None,
    machine_busy: float | None,
    cpus: int | None,
    nodes: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """The rep's `harness` block: cores each part used on average over the rep (a worker that
    started or stopped during it counts from its start or to its last sample), the machine's
    busy cores and what its other processes used. On a cluster (`nodes`: each worker's node)
    also the workers' cores summed per node: the machine's figures are the driver's only."""
    if start is None or end is None or end.at_s <= start.at_s:
        return None
    wall = end.at_s - start.at_s

    def cores(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round(max(b - a, 0.0) / wall, 3)

    workers = {
        worker: cores(start.groups_s.get(worker, 0.0), seconds)
        for worker, seconds in end.groups_s.items()
    }
    queue = cores(start.queue_s, end.queue_s)
    driver = cores(start.driver_s, end.driver_s)
    ours = sum(v for v in (queue, driver, *workers.values()) if v is not None)
    busy = None if machine_busy is None or not cpus else round(machine_busy * cpus, 3)
    by_node: dict[str, float] = {}
    for worker, node in (nodes or {}).items():
        by_node[node] = round(by_node.get(node, 0.0) + (workers.get(worker) or 0.0), 3)
    return {
        **({"node_worker_cores": dict(sorted(by_node.items()))} if by_node else {}),
        "wall_s": round(wall, 3),
        "queue_cores": queue,
        "driver_cores": driver,
        "worker_cores": workers,
        "others_cores": None if busy is None else round(max(busy - ours, 0.0), 3),
        "machine_busy_cores": busy,
        "cpus": cpus,
    }


def saturation(block: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The rep's CPU anomalies, each naming the part and what to change (none: an empty list).
    Two kinds, judged apart (results/behaviour.py):
    - `saturated`, the measurement was disturbed: the queue or the driver used nearly a core,
      or the machine was full while processes outside the run used a real share of it;
    - `worker_cpu`, the workers' own doing: a worker's process group used nearly a core, or
      the workers alone filled the machine. That is the candidate's behaviour, not noise."""
    if block is None:
        return []
    harness = {"the queue": block.get("queue_cores"), "the driver": block.get("driver_cores")}
    workers = {f"worker {w}": v for w, v in (block.get("worker_cores") or {}).items()}
    cpus, machine = block.get("cpus"), block.get("machine_busy_cores")
    share = machine / cpus if cpus and machine is not None else 0.0
    full = share >= SATURATED_MACHINE
    others = block.get("others_cores") or 0.0
    found = []
    said = _busy(harness)
    if full and others >= BUSY_OTHERS_CORES:
        said.append(
            f"the machine was {share:.0%} busy on {cpus} CPUs, "
            f"{others:.2f} cores of it outside the run"
        )
    if said:
        found.append({
            "kind": "saturated",
            "what": "; ".join(said),
            "fix": "fewer workers per core, --server on another machine, a quieter machine, "
            "or longer jobs (docs/performance.md, the harness's own cost)",
        })  # fmt: skip
    said = _busy(workers)
    if full and others < BUSY_OTHERS_CORES:
        said.append(f"the workers kept the machine {share:.0%} busy on {cpus} CPUs")
    if said:
        found.append({
            "kind": "worker_cpu",
            "what": "; ".join(said),
            "fix": "the workers' own CPU: a busy loop or a CPU-bound handler (or more workers "
            "than cores)",
        })  # fmt: skip
    return found


def _busy(parts: Mapping[str, float | None]) -> list[str]:
    return [
        f"{name} used {v:.2f} of a core"
        for name, v in parts.items()
        if v is not None and v >= SATURATED_CORE
    ]
