"""Steady-state figures of an arrival profile's rep: per time window the arrival and
completion rates, the queue depth, each worker's busy slots and deliveries, buffered and held
jobs, and the queue wait, service and end-to-end latency; then a summary of the steady part
(after a warm-up) beside the ideal dispatcher's, and a saturation verdict, so a rate the fleet
cannot keep up with is named, never averaged into a latency.

Windows are WINDOW_S wide from the first intended submit; a window's latencies are those of
the jobs that ended in it. The warm-up is the profile's `warmup:D` when it sets one, else
detected by MSER-5 (White 1997: the truncation, among the first half of the jobs in arrival
order, that minimises the standard error of the mean end-to-end latency of the rest); the
steady part runs from there to the last intended submit. The queue is saturated when its depth's
trend (a least-squares line through the depth at each steady window's end, or the two ends when
the steady part spans fewer than three windows) rose across the steady part by more than
SATURATION_SHARE of the jobs that arrived in it: the offered rate exceeded what the fleet
completes, so the queue grows without bound and any latency only measures the backlog.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from jobbench.measure.events import EventScan
from jobbench.measure.held import Holds
from jobbench.measure.ideal_dispatch import ideal_ends

Floats = npt.NDArray[Any]  # an array of times or counts

WINDOW_S = 1.0
SATURATION_SHARE = 0.03
MSER_BATCH = 5
NS_PER_S = 1e9

Served = tuple[int, int, int]  # (intended submit, claim, done), ns


@dataclass(frozen=True)
class Capacity:
    """A fleet's capacity as the ideal dispatcher needs it: its slots (workers x slots) and the
    latency model's least wait."""

    workers: int
    slots: int
    job_s: float
    wake_s: float


def steady_figures(
    s: EventScan,
    *,
    held: Holds | None = None,
    capacity: Capacity | None = None,
    warmup_s: float | None = None,
) -> dict[str, Any] | None:
    """The rep's `steady` block from the queue's log; None when nothing was served. `held`
    adds the per-worker slot figures of each window, `capacity` the ideal."""
    served = sorted(s.completed())
    if not s.submitted or not served:
        return None
    arrivals = sorted(s.submitted.values())
    return _steady(
        served,
        arrivals,
        _depth_counter(s.queue),
        max(s.last, arrivals[-1]),
        warmup_s,
        capacity,
        held,
    )


def live_steady_figures(
    served: Sequence[Served],
    arrivals: Sequence[int],
    depth_samples: Sequence[tuple[int, int]],
    warmup_s: float | None = None,
) -> dict[str, Any] | None:
    """The `steady` block of a live rep: client-side times, the queue depth /health sampled
    (time, jobs in queue), no slots and no ideal (the platform's fleet is not ours to know)."""
    if not arrivals or not served:
        return None
    ordered = sorted(arrivals)
    samples = sorted(depth_samples)
    times = [t for t, _ in samples]

    def depth_at(t: int) -> int:
        k = bisect.bisect_right(times, t)
        return samples[k - 1][1] if k else 0

    last = max(ordered[-1], max(d for _, _, d in served))
    return _steady(sorted(served), ordered, depth_at, last, warmup_s, None, None)


