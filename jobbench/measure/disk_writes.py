"""The workers' own disk writes over a rep, per completed job (docs/metrics.md, "The workers'
disk writes"), and the `disk_writes` behaviour a rep shows when they wrote more than a page a
job (verdict/behaviour.py judges it like a stall).

Each worker's figure is its process group's `write_bytes` (procs/disk_writes.py) at the rep's
end less at its start: a worker started during the rep counts from its start, one that exited
is left out. Where no worker's figure could be read the rep has none (never 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KIB = 1024
DISK_KIND = "disk_writes"  # the anomaly's kind
# More than this a completed job is writing on every job. Measured on the default suite's
# burst (4 workers x 16 slots, 256 x 0.5 s jobs, 2 reps, 2026-12-07, docs/metrics.md): the real
# runpod 1.12.0 worker, whose log holds nothing per job, 0 bytes in both reps; the same SDK
# writing its in-progress jobs to a file and fsyncing it on every change
# (benchmarks/planted_defects.py `state-on-disk`), 7.72 and 7.75 KiB a job (two pages). One
# page rewritten a job is 4 KiB a job by itself: half of it leaves room on both sides, for a
# log line or two a job below and a single state write a job above.
THRESHOLD_KIB = 2.0


def writes_over(start: Mapping[str, int], end: Mapping[str, int]) -> dict[str, int] | None:
    """Each worker's bytes written between the two looks (a worker absent at the start: from
    its start); None where no worker could be read at the end."""
    if not end:
        return None
    return {w: max(written - start.get(w, 0), 0) for w, written in sorted(end.items())}


def write_kib_per_job(writes: Mapping[str, int] | None, completed: int) -> float | None:
    """Every worker's bytes written over the rep per completed job, in KiB; None where the
    writes were not read or no job completed."""
    if writes is None or not completed:
        return None
    return sum(writes.values()) / KIB / completed


def disk_anomalies(writes: Mapping[str, int] | None, completed: int) -> list[dict[str, Any]]:
    """The rep's `disk_writes` anomaly (none: an empty list): the workers wrote more than
    THRESHOLD_KIB a completed job. The candidate's own behaviour, not noise: the rep counts."""
    per_job = write_kib_per_job(writes, completed)
    if per_job is None or per_job <= THRESHOLD_KIB:
        return []
    return [{
        "kind": DISK_KIND,
        "what": f"the workers wrote {per_job:.1f} KiB to disk a completed job "
        f"(more than {THRESHOLD_KIB:g} KiB)",
        "fix": "the workers' own writes: state or files written on every job, or a log "
        "line per job grown long",
    }]  # fmt: skip
