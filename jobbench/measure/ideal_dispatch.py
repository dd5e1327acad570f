"""The ideal for any arrivals: what a perfect dispatcher on this fleet and latency
model would give the same jobs, so efficiency stays defined beyond the atomic burst.

The perfect dispatcher hands each job, in arrival order, to the slot that frees first, no
sooner than the wake latency after it arrived (the least the latency model lets a job reach a
worker); it runs for the job length. Every job has the same length, so the slot job k gets is
the one job k - capacity freed (first come, first served on identical servers), and its end is
exact: end_k = max(arrival_k + wake, end_{k - capacity}) + job. For one atomic burst this is
the burst's ideal (docs/latency-model.md): wake + ceil(burst / capacity) x job for the last job.
"""

from __future__ import annotations

from collections.abc import Sequence


def ideal_ends(arrivals: Sequence[int], capacity: int, job: int, wake: int) -> list[int]:
    """Each job's end under the perfect dispatcher, in the order of `arrivals` (sorted, in
    any one unit, as `job` and `wake` are)."""
    if capacity < 1:
        raise ValueError(f"capacity must be >= 1, got {capacity}")
    ends: list[int] = []
    for k, arrived in enumerate(arrivals):
        ready = arrived + wake
        if k >= capacity and (freed := ends[k - capacity]) > ready:
            ready = freed
        ends.append(ready + job)
    return ends