def _steady(
    served: list[Served],
    arrivals: list[int],
    depth_at: Callable[[int], int],
    end: int,
    warmup_s: float | None,
    capacity: Capacity | None,
    held: Holds | None,
) -> dict[str, Any]:
    start, last_arrival = arrivals[0], arrivals[-1]
    window = int(WINDOW_S * NS_PER_S)
    bounds = [start + k * window for k in range(max(1, math.ceil((end - start) / window)) + 1)]
    windows = _windows(served, arrivals, depth_at, bounds)
    if held is not None:
        _slot_windows(windows, held, bounds)
    warm, how = _warmup(served, start, last_arrival, warmup_s)
    steady = [job for job in served if warm <= job[0] <= last_arrival]
    seconds = (last_arrival - warm) / NS_PER_S
    arrived = bisect.bisect_left(arrivals, last_arrival) - bisect.bisect_left(arrivals, warm)
    growth = depth_at(last_arrival) - depth_at(warm)
    trend = _depth_trend(bounds, depth_at, warm, last_arrival)
    figures: dict[str, Any] = {
        "window_s": WINDOW_S,
        "windows": windows,
        "warmup_s": round((warm - start) / NS_PER_S, 6),
        "warmup": how,
        "steady_s": round(seconds, 6),
        "arrival_rate_jps": round(arrived / seconds, 3) if seconds > 0 else None,
        "completion_rate_jps": _rate(sorted(d for _, _, d in served), warm, last_arrival),
        **_percentiles(_phases(steady)),
        "queue_growth": growth,
        "queue_trend_jps": None if trend is None else round(trend, 3),
        "saturated": arrived > 0 and _rise(trend, growth, seconds) > SATURATION_SHARE * arrived,
    }
    if held is not None:
        figures["workers"] = list(held.spans)
    if capacity is not None:
        figures.update(_ideal(arrivals, warm, last_arrival, capacity, figures["e2e_p99_s"]))
    return figures


def _windows(
    served: list[Served], arrivals: list[int], depth_at: Callable[[int], int], bounds: list[int]
) -> list[dict[str, Any]]:
    by_done = sorted(served, key=lambda job: job[2])
    done = [d for _, _, d in by_done]
    phases = _phases(by_done)
    windows = []
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        a, b = bisect.bisect_left(done, lo), bisect.bisect_left(done, hi)
        window: dict[str, Any] = {
            "start_s": round(k * WINDOW_S, 6),
            "arrivals": bisect.bisect_left(arrivals, hi) - bisect.bisect_left(arrivals, lo),
            "completions": b - a,
            "queue_depth": depth_at(hi),
        }
        window.update(_percentiles({name: v[a:b] for name, v in phases.items()}))
        windows.append(window)
    return windows


def _phases(jobs: Sequence[Served]) -> dict[str, Floats]:
    """Each job's queue wait (intended submit to claim), service and end-to-end, seconds."""
    times = np.array(jobs, dtype=np.int64).reshape(-1, 3)
    sub, claim, done = times[:, 0], times[:, 1], times[:, 2]
    return {
        "wait": (claim - sub) / NS_PER_S,
        "service": (done - claim) / NS_PER_S,
        "e2e": (done - sub) / NS_PER_S,
    }


def _percentiles(phases: dict[str, Floats]) -> dict[str, float | None]:
    """`wait_p50_s` ... `e2e_p99_s` of each phase (None where it has no job)."""
    return {f"{name}_p{q}_s": _pct(values, q) for name, values in phases.items() for q in (50, 99)}


def _depth_trend(
    bounds: list[int], depth_at: Callable[[int], int], warm: int, last_arrival: int
) -> float | None:
    """The queue depth's least-squares slope (jobs a second) through the ends of the windows
    inside the steady part; None when fewer than three are."""
    ends = [b for b in bounds[1:] if warm < b <= last_arrival]
    if len(ends) < 3:
        return None
    seconds = [(b - warm) / NS_PER_S for b in ends]
    slope, _ = np.polyfit(seconds, [depth_at(b) for b in ends], 1)
    return float(slope)


def _rise(trend: float | None, growth: int, seconds: float) -> float:
    """How much the queue grew across the steady part: its trend's, else end less start."""
    return growth if trend is None else trend * seconds


