"""Steady-state figures of an arrival profile's rep (issue 16), from the one EventScan: per time
window the arrival and completion rates, the queue depth and the end-to-end latency; then a
summary of the steady part (after a warm-up) and a saturation verdict, so a rate the fleet
cannot keep up with is named, never averaged into a latency.

Windows are WINDOW_S wide from the first intended submit. The warm-up is the first
WARMUP_SHARE of the submission span (at least one window); the steady part runs from there to
the last intended submit. The queue is saturated when its depth grew across the steady part by
more than SATURATION_SHARE of the jobs that arrived in it (the offered rate exceeded what the
fleet completes: the queue grows without bound).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from jobbench.measure.events import EventScan

WINDOW_S = 1.0
WARMUP_SHARE = 0.1
SATURATION_SHARE = 0.1
NS_PER_S = 1e9


def steady_figures(s: EventScan) -> dict[str, Any] | None:
    """The rep's `steady` block; None when nothing was submitted or nothing was served."""
    served = list(s.served())  # (submit (intended), claim, done)
    if not s.submitted or not served:
        return None
    arrivals = sorted(s.submitted.values())
    start, last_arrival = arrivals[0], arrivals[-1]
    window = int(WINDOW_S * NS_PER_S)
    end = max(s.last, last_arrival)
    count = max(1, math.ceil((end - start) / window))
    by_done = sorted(served, key=lambda job: job[2])
    done = [d for _, _, d in by_done]
    e2e_by_done = np.array([(d - sub) / NS_PER_S for sub, _, d in by_done])
    depth_at = _depth_counter(s.queue)
    windows = []
    for k in range(count):
        lo, hi = start + k * window, start + (k + 1) * window
        e2e = e2e_by_done[bisect.bisect_left(done, lo) : bisect.bisect_left(done, hi)].tolist()
        windows.append(
            {
                "start_s": round(k * WINDOW_S, 6),
                "arrivals": bisect.bisect_left(arrivals, hi) - bisect.bisect_left(arrivals, lo),
                "completions": bisect.bisect_left(done, hi) - bisect.bisect_left(done, lo),
                "queue_depth": depth_at(hi),
                "e2e_p50_s": _pct(e2e, 50),
                "e2e_p99_s": _pct(e2e, 99),
            }
        )
    span = last_arrival - start
    warm = start + max(int(span * WARMUP_SHARE), min(window, span // 2))
    steady = [(sub, d) for sub, _, d in served if warm <= sub <= last_arrival]
    seconds = (last_arrival - warm) / NS_PER_S
    arrived = bisect.bisect_left(arrivals, last_arrival) - bisect.bisect_left(arrivals, warm)
    growth = depth_at(last_arrival) - depth_at(warm)
    saturated = arrived > 0 and growth > SATURATION_SHARE * arrived
    e2e = [(d - sub) / NS_PER_S for sub, d in steady]
    return {
        "window_s": WINDOW_S,
        "windows": windows,
        "warmup_s": round((warm - start) / NS_PER_S, 6),
        "steady_s": round(seconds, 6),
        "arrival_rate_jps": round(arrived / seconds, 3) if seconds > 0 else None,
        "completion_rate_jps": _rate(done, warm, last_arrival),
        "e2e_p50_s": _pct(e2e, 50),
        "e2e_p99_s": _pct(e2e, 99),
        "queue_growth": growth,
        "saturated": saturated,
    }


def _depth_counter(queue: list[tuple[int, int]]) -> Callable[[int], int]:
    """depth(t): jobs in the queue (submitted or requeued, not yet claimed) at time t."""
    ordered = sorted(queue)
    times = [t for t, _ in ordered]
    depth = np.cumsum([step for _, step in ordered]) if ordered else np.array([])

    def at(t: int) -> int:
        k = bisect.bisect_right(times, t)
        return int(depth[k - 1]) if k else 0

    return at


def _rate(times: list[int], lo: int, hi: int) -> float | None:
    seconds = (hi - lo) / NS_PER_S
    if seconds <= 0:
        return None
    return round((bisect.bisect_left(times, hi) - bisect.bisect_left(times, lo)) / seconds, 3)


def _pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 6) if values else None