def _slot_windows(windows: list[dict[str, Any]], held: Holds, bounds: list[int]) -> None:
    """Per window, from each worker's slot starts (measure/held.py): its mean busy slots and
    the jobs delivered to it (the spread over time), the fleet's mean free slots and buffered
    jobs, and the jobs that left a buffer after waiting while a slot was free elsewhere."""
    edges = np.array(bounds, dtype=np.float64)
    width = WINDOW_S * NS_PER_S
    busy: list[Floats] = []
    delivered: list[Floats] = []
    buffered = np.zeros(len(windows))
    for worker, spans in held.spans.items():
        starts = held.starts[worker]
        ran = np.diff(_occupied(starts, [max(d, s) for (_, d), s in zip(spans, starts)], edges))
        waited = np.diff(_occupied([dl for dl, _ in spans], starts, edges))
        busy.append(ran / width)
        buffered += waited / width
        delivered.append(np.diff(np.searchsorted([dl for dl, _ in spans], edges, side="left")))
    held_left = np.diff(
        np.searchsorted(sorted(t for jobs in held.extra.values() for t, _ in jobs), edges)
    )
    for k, window in enumerate(windows):
        window["busy_slots"] = [round(float(b[k]), 3) for b in busy]
        window["free_slots"] = round(held.slots * len(busy) - sum(float(b[k]) for b in busy), 3)
        window["delivered"] = [int(d[k]) for d in delivered]
        window["buffered"] = round(float(buffered[k]), 3)
        window["held_jobs"] = int(held_left[k])


def _occupied(ins: Sequence[int], outs: Sequence[int], at: Floats) -> Floats:
    """The integral up to each `at` of the count of intervals [in, out) open: sum over ins
    before t of (t - in), less the same over outs (exact, for any overlap)."""
    origin = at[0]  # times near 0: the products below stay exact enough in float64
    rel = at - origin
    result = np.zeros(len(at))
    for times, sign in ((ins, 1.0), (outs, -1.0)):
        ordered = np.sort(np.asarray(times, dtype=np.float64) - origin)
        before = np.concatenate(([0.0], np.cumsum(ordered)))
        k = np.searchsorted(ordered, rel, side="left")
        result += sign * (k * rel - before[k])
    return result


def _warmup(
    served: list[Served], start: int, last_arrival: int, warmup_s: float | None
) -> tuple[int, str]:
    """(the steady part's start, "set" or "detected")."""
    if warmup_s is not None:
        return min(start + int(warmup_s * NS_PER_S), last_arrival), "set"
    e2e = np.array([d - sub for sub, _, d in served], dtype=np.float64)
    return served[mser_truncation(e2e)][0], "detected"


def mser_truncation(values: Floats, batch: int = MSER_BATCH) -> int:
    """MSER-5: the index to cut `values` (in time order) at, among the first half, where the
    rest's batch means have the least MSER statistic (their squared deviations / count^2)."""
    n = len(values) // batch
    if n < 4:
        return 0
    means = values[: n * batch].reshape(n, batch).mean(axis=1)
    tail_sum = np.cumsum(means[::-1])[::-1]
    tail_sq = np.cumsum((means**2)[::-1])[::-1]
    count = np.arange(n, 0, -1, dtype=np.float64)
    mser = (tail_sq - tail_sum**2 / count) / count**2
    half = n // 2 + 1
    # Ties (a flat series) go to the earliest cut: no warm-up is dropped that isn't there.
    cut = int(np.argmin(np.round(mser[:half], 15)))
    return cut * batch


def _ideal(
    arrivals: list[int],
    warm: int,
    last_arrival: int,
    capacity: Capacity,
    measured_p99: float | None,
) -> dict[str, Any]:
    """The perfect dispatcher's steady latency for the same arrivals, and the efficiency of the
    measured steady e2e p99 against it."""
    ends = ideal_ends(
        arrivals,
        capacity.workers * capacity.slots,
        int(capacity.job_s * NS_PER_S),
        int(capacity.wake_s * NS_PER_S),
    )
    e2e = [(e - a) / NS_PER_S for a, e in zip(arrivals, ends) if warm <= a <= last_arrival]
    ideal_p99 = _pct(e2e, 99)
    efficiency = None
    if ideal_p99 is not None and measured_p99:
        efficiency = round(ideal_p99 / measured_p99, 6)
    return {
        "ideal_e2e_p50_s": _pct(e2e, 50),
        "ideal_e2e_p99_s": ideal_p99,
        "efficiency": efficiency,
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


def _pct(values: Sequence[float] | Floats, q: float) -> float | None:
    return round(float(np.percentile(values, q)), 6) if len(values) else None
